"""GzipRequestMiddleware: inflates request bodies sent with `Content-Encoding: gzip` (Starlette has no such
middleware; its GZipMiddleware only compresses responses)."""

import zlib
from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The most inflated bytes handed to the app in one message.
CHUNK_BYTES = 64 * 1024


class GzipRequestMiddleware:
    """Inflates as the body streams in, a piece at a time, never more than `max_size` bytes (or the size
    `path_max_sizes` gives the request's path): a bigger inflated body is 413, however small it was on the wire
    (FastAPI's own max_body_size counts the compressed bytes)."""

    def __init__(self, app: ASGIApp, max_size: int, path_max_sizes: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_size = max_size
        self.path_max_sizes = dict(path_max_sizes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_gzip(scope):
            await self.app(scope, receive, send)
            return
        max_size = self.path_max_sizes.get(scope["path"], self.max_size)
        # The app sees a plain body: no Content-Encoding, and no Content-Length of the compressed bytes.
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-encoding", b"content-length")]
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        size = 0
        # Compressed bytes already received but not inflated yet, and whether more are to come.
        tail = b""
        more_on_the_wire = True

        async def inflating_receive() -> Message:
            nonlocal size, tail, more_on_the_wire
            if not tail:
                message = await receive()
                if message["type"] != "http.request":
                    return message
                tail = message.get("body", b"")
                more_on_the_wire = message.get("more_body", False)
            try:
                # At most CHUNK_BYTES at a time (a small chunk on the wire may inflate to megabytes); one byte over
                # the room left is enough to know the body is too big.
                body = inflater.decompress(tail, min(CHUNK_BYTES, max_size - size + 1))
            except zlib.error as e:
                raise HTTPException(400, f"the gzip body does not inflate: {e}") from e
            tail = inflater.unconsumed_tail
            size += len(body)
            if size > max_size:
                raise HTTPException(413, f"the inflated body is over {max_size} bytes")
            more_body = more_on_the_wire or bool(tail)
            if not more_body and not inflater.eof:
                raise HTTPException(400, "the gzip body is truncated")
            return {"type": "http.request", "body": body, "more_body": more_body}

        await self.app({**scope, "headers": headers}, inflating_receive, send)


def is_gzip(scope: Scope) -> bool:
    return any(k == b"content-encoding" and v.strip().lower() == b"gzip" for k, v in scope["headers"])
