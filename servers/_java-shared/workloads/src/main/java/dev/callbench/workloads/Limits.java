package dev.callbench.workloads;

/** The documented limits of the contract (contract/README.md); crates/workloads/src/limits.rs. */
public final class Limits {
    private Limits() {}

    /** Largest accepted request body (REST) or message (gRPC): 4 MiB. */
    public static final int MAX_BODY_BYTES = 4 * 1024 * 1024;

    /** Users are 1..USER_COUNT. */
    public static final long USER_COUNT = 10_000;
    public static final int MAX_PASSWORD_BYTES = 1024;

    public static final int MAX_STRING_BYTES = 256;
    public static final int MIN_CAR_YEAR = 1886;
    public static final int MAX_CAR_YEAR = 2100;
    public static final int MAX_MILEAGE = 10_000_000;

    public static final int MIN_NTIMES = 1;
    public static final int MAX_NTIMES = 1000;
    public static final int MAX_BOARD_CELLS = 10_000;
    public static final long MAX_COORDINATE = 1_000_000_000;
    /** A step fails once the population grows past this, which bounds its cost. */
    public static final int MAX_POPULATION = 50_000;

    /** The most records one download may ask for. */
    public static final int MAX_DOWNLOAD = 100_000;
    /** A streamed (NDJSON) upload as a whole; each of its lines is bounded by {@link #MAX_BODY_BYTES}. */
    public static final int MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
}
