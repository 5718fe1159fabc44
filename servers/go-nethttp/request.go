package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"callbench/goshared/workloads"
)

// decodeJSON reads the request body into v as the contract wants it: media
// type application/json (else 415), at most 4 MiB on the wire and once
// inflated (else 413), valid UTF-8, and JSON of the right types (else 400);
// unknown fields are ignored. On bad input it answers itself and returns false.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if !isMediaType(r.Header.Get("Content-Type"), "application/json") {
		writeError(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
		return false
	}
	body, fail := readBody(w, r)
	if fail != nil {
		writeError(w, r, fail.status, fail.code, fail.message)
		return false
	}
	if err := parseJSON(body, v); err != nil {
		badRequest(w, r, err.Error())
		return false
	}
	return true
}

// parseJSON decodes one JSON value strictly: valid UTF-8 (encoding/json would
// quietly turn invalid bytes into U+FFFD), the right types, nothing after the
// value (Unmarshal, not a Decoder, refuses it).
func parseJSON(data []byte, v any) error {
	if !utf8.Valid(data) {
		return errors.New("the body is not valid UTF-8")
	}
	return json.Unmarshal(data, v)
}

// isMediaType: the Content-Type's media type is want, parameters such as charset allowed.
func isMediaType(contentType, want string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == want
}

type requestError struct {
	status        int
	code, message string
}

var (
	errTooLarge = &requestError{http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", "the body is over 4 MiB (4194304 bytes)"}
	errEncoding = &requestError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding must be gzip or identity"}
	errGzip     = &requestError{http.StatusBadRequest, "INVALID_ARGUMENT", "the body is not valid gzip"}
	errRead     = &requestError{http.StatusBadRequest, "INVALID_ARGUMENT", "cannot read the body"}
)

// readBody reads the whole body, inflating it if it is gzip, within the limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *requestError) {
	if r.ContentLength > workloads.MaxBodyBytes {
		return nil, errTooLarge // refused before reading: net/http then closes the connection
	}
	limited := http.MaxBytesReader(w, r.Body, workloads.MaxBodyBytes)
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		body = make([]byte, r.ContentLength) // one allocation of the right size
		_, err = io.ReadFull(limited, body)
	} else {
		body, err = io.ReadAll(limited) // chunked, or HTTP/2 without content-length
	}
	if err != nil {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return nil, errTooLarge
		}
		return nil, errRead
	}
	switch encoding := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); encoding {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		return gunzip(body)
	default:
		return nil, errEncoding
	}
}

var gzipReaders sync.Pool // of *gzip.Reader

// gunzip inflates a gzip body; more than 4 MiB inflated is refused like a body over 4 MiB.
func gunzip(data []byte) ([]byte, *requestError) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(data))
	} else {
		err = zr.Reset(bytes.NewReader(data))
	}
	if err != nil {
		return nil, errGzip
	}
	defer gzipReaders.Put(zr)
	out, err := io.ReadAll(io.LimitReader(zr, workloads.MaxBodyBytes+1))
	switch {
	case err != nil:
		return nil, errGzip
	case len(out) > workloads.MaxBodyBytes:
		return nil, errTooLarge
	}
	return out, nil
}
