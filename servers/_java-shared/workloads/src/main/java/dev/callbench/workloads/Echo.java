package dev.callbench.workloads;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Objects;

/** The echo workload for payload sweeps: records of mixed field types (crates/workloads/src/echo.rs). */
public final class Echo {
    private Echo() {}

    /** Names as in the proto, which is also their REST JSON spelling. */
    public enum Kind {
        KIND_UNSPECIFIED, KIND_SMALL, KIND_MEDIUM, KIND_LARGE;

        private static final Kind[] BY_NUMBER = values();

        /** The protobuf enum number. */
        public int number() {
            return ordinal();
        }

        /** null for a number the enum does not have. */
        public static Kind fromNumber(int n) {
            return n >= 0 && n < BY_NUMBER.length ? BY_NUMBER[n] : null;
        }
    }

    public record Location(String city, double latitude, double longitude) {
        public Location {
            city = Defaults.orEmpty(city);
        }
    }

    /** A missing location is null. */
    public record Record(long id, String name, double score, boolean active, Kind kind, Location location,
            List<String> tags, long[] samples) {
        public Record {
            name = Defaults.orEmpty(name);
            kind = kind == null ? Kind.KIND_UNSPECIFIED : kind;
            tags = Defaults.orEmpty(tags);
            samples = Defaults.orEmpty(samples);
        }
    }

    /** REST body and response of {@code POST /echo}; {@code records} is required in REST. */
    public record Message(@JsonProperty(required = true) List<Record> records) {
        public Message {
            Objects.requireNonNull(records, "records is required");
        }
    }

    /** Checks the message and gives it back unchanged. */
    public static Message echo(Message message) {
        List<Record> records = message.records();
        for (int i = 0; i < records.size(); i++) {
            Record r = records.get(i);
            Location l = r.location();
            checkNumbers(i, r.score(), l == null ? 0 : l.latitude(), l == null ? 0 : l.longitude());
        }
        return message;
    }

    /**
     * Record i's checks as a protobuf message gives them: its kind number known, its numbers finite (an absent
     * location has coordinates 0). A REST record's kind is known once it parsed.
     */
    public static void checkRecord(int i, int kindNumber, double score, double latitude, double longitude) {
        if (Kind.fromNumber(kindNumber) == null) {
            throw WorkloadException.invalid("records[" + i + "]: unknown kind " + kindNumber);
        }
        checkNumbers(i, score, latitude, longitude);
    }

    /** Numbers must be finite: records[i]'s score and its location's coordinates. */
    public static void checkNumbers(int i, double score, double latitude, double longitude) {
        if (!Double.isFinite(score) || !Double.isFinite(latitude) || !Double.isFinite(longitude)) {
            throw WorkloadException.invalid("records[" + i + "]: numbers must be finite");
        }
    }
}
