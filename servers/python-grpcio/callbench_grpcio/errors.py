"""A workload's error as the call's status (the names of ErrorKind are grpc.StatusCode's)."""

import functools
from typing import NoReturn

import grpc

from callbench_shared.errors import WorkloadError


async def abort(context: grpc.aio.ServicerContext, error: WorkloadError) -> NoReturn:
    """Ends the call with the error's status; the answers already sent stay sent."""
    await context.abort(grpc.StatusCode[error.kind.name], error.message)


def workload_errors(method):
    """A unary method's workload error ends the call with its status."""

    @functools.wraps(method)
    async def call(self, request, context: grpc.aio.ServicerContext):
        try:
            return method(self, request)
        except WorkloadError as e:
            await abort(context, e)

    return call
