"""GzipRequestMiddleware: inflates request bodies sent with `Content-Encoding: gzip` (Starlette has no such
middleware; its GZipMiddleware only compresses responses)."""

import zlib

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class GzipRequestMiddleware:
    """Inflates as the body streams in, never more than `max_size` bytes: a bigger inflated body is 413, however
    small it was on the wire (FastAPI's own max_body_size counts the compressed bytes)."""

    def __init__(self, app: ASGIApp, max_size: int) -> None:
        self.app = app
        self.max_size = max_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_gzip(scope):
            await self.app(scope, receive, send)
            return
        # The app sees a plain body: no Content-Encoding, and no Content-Length of the compressed bytes.
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-encoding", b"content-length")]
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        size = 0

        async def inflating_receive() -> Message:
            nonlocal size
            message = await receive()
            if message["type"] != "http.request":
                return message
            try:
                # One byte over the room left is enough to know the body is too big.
                body = inflater.decompress(message.get("body", b""), self.max_size - size + 1)
            except zlib.error as e:
                raise HTTPException(400, f"the gzip body does not inflate: {e}") from e
            size += len(body)
            if size > self.max_size:
                raise HTTPException(413, f"the inflated body is over {self.max_size} bytes")
            if not message.get("more_body", False) and not inflater.eof:
                raise HTTPException(400, "the gzip body is truncated")
            return {**message, "body": body}

        await self.app({**scope, "headers": headers}, inflating_receive, send)


def is_gzip(scope: Scope) -> bool:
    return any(k == b"content-encoding" and v.strip().lower() == b"gzip" for k, v in scope["headers"])
