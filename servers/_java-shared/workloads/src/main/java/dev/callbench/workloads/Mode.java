package dev.callbench.workloads;

/** How a server finds users. */
public enum Mode {
    /** users.json parsed once at start into a map (the default). */
    PRELOADED,
    /** users.json read, parsed and searched linearly on every call: what seed 000 measured. */
    PER_REQUEST;

    /** The flag's spelling: {@code preloaded} or {@code per-request}. */
    public static Mode parse(String text) {
        return switch (text) {
            case "preloaded" -> PRELOADED;
            case "per-request" -> PER_REQUEST;
            default -> throw new IllegalArgumentException(
                    "unknown mode '" + text + "' (expected preloaded or per-request)");
        };
    }
}
