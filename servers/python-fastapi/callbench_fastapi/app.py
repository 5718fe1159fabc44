"""The FastAPI application: routes, error handlers, body limit and gzip both ways."""

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from callbench_shared.auth import Mode, UserStore
from callbench_shared.limits import MAX_BODY_BYTES, MAX_UPLOAD_BYTES

from . import errors, records, routes
from .gzip_request import GzipRequestMiddleware
from .unread_body import DrainBody


def create_app(users_path: str, mode: Mode) -> DrainBody:
    """The app factory uvicorn calls in every worker process."""
    app = FastAPI(
        # No /docs, /redoc or /openapi.json: every path outside the contract is 404.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        # /students/ is an unknown route (404), not a redirect to /students.
        redirect_slashes=False,
        # Bodies over 4 MiB are 413, counted as they stream in (uvicorn has no limit of its own).
        max_body_size=MAX_BODY_BYTES,
    )
    app.state.users = UserStore(users_path, mode)
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(records.router)
    # The last added middleware is the outermost: responses are compressed after everything else ran.
    app.add_middleware(
        GzipRequestMiddleware, max_size=MAX_BODY_BYTES, path_max_sizes={records.UPLOAD_PATH: MAX_UPLOAD_BYTES}
    )
    # Compress every reply when the client accepts gzip (Starlette's default skips replies under 500 bytes),
    # at zlib's default level 6 (as grpc core and tonic compress) rather than Starlette's 9.
    app.add_middleware(GZipMiddleware, minimum_size=0, compresslevel=6)
    # Outside FastAPI: its 413 on max_body_size is sent past every middleware of its own.
    return DrainBody(app)
