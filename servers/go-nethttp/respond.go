package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"callbench/goshared/workloads"
)

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	buf := buffers.Get().(*bytes.Buffer)
	defer putBuffer(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false) // JSON for programs, not for embedding in HTML
	if err := enc.Encode(v); err != nil {
		writeError(w, r, http.StatusInternalServerError, "INTERNAL", err.Error())
		return
	}
	writeBody(w, r, status, buf.Bytes())
}

// putBuffer keeps buffers of ordinary size for the next call; a 4 MiB echo's is left to the GC.
func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buffers.Put(buf)
	}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers `{"error": {"code", "message"}}` with the status.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	writeJSON(w, r, status, errorBody{errorDetail{code, message}})
}

func badRequest(w http.ResponseWriter, r *http.Request, message string) {
	writeError(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", message)
}

// writeWorkloadError answers a workload's error with its kind's status.
func writeWorkloadError(w http.ResponseWriter, r *http.Request, err error) {
	kind := workloads.KindOf(err)
	writeError(w, r, kind.HTTPStatus(), kind.Name(), workloads.MessageOf(err))
}

// writeBody answers a JSON body, gzip-compressed when the client accepts gzip.
func writeBody(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		zbuf := buffers.Get().(*bytes.Buffer)
		defer putBuffer(zbuf)
		zbuf.Reset()
		compress(zbuf, body)
		body = zbuf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write is a client gone: nothing to tell it
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// compress writes body gzipped (default level) to buf; writers are pooled,
// as each holds about a megabyte of compressor state.
func compress(buf *bytes.Buffer, body []byte) {
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(buf)
	_, _ = zw.Write(body) // writes to memory do not fail
	_ = zw.Close()
}

// acceptsGzip reads Accept-Encoding: gzip (or *) with a q-value above 0.
func acceptsGzip(header string) bool {
	star := false
	for header != "" {
		var item string
		item, header, _ = strings.Cut(header, ",")
		name, params, _ := strings.Cut(item, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		accepted := true
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
			accepted = err == nil && v > 0
		}
		if name == "gzip" {
			return accepted
		}
		star = accepted
	}
	return star
}
