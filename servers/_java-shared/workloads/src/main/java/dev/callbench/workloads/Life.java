package dev.callbench.workloads;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** Seed 004's Game of Life (B3/S23) on an unbounded plane of live cells (crates/workloads/src/life.rs). */
public final class Life {
    private Life() {}

    /** A live cell; in JSON the pair {@code [x, y]}, as in the seed. */
    @JsonSerialize(using = CellJson.Writer.class)
    @JsonDeserialize(using = CellJson.Reader.class)
    public record Cell(long x, long y) {}

    /** REST body of {@code POST /life/step}; both fields are required. */
    public record StepRequest(@JsonProperty(required = true) Integer ntimes,
            @JsonProperty(required = true) List<Cell> board) {
        public StepRequest {
            Objects.requireNonNull(ntimes, "ntimes is required");
            Objects.requireNonNull(board, "board is required");
        }
    }

    /** Live cells sorted by x then y, without duplicates. */
    public record Board(List<Cell> board) {}

    /** The acorn: 7 cells that take 5206 generations to settle. */
    public static Board setup() {
        return new Board(List.of(new Cell(0, 2), new Cell(1, 0), new Cell(1, 2), new Cell(3, 1),
                new Cell(4, 2), new Cell(5, 2), new Cell(6, 2)));
    }

    /** Advances {@code board} by {@code ntimes} generations (uint32, so compared unsigned), within the limits. */
    public static Board step(List<Cell> board, int ntimes) {
        if (Integer.compareUnsigned(ntimes, Limits.MIN_NTIMES) < 0
                || Integer.compareUnsigned(ntimes, Limits.MAX_NTIMES) > 0) {
            throw WorkloadException.invalid("ntimes must be in " + Limits.MIN_NTIMES + ".." + Limits.MAX_NTIMES);
        }
        if (board.size() > Limits.MAX_BOARD_CELLS) {
            throw WorkloadException.invalid("board is limited to " + Limits.MAX_BOARD_CELLS + " cells");
        }
        CellCounts live = new CellCounts(board.size());
        for (Cell c : board) {
            if (!withinLimit(c.x()) || !withinLimit(c.y())) {
                throw WorkloadException.invalid("coordinates are limited to +-" + Limits.MAX_COORDINATE);
            }
            live.add(pack(c.x(), c.y()));
        }
        for (int i = 0; i < ntimes; i++) {
            live = nextGeneration(live);
            if (live.size() > Limits.MAX_POPULATION) {
                throw WorkloadException.invalid("population grew past " + Limits.MAX_POPULATION + " cells");
            }
        }
        long[] sorted = new long[live.size()];
        int n = 0;
        for (int slot = 0; slot < live.capacity(); slot++) {
            if (live.count(slot) != 0) {
                sorted[n++] = live.key(slot);
            }
        }
        Arrays.sort(sorted); // packed order is x, then y
        List<Cell> cells = new ArrayList<>(sorted.length);
        for (long p : sorted) {
            cells.add(new Cell(p >> 32, (p & 0xFFFF_FFFFL) - Y_OFFSET));
        }
        return new Board(cells);
    }

    private static boolean withinLimit(long coordinate) {
        return coordinate >= -Limits.MAX_COORDINATE && coordinate <= Limits.MAX_COORDINATE;
    }

    private static CellCounts nextGeneration(CellCounts live) {
        CellCounts neighbours = new CellCounts(live.size() * 4);
        for (int slot = 0; slot < live.capacity(); slot++) {
            if (live.count(slot) == 0) {
                continue;
            }
            long p = live.key(slot);
            for (long dx = -1; dx <= 1; dx++) {
                for (long dy = -1; dy <= 1; dy++) {
                    if (dx != 0 || dy != 0) {
                        neighbours.increment(p + (dx << 32) + dy);
                    }
                }
            }
        }
        CellCounts next = new CellCounts(live.size());
        for (int slot = 0; slot < neighbours.capacity(); slot++) {
            int n = neighbours.count(slot);
            if (n == 3 || (n == 2 && live.contains(neighbours.key(slot)))) {
                next.add(neighbours.key(slot));
            }
        }
        return next;
    }

    /*
     * A cell packed into one long: x in the high 32 bits (signed), y + 2^31 in the low 32 bits. Coordinates
     * start within +-1e9 and move at most 1 per generation (1000 at most), so both stay within +-2^31; a
     * neighbour is then p + (dx << 32) + dy, and the longs sort as the cells do (by x, then y).
     */
    private static final long Y_OFFSET = 1L << 31;

    private static long pack(long x, long y) {
        return (x << 32) + (y + Y_OFFSET);
    }
}
