package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"callbench/goshared/workloads"
)

// The records routes, REST's counterparts of callbench.v1.Records: an upload
// in one body or streamed as NDJSON, both answered with the summary, and a
// download streamed as NDJSON. Records are checked as echo checks them.

// batchBody is the body of POST /records/batch: records is required.
type batchBody struct {
	Records []workloads.Record `json:"records"`
}

func (h *handlers) recordsBatch(w http.ResponseWriter, r *http.Request) {
	var body batchBody
	if !decodeJSON(w, r, &body) {
		return
	}
	// encoding/json leaves a slice nil only when the field is absent or null ([] is empty, not nil).
	if body.Records == nil {
		badRequest(w, r, "records is required")
		return
	}
	var summary workloads.UploadSummary
	for i := range body.Records {
		if err := summary.AddRecord(&body.Records[i]); err != nil {
			writeWorkloadError(w, r, err)
			return
		}
	}
	writeJSON(w, r, http.StatusOK, &summary)
}

// recordsUpload reads an NDJSON upload a line at a time as it arrives
// (chunked or not), counting each record; the first bad line is the answer.
// Over HTTP/1.1, net/http sends an answer given before the end of the body
// once it has read up to 256 KiB more of it (then it closes the connection),
// so that a client that writes its whole body before reading cannot deadlock;
// ResponseController.EnableFullDuplex would lift that, but net/http then
// panics on the unread body (golang/go#68560).
func (h *handlers) recordsUpload(w http.ResponseWriter, r *http.Request) {
	lines, fail := openNDJSON(w, r)
	if fail != nil {
		writeError(w, r, fail.status, fail.code, fail.message)
		return
	}
	defer lines.close()
	var summary workloads.UploadSummary
	for n := 1; ; n++ {
		line := lines.next()
		if line == nil {
			break
		}
		var record workloads.Record
		if err := parseRecord(line, &record); err != nil {
			badRequest(w, r, fmt.Sprintf("line %d: %v", n, err))
			return
		}
		if err := summary.AddRecord(&record); err != nil {
			writeWorkloadError(w, r, err)
			return
		}
	}
	if fail := lines.err(); fail != nil {
		writeError(w, r, fail.status, fail.code, fail.message)
		return
	}
	writeJSON(w, r, http.StatusOK, &summary)
}

// parseRecord reads one line as a record: a JSON object, strictly typed.
func parseRecord(line []byte, record *workloads.Record) error {
	if trimmed := bytes.TrimLeft(line, " \t\r"); len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("a record must be a JSON object")
	}
	return parseJSON(line, record)
}

// recordsDownload streams `count` records, one JSON line each, made as they are sent.
func (h *handlers) recordsDownload(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	if !query.Has("count") {
		badRequest(w, r, "count is required")
		return
	}
	count, err := strconv.ParseInt(query.Get("count"), 10, 64)
	if err != nil {
		badRequest(w, r, "count must be a decimal integer")
		return
	}
	if err := workloads.CheckDownload(count); err != nil {
		writeWorkloadError(w, r, err)
		return
	}
	stream := startNDJSON(w, r)
	defer stream.finish()
	if r.Method == http.MethodHead {
		return // the headers alone
	}
	for i := range int(count) {
		record := workloads.Downloaded(i)
		if stream.write(&record) != nil {
			return // the client went away
		}
	}
}
