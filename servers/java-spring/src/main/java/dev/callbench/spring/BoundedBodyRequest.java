package dev.callbench.spring;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.Enumeration;
import java.util.zip.GZIPInputStream;
import org.springframework.http.HttpHeaders;

/**
 * A request whose body stream stops at its limit (4 MiB, or 64 MiB for a streamed upload), inflated first if it
 * came gzip-encoded, with the same limit on the inflated bytes.
 */
final class BoundedBodyRequest extends HttpServletRequestWrapper {
    private final boolean gzip;
    private final long limit;
    private ServletInputStream body;

    BoundedBodyRequest(HttpServletRequest request, boolean gzip, long limit) {
        super(request);
        this.gzip = gzip;
        this.limit = limit;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
        if (body == null) {
            ServletInputStream raw = super.getInputStream();
            InputStream in = new BoundedInputStream(raw, limit, "the body");
            if (gzip) {
                in = new BoundedInputStream(new GZIPInputStream(in, 8192), limit, "the inflated body");
            }
            body = new Stream(in, raw);
        }
        return body;
    }

    // Once inflated, the body has no known length and no encoding.

    @Override
    public int getContentLength() {
        return gzip ? -1 : super.getContentLength();
    }

    @Override
    public long getContentLengthLong() {
        return gzip ? -1 : super.getContentLengthLong();
    }

    @Override
    public String getHeader(String name) {
        return gzip && hidden(name) ? null : super.getHeader(name);
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
        return gzip && hidden(name) ? Collections.emptyEnumeration() : super.getHeaders(name);
    }

    @Override
    public Enumeration<String> getHeaderNames() {
        if (!gzip) {
            return super.getHeaderNames();
        }
        return Collections.enumeration(Collections.list(super.getHeaderNames()).stream()
                .filter(name -> !hidden(name)).toList());
    }

    private static boolean hidden(String name) {
        return HttpHeaders.CONTENT_ENCODING.equalsIgnoreCase(name) || HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name);
    }

    /** The servlet face of the bounded stream (blocking reads only, as Spring MVC's message converters do). */
    private static final class Stream extends ServletInputStream {
        private final InputStream in;
        private final ServletInputStream raw;
        private boolean finished;

        Stream(InputStream in, ServletInputStream raw) {
            this.in = in;
            this.raw = raw;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            finished = b < 0;
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = in.read(buffer, offset, length);
            finished = n < 0;
            return n;
        }

        @Override
        public boolean isFinished() {
            return finished;
        }

        @Override
        public boolean isReady() {
            return raw.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            throw new UnsupportedOperationException("blocking reads only");
        }
    }
}
