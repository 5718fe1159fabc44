"""One error type for every workload, with its REST status and gRPC code."""

from enum import Enum


class ErrorKind(Enum):
    """The gRPC status name (also `error.code` in REST bodies), the HTTP status and the gRPC code number."""

    INVALID_ARGUMENT = (400, 3)
    NOT_FOUND = (404, 5)
    RESOURCE_EXHAUSTED = (413, 8)
    # e.g. the users file cannot be read in per-request mode
    INTERNAL = (500, 13)

    def __init__(self, http_status: int, grpc_code: int) -> None:
        self.http_status = http_status
        self.grpc_code = grpc_code


class WorkloadError(Exception):
    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @classmethod
    def invalid(cls, message: str) -> "WorkloadError":
        return cls(ErrorKind.INVALID_ARGUMENT, message)

    @classmethod
    def not_found(cls, message: str) -> "WorkloadError":
        return cls(ErrorKind.NOT_FOUND, message)

    @classmethod
    def too_large(cls, message: str) -> "WorkloadError":
        return cls(ErrorKind.RESOURCE_EXHAUSTED, message)

    @classmethod
    def internal(cls, message: str) -> "WorkloadError":
        return cls(ErrorKind.INTERNAL, message)

    def __str__(self) -> str:
        return f"{self.kind.name}: {self.message}"


def error_body(code: str, message: str) -> dict:
    """The REST error body every server sends: `{"error": {"code", "message"}}`."""
    return {"error": {"code": code, "message": message}}
