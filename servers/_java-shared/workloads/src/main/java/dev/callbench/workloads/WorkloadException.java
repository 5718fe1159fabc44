package dev.callbench.workloads;

/** A workload's refusal: its kind says the REST status and the gRPC code. */
public final class WorkloadException extends RuntimeException {
    private final ErrorKind kind;

    public WorkloadException(ErrorKind kind, String message) {
        // No stack trace: these are answers to bad input, thrown often under the flood.
        super(message, null, false, false);
        this.kind = kind;
    }

    public static WorkloadException invalid(String message) {
        return new WorkloadException(ErrorKind.INVALID_ARGUMENT, message);
    }

    public static WorkloadException notFound(String message) {
        return new WorkloadException(ErrorKind.NOT_FOUND, message);
    }

    public static WorkloadException internal(String message) {
        return new WorkloadException(ErrorKind.INTERNAL, message);
    }

    public ErrorKind kind() {
        return kind;
    }
}
