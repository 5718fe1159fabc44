"""JsonRoute: FastAPI routes whose request body must be `application/json`, parsed as strictly as the contract asks."""

from collections.abc import Callable, Coroutine
from typing import Any

import pydantic_core
from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute


class StrictJsonRequest(Request):
    """Parses JSON with pydantic-core instead of the json module: RFC 8259 only (no NaN or Infinity literals, no
    lone surrogate escapes such as "\\ud800", which Python strings could hold but UTF-8 cannot)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            # A ValueError here is FastAPI's "There was an error parsing the body": 400.
            self._json = pydantic_core.from_json(await self.body(), allow_inf_nan=False)
        return self._json


class JsonRoute(APIRoute):
    """FastAPI reads a body without a JSON content type as bytes and fails validation (400); the contract wants
    415 for any media type but application/json (parameters such as charset allowed), a missing one included."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def json_handler(request: Request) -> Response:
            if not is_json(request.headers.get("content-type")):
                raise HTTPException(415, "Content-Type must be application/json")
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return json_handler


def is_json(content_type: str | None) -> bool:
    return content_type is not None and content_type.partition(";")[0].strip().lower() == "application/json"
