package dev.callbench.spring;

import java.io.IOException;
import java.io.InputStream;

/**
 * The lines of an NDJSON upload, read from its stream as it arrives (never whole): each line at most
 * {@code maxLine} bytes without its {@code \n} (one more is a {@link BodyTooLargeException}), the last one
 * possibly without {@code \n}, blank lines skipped. A line's bytes stay valid until the next {@link #next}.
 */
final class NdjsonLines {
    private static final int FIRST_BUFFER = 64 * 1024;

    private final InputStream in;
    private final int maxLine;
    private byte[] buffer = new byte[FIRST_BUFFER];
    private int start; // the unread bytes are buffer[start, end)
    private int end;
    private int scanned; // buffer[start, scanned) holds no newline
    private boolean eof;
    private int number; // lines seen so far, blank ones included
    private int lineStart;
    private int lineLength;

    NdjsonLines(InputStream in, int maxLine) {
        this.in = in;
        this.maxLine = maxLine;
    }

    /** Moves to the next line that is not blank; false at the end of the upload. */
    boolean next() throws IOException {
        while (true) {
            int newline = indexOfNewline();
            if (newline >= 0) {
                if (take(newline - start, newline + 1)) {
                    return true;
                }
                continue;
            }
            if (end - start > maxLine) {
                throw new BodyTooLargeException("line " + (number + 1) + " is larger than " + maxLine + " bytes");
            }
            if (eof) {
                return start < end && take(end - start, end);
            }
            fill();
        }
    }

    /** Where the current line starts in {@link #buffer()}. */
    int offset() {
        return lineStart;
    }

    int length() {
        return lineLength;
    }

    byte[] buffer() {
        return buffer;
    }

    /** The current line's number, from 1. */
    int number() {
        return number;
    }

    /** Takes {@code length} bytes from {@code start} as the next line, the unread part starting at {@code next}. */
    private boolean take(int length, int next) throws BodyTooLargeException {
        number++;
        if (length > maxLine) {
            throw new BodyTooLargeException("line " + number + " is larger than " + maxLine + " bytes");
        }
        lineStart = start;
        lineLength = length;
        start = next;
        scanned = next;
        return !blank();
    }

    private boolean blank() {
        for (int i = lineStart; i < lineStart + lineLength; i++) {
            byte b = buffer[i];
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    private int indexOfNewline() {
        for (int i = scanned; i < end; i++) {
            if (buffer[i] == '\n') {
                return i;
            }
        }
        scanned = end;
        return -1;
    }

    /** Reads more of the upload: the unread bytes moved to the front, the buffer grown up to one longest line. */
    private void fill() throws IOException {
        if (start > 0) {
            System.arraycopy(buffer, start, buffer, 0, end - start);
            end -= start;
            scanned -= start;
            start = 0;
        }
        if (end == buffer.length) {
            // A line of maxLine bytes and its newline fit; the check in next() refuses anything longer.
            byte[] grown = new byte[(int) Math.min((long) buffer.length * 2, maxLine + 2L)];
            System.arraycopy(buffer, 0, grown, 0, end);
            buffer = grown;
        }
        int n = in.read(buffer, end, buffer.length - end);
        if (n < 0) {
            eof = true;
        } else {
            end += n;
        }
    }
}
