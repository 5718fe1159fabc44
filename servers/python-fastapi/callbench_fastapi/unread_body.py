"""DrainBody: a reply to a large request body that the app did not read waits until the client has sent it."""

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from callbench_shared.limits import MAX_BODY_BYTES

# Bodies up to this size are already in uvicorn's buffer (its read high-water mark): it discards what the app
# did not read, and nothing more is needed.
LARGE_BODY = 64 * 1024
# The most that is read and discarded to keep a connection; past it the connection is closed.
DRAIN_BUDGET = 2 * MAX_BODY_BYTES


class DrainBody:
    """The app answers some requests without reading their body: 413 on a Content-Length over the limit, or an
    early 404/405/415. uvicorn then sends the reply at once and discards the rest of the body as it arrives, but a
    client still sending may not see that early reply (hyper's client then waits forever to reuse the connection),
    and closing the connection instead makes the kernel reset it, losing the reply. So the rest of the body is read
    and discarded first, up to DRAIN_BUDGET bytes; a bigger body gets its reply with `Connection: close`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = body_length(scope)
        if scope["type"] != "http" or (length is not None and length <= LARGE_BODY):
            await self.app(scope, receive, send)
            return
        body_read = False

        async def tracking_receive() -> Message:
            nonlocal body_read
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_read = True
            return message

        async def drain() -> bool:
            """Reads the rest of the body; False if it is over the budget (or the client left)."""
            budget = DRAIN_BUDGET if length is None or length <= DRAIN_BUDGET else 0
            while budget > 0:
                message = await receive()
                if message["type"] != "http.request":
                    return False
                if not message.get("more_body", False):
                    return True
                budget -= len(message.get("body", b""))
            return False

        async def draining_send(message: Message) -> None:
            nonlocal body_read
            if message["type"] == "http.response.start" and not body_read:
                body_read = True
                if not await drain():
                    message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            await send(message)

        await self.app(scope, tracking_receive, draining_send)


def body_length(scope: Scope) -> int | None:
    """The Content-Length; None when the body's length is unknown (chunked), 0 when there is no body."""
    chunked = False
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
        if name == b"transfer-encoding":
            chunked = True
    return None if chunked else 0
