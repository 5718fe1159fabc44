"""The contract's error responses: a status and `{"error": {"code", "message"}}` (FastAPI's own are
`{"detail": ...}`, and 422 for validation errors where the contract wants 400)."""

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from callbench_shared.errors import WorkloadError, error_body

# HTTP statuses FastAPI and Starlette raise themselves, with the code their error body carries.
CODES = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "RESOURCE_EXHAUSTED",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


def error_response(status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    # 405 keeps Starlette's Allow header.
    return error_response(exc.status_code, CODES.get(exc.status_code, "UNKNOWN"), str(exc.detail), exc.headers)


async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    # Bad JSON, a wrong type, a missing field or a path id that is not an integer: all 400.
    errors = exc.errors()
    first = errors[0] if errors else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    return error_response(400, "INVALID_ARGUMENT", f"{where}: {first.get('msg', 'invalid request')}")


async def workload_error(request: Request, exc: WorkloadError) -> JSONResponse:
    return error_response(exc.kind.http_status, exc.kind.name, exc.message)


def install(app: FastAPI) -> None:
    # Starlette calls each handler with its class's exceptions only; its signature says any Exception.
    app.add_exception_handler(HTTPException, http_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(WorkloadError, workload_error)  # type: ignore[arg-type]
