package dev.callbench.workloads;

/**
 * Packed cells (longs) with a small count each, in an open-addressing table: Life's live set and its
 * neighbour counts. A {@code HashMap<Long, Integer>} would box every key; the step does millions of these.
 */
final class CellCounts {
    private long[] keys;
    private byte[] counts; // 0: an empty slot
    private int size;
    private int shift; // 64 - log2(capacity)

    CellCounts(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2) - 1) << 1;
        allocate(capacity);
    }

    private void allocate(int capacity) {
        keys = new long[capacity];
        counts = new byte[capacity];
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
    }

    int size() {
        return size;
    }

    /** Slots are 0..capacity()-1; a slot holds a cell when {@link #count} is not 0. */
    int capacity() {
        return keys.length;
    }

    long key(int slot) {
        return keys[slot];
    }

    int count(int slot) {
        return counts[slot];
    }

    /** Adds one to the cell's count (a new cell starts at 1). */
    void increment(long key) {
        int slot = find(key);
        if (counts[slot] != 0) {
            counts[slot]++;
            return;
        }
        keys[slot] = key;
        counts[slot] = 1;
        if (++size * 2 > keys.length) {
            grow();
        }
    }

    /** Adds the cell once (a set). */
    void add(long key) {
        if (!contains(key)) {
            increment(key);
        }
    }

    boolean contains(long key) {
        return counts[find(key)] != 0;
    }

    /** The cell's slot, or the empty slot where it would go (linear probing, Fibonacci hashing). */
    private int find(long key) {
        int mask = keys.length - 1;
        int slot = (int) ((key * 0x9E37_79B9_7F4A_7C15L) >>> shift);
        while (counts[slot] != 0 && keys[slot] != key) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private void grow() {
        long[] oldKeys = keys;
        byte[] oldCounts = counts;
        allocate(keys.length * 2);
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldCounts[i] != 0) {
                int slot = find(oldKeys[i]);
                keys[slot] = oldKeys[i];
                counts[slot] = oldCounts[i];
            }
        }
    }
}
