package dev.callbench.workloads;

import java.util.List;

/** proto3 defaults for fields a JSON body left out: "" and []. */
final class Defaults {
    private Defaults() {}

    static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    static <T> List<T> orEmpty(List<T> list) {
        return list == null ? List.of() : list;
    }

    static long[] orEmpty(long[] values) {
        return values == null ? new long[0] : values;
    }
}
