package dev.callbench.spring;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Reads at most {@code limit} bytes; one more is a {@link BodyTooLargeException}. */
final class BoundedInputStream extends FilterInputStream {
    private final long limit;
    private final String what;
    private long count;

    BoundedInputStream(InputStream in, long limit, String what) {
        super(in);
        this.limit = limit;
        this.what = what;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            counted(1);
        }
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        int n = super.read(buffer, offset, length);
        if (n > 0) {
            counted(n);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = super.skip(n);
        counted(skipped);
        return skipped;
    }

    @Override
    public boolean markSupported() {
        return false;
    }

    private void counted(long n) throws IOException {
        count += n;
        if (count > limit) {
            throw new BodyTooLargeException(what + " is larger than " + limit + " bytes");
        }
    }
}
