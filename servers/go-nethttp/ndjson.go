package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"callbench/goshared/workloads"
)

// NDJSON both ways, for the records routes: an upload read line by line as
// it streams in (never whole), and a download written record by record.

var (
	errLineTooLarge   = &requestError{http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", "a line is over 4 MiB (4194304 bytes)"}
	errUploadTooLarge = &requestError{http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", "the upload is over 64 MiB (67108864 bytes)"}
	errNDJSONType     = &requestError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/x-ndjson"}
)

// ndjsonLines reads the lines of an NDJSON upload (Content-Type
// application/x-ndjson, parameters allowed), inflating a gzip one as it
// reads: each line at most 4 MiB, the whole at most 64 MiB on the wire and
// once inflated.
type ndjsonLines struct {
	scanner *bufio.Scanner
	source  *failedRead
	zr      *gzip.Reader // nil unless the upload is gzip
}

// openNDJSON checks the upload's headers and starts reading it.
func openNDJSON(w http.ResponseWriter, r *http.Request) (*ndjsonLines, *requestError) {
	if !isMediaType(r.Header.Get("Content-Type"), "application/x-ndjson") {
		return nil, errNDJSONType
	}
	if r.ContentLength > workloads.MaxUploadBytes {
		return nil, errUploadTooLarge // refused before reading: net/http then closes the connection
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, workloads.MaxUploadBytes)
	lines := &ndjsonLines{}
	switch encoding := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); encoding {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(body)
		} else {
			err = zr.Reset(body)
		}
		lines.zr = zr
		if err != nil {
			return nil, lines.readError(err)
		}
		body = &inflatedLimit{r: zr, left: workloads.MaxUploadBytes}
	default:
		return nil, errEncoding
	}
	lines.source = &failedRead{r: body}
	lines.scanner = bufio.NewScanner(lines.source)
	// A line of exactly 4 MiB and its newline fit; one byte more is bufio.ErrTooLong.
	lines.scanner.Buffer(make([]byte, 0, 64<<10), workloads.MaxBodyBytes+1)
	return lines, nil
}

// next is the next line that is not blank; nil at the end of the upload or
// on an error, which err then tells.
func (l *ndjsonLines) next() []byte {
	for l.scanner.Scan() {
		// A Scanner hands over what it holds as a last line when its reader
		// fails: a line cut off by a limit or a broken body is not a line.
		if l.source.err != nil {
			return nil
		}
		if line := l.scanner.Bytes(); len(bytes.TrimSpace(line)) > 0 {
			return line
		}
	}
	return nil
}

// err is why reading stopped: nil at the end of the upload.
func (l *ndjsonLines) err() *requestError {
	if l.source.err != nil {
		return l.readError(l.source.err)
	}
	if err := l.scanner.Err(); err != nil { // a line too long
		return l.readError(err)
	}
	return nil
}

// failedRead remembers its reader's first error other than io.EOF.
type failedRead struct {
	r   io.Reader
	err error
}

func (f *failedRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// close returns a gzip reader to the pool.
func (l *ndjsonLines) close() {
	if l.zr != nil {
		gzipReaders.Put(l.zr)
		l.zr = nil
	}
}

// readError is the answer to an error of the upload's reading: a limit (413),
// bad gzip, or a body that broke off (400).
func (l *ndjsonLines) readError(err error) *requestError {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return errLineTooLarge
	case errors.As(err, &tooLarge), errors.Is(err, errInflatedTooLarge):
		return errUploadTooLarge
	case l.zr != nil:
		return errGzip
	}
	return errRead
}

var errInflatedTooLarge = errors.New("the inflated upload is over its limit")

// inflatedLimit fails once more than `left` bytes were read.
type inflatedLimit struct {
	r    io.Reader
	left int64
}

func (l *inflatedLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		return 0, errInflatedTooLarge
	}
	return n, err
}

// ndjsonWriter writes an NDJSON answer as it goes: one JSON line per value,
// sent in chunks of streamChunk bytes (gzip when the client accepts it), so a
// download is never built whole.
type ndjsonWriter struct {
	buf *bufio.Writer
	zw  *gzip.Writer // nil unless gzip
	enc *json.Encoder
}

// streamChunk is how much of a streamed answer is gathered before it is sent:
// larger than net/http's own 2 KiB chunks, for fewer chunks and writes.
const streamChunk = 32 << 10

var chunkBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, streamChunk) }}

// startNDJSON sends the headers of a 200 NDJSON answer and returns the
// writer of its lines. Transfer-Encoding: chunked keeps net/http from giving
// an answer that fits its buffer a Content-Length: on HTTP/1.1 every download
// is chunked, on HTTP/1.0 net/http closes the connection after it instead,
// and its HTTP/2 side leaves the header out.
func startNDJSON(w http.ResponseWriter, r *http.Request) *ndjsonWriter {
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Vary", "Accept-Encoding")
	h.Set("Transfer-Encoding", "chunked")
	var out io.Writer = w
	s := &ndjsonWriter{}
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		s.zw = gzipWriters.Get().(*gzip.Writer)
		s.zw.Reset(w)
		out = s.zw
	}
	w.WriteHeader(http.StatusOK)
	s.buf = chunkBuffers.Get().(*bufio.Writer)
	s.buf.Reset(out)
	s.enc = json.NewEncoder(s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

// write sends one line; an error is a client gone.
func (s *ndjsonWriter) write(v any) error { return s.enc.Encode(v) }

// finish sends what is left and returns the buffers to their pools.
func (s *ndjsonWriter) finish() {
	_ = s.buf.Flush() // a failed write is a client gone: nothing to tell it
	s.buf.Reset(nil)
	chunkBuffers.Put(s.buf)
	if s.zw != nil {
		_ = s.zw.Close()
		s.zw.Reset(nil)
		gzipWriters.Put(s.zw)
	}
}
