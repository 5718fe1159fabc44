package dev.callbench.workloads;

/** What went wrong, with its REST status and gRPC code (crates/workloads/src/error.rs). */
public enum ErrorKind {
    INVALID_ARGUMENT(400, 3),
    NOT_FOUND(404, 5),
    RESOURCE_EXHAUSTED(413, 8),
    /** e.g. the users file cannot be read in per-request mode. */
    INTERNAL(500, 13);

    private final int httpStatus;
    private final int grpcCode;

    ErrorKind(int httpStatus, int grpcCode) {
        this.httpStatus = httpStatus;
        this.grpcCode = grpcCode;
    }

    public int httpStatus() {
        return httpStatus;
    }

    /** The numeric gRPC status code. */
    public int grpcCode() {
        return grpcCode;
    }
}
