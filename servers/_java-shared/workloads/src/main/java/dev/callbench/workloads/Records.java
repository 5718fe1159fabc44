package dev.callbench.workloads;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Objects;

/**
 * The records workload, for the streaming calls (crates/workloads/src/records.rs): an upload answered once with
 * the summary of its records, and a download of {@code count} records made by the contract's rule. Records are
 * echo's and are checked as echo checks them.
 */
public final class Records {
    private Records() {}

    /** The answer to an upload; its REST JSON names are the components' (lowerCamelCase). */
    public record UploadSummary(long count, long activeCount, long firstId, long lastId, long sampleCount) {}

    /** REST body of {@code POST /records/batch}; {@code records} is required. */
    public record Batch(@JsonProperty(required = true) List<Echo.Record> records) {
        public Batch {
            Objects.requireNonNull(records, "records is required");
        }
    }

    /** An upload's summary so far, one record at a time; a refused record is not counted. */
    public static final class Upload {
        private long count;
        private long activeCount;
        private long firstId;
        private long lastId;
        private long sampleCount;

        /**
         * Counts the next record, given by its fields, after echo's checks (its index is the count so far):
         * the gRPC server calls it with its protobuf record's fields.
         */
        public void add(long id, boolean active, int samples, int kindNumber, double score, double latitude,
                double longitude) {
            Echo.checkRecord((int) Math.min(count, Integer.MAX_VALUE), kindNumber, score, latitude, longitude);
            if (count == 0) {
                firstId = id;
            }
            count++;
            if (active) {
                activeCount++;
            }
            lastId = id;
            sampleCount += samples;
        }

        /** {@link #add} for a record in its REST shape. */
        public void add(Echo.Record r) {
            Echo.Location l = r.location();
            add(r.id(), r.active(), r.samples().length, r.kind().number(), r.score(),
                    l == null ? 0 : l.latitude(), l == null ? 0 : l.longitude());
        }

        public UploadSummary summary() {
            return new UploadSummary(count, activeCount, firstId, lastId, sampleCount);
        }
    }

    /** The summary of a batch. */
    public static UploadSummary batch(Batch batch) {
        Upload upload = new Upload();
        for (Echo.Record r : batch.records()) {
            upload.add(r);
        }
        return upload.summary();
    }

    /** Checks a download's count (0..{@link Limits#MAX_DOWNLOAD}) and returns it. */
    public static int checkDownload(long count) {
        if (count < 0 || count > Limits.MAX_DOWNLOAD) {
            throw WorkloadException.invalid("count must be in 0.." + Limits.MAX_DOWNLOAD + ", got " + count);
        }
        return (int) count;
    }

    private static final Echo.Kind[] KINDS = {Echo.Kind.KIND_SMALL, Echo.Kind.KIND_MEDIUM, Echo.Kind.KIND_LARGE};
    private static final Echo.Location SPRINGFIELD = new Echo.Location("Springfield", 39.78, -89.65);
    private static final List<String> TAGS = List.of("alpha", "beta");

    /**
     * Record i (from 0) of a download: id i + 1, name "record-" and i as six digits or more, score i / 2,
     * active when i is even, kind 1 + i % 3, Springfield, tags alpha and beta, samples i, i + 1, i + 2.
     */
    public static Echo.Record downloaded(int i) {
        long n = i;
        return new Echo.Record(n + 1, downloadName(i), i / 2.0, i % 2 == 0, KINDS[i % 3], SPRINGFIELD, TAGS,
                new long[] {n, n + 1, n + 2});
    }

    /** "record-" and i zero-padded to six digits (more when i needs them). */
    static String downloadName(int i) {
        String digits = Integer.toString(i);
        return digits.length() >= 6 ? "record-" + digits : "record-" + "000000".substring(digits.length()) + digits;
    }
}
