package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"callbench/goshared/vectors"
	"callbench/goshared/workloads"
)

// Tests of the records routes: the batch, the NDJSON upload (with and without
// a length, gzip, the limits, read as it streams in) and the NDJSON download.

func post(t *testing.T, url, contentType string, body io.Reader, length int64, headers ...string) (int, []byte) {
	t.Helper()
	request, _ := http.NewRequest("POST", url, body)
	request.ContentLength = length // -1: chunked
	request.Header.Set("Content-Type", contentType)
	for i := 0; i < len(headers); i += 2 {
		request.Header.Set(headers[i], headers[i+1])
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	data, _ := io.ReadAll(response.Body)
	return response.StatusCode, data
}

func summaryOf(t *testing.T, data []byte) workloads.UploadSummary {
	t.Helper()
	var s workloads.UploadSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return s
}

// ndjson is n downloaded records as NDJSON lines.
func ndjson(n int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range n {
		_ = enc.Encode(workloads.Downloaded(i))
	}
	return buf.Bytes()
}

func TestRecordsBatchSummarizesTheRecords(t *testing.T) {
	url := start(t, workloads.Preloaded).URL + "/records/batch"
	status, data := post(t, url, "application/json", strings.NewReader(`{"records": [{"id": 3, "active": true, "samples": [1, 2]}, {"id": 8, "kind": "KIND_LARGE"}]}`), -1)
	if want := (workloads.UploadSummary{Count: 2, ActiveCount: 1, FirstID: 3, LastID: 8, SampleCount: 2}); status != 200 || summaryOf(t, data) != want {
		t.Errorf("%d %s", status, data)
	}
	status, data = post(t, url, "application/json", strings.NewReader(`{"records": []}`), -1)
	if status != 200 || summaryOf(t, data) != (workloads.UploadSummary{}) {
		t.Errorf("no records: %d %s", status, data)
	}
	cases := []struct {
		contentType, body string
		status            int
	}{
		{"application/json", `{}`, 400},
		{"application/json", `{"records": null}`, 400},
		{"application/json", `{"records": [{"kind": "KIND_HUGE"}]}`, 400},
		{"application/json", `{"records": [{"id": "1"}]}`, 400},
		{"application/x-ndjson", `{"records": []}`, 415},
		{"application/json", `{"records": [{"name": "` + strings.Repeat("a", workloads.MaxBodyBytes) + `"}]}`, 413},
	}
	for _, c := range cases {
		if status, data := post(t, url, c.contentType, strings.NewReader(c.body), int64(len(c.body))); status != c.status {
			t.Errorf("%s %.60s: %d %s, expected %d", c.contentType, c.body, status, data, c.status)
		}
	}
}

func TestRecordsUploadReadsNDJSON(t *testing.T) {
	url := start(t, workloads.Preloaded).URL + "/records/upload"
	for _, n := range []int{0, 1, 1000} {
		body := ndjson(n)
		want := workloads.UploadSummary{Count: int64(n), ActiveCount: int64(n+1) / 2, SampleCount: 3 * int64(n)}
		if n > 0 {
			want.FirstID, want.LastID = 1, int64(n)
		}
		for _, length := range []int64{int64(len(body)), -1} {
			status, data := post(t, url, "application/x-ndjson", bytes.NewReader(body), length)
			if status != 200 || summaryOf(t, data) != want {
				t.Errorf("%d records, length %d: %d %s", n, length, status, data)
			}
		}
	}
	// Blank lines are skipped, the last line may lack its newline, parameters are allowed, gzip is inflated.
	body := "\n" + string(ndjson(2)) + "\n  \n" + strings.TrimSuffix(string(ndjson(1)), "\n")
	status, data := post(t, url, "application/x-ndjson; charset=utf-8", strings.NewReader(body), -1)
	if status != 200 || summaryOf(t, data).Count != 3 {
		t.Errorf("blank lines: %d %s", status, data)
	}
	status, data = post(t, url, "application/x-ndjson", bytes.NewReader(gzipped(ndjson(50))), -1, "Content-Encoding", "gzip")
	if status != 200 || summaryOf(t, data).Count != 50 {
		t.Errorf("gzip: %d %s", status, data)
	}

	line := `{"name":"` + strings.Repeat("a", workloads.MaxBodyBytes-len(`{"name":""}`)) + `"}`
	shorter := line[:len(line)-3] + `"}` // with its newline, 16 of them are 64 MiB
	cases := []struct {
		name, contentType, encoding string
		body                        io.Reader
		status                      int
	}{
		{"json", "application/json", "", bytes.NewReader(ndjson(1)), 415},
		{"no type", "", "", bytes.NewReader(ndjson(1)), 415},
		{"kind name", "application/x-ndjson", "", strings.NewReader(`{"id":1}` + "\n" + `{"kind":"KIND_HUGE"}`), 400},
		{"kind number", "application/x-ndjson", "", strings.NewReader(`{"kind":9}`), 400},
		{"null", "application/x-ndjson", "", strings.NewReader("null\n"), 400},
		{"not JSON", "application/x-ndjson", "", strings.NewReader("{\"id\":\n1}\n"), 400},
		{"two values", "application/x-ndjson", "", strings.NewReader(`{"id":1} {"id":2}`), 400},
		{"not UTF-8", "application/x-ndjson", "", strings.NewReader("{\"name\":\"\xff\"}"), 400},
		{"not gzip", "application/x-ndjson", "gzip", bytes.NewReader(ndjson(1)), 400},
		{"brotli", "application/x-ndjson", "br", bytes.NewReader(ndjson(1)), 415},
		{"a line of 4 MiB", "application/x-ndjson", "", strings.NewReader(line + "\n" + line), 200},
		{"a line over 4 MiB", "application/x-ndjson", "", strings.NewReader(line + " \n"), 413},
		{"64 MiB", "application/x-ndjson", "", repeatLines(shorter, 16, ""), 200},
		{"64 MiB and a byte", "application/x-ndjson", "", repeatLines(shorter, 16, " "), 413},
		{"over 64 MiB", "application/x-ndjson", "", repeatLines(line, 16, "\n"), 413},
		{"over 64 MiB inflated", "application/x-ndjson", "gzip", gzipReader(repeatLines(line, 16, "\n")), 413},
	}
	for _, c := range cases {
		var headers []string
		if c.encoding != "" {
			headers = []string{"Content-Encoding", c.encoding}
		}
		if status, data := post(t, url, c.contentType, c.body, -1, headers...); status != c.status {
			t.Errorf("%s: %d %.200s, expected %d", c.name, status, data, c.status)
		}
	}
}

// repeatLines is n copies of line, each ending in a newline, then extra.
func repeatLines(line string, n int, extra string) io.Reader {
	readers := []io.Reader{}
	for range n {
		readers = append(readers, strings.NewReader(line+"\n"))
	}
	return io.MultiReader(append(readers, strings.NewReader(extra))...)
}

func gzipReader(r io.Reader) io.Reader {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = io.Copy(zw, r)
	_ = zw.Close()
	return &buf
}

// The upload is read as it streams in: a bad first line is answered while the
// client still holds the end of its body back (net/http reads up to 256 KiB
// past what the handler read before it answers, then closes the connection).
func TestRecordsUploadAnswersBeforeTheEnd(t *testing.T) {
	url := start(t, workloads.Preloaded).URL + "/records/upload"
	body, writer := io.Pipe()
	defer writer.Close()
	go func() {
		_, _ = writer.Write([]byte("{\"kind\":\"KIND_HUGE\"}\n"))
		_, _ = writer.Write(bytes.Repeat([]byte(" \n"), 150<<10)) // 300 KiB of blank lines
	}()
	answered := make(chan int, 1)
	go func() {
		request, _ := http.NewRequest("POST", url, body)
		request.Header.Set("Content-Type", "application/x-ndjson")
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			answered <- 0
			return
		}
		response.Body.Close()
		answered <- response.StatusCode
	}()
	select {
	case status := <-answered:
		if status != 400 {
			t.Errorf("status %d", status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer before the body ended")
	}
}

func TestRecordsDownloadWritesNDJSON(t *testing.T) {
	base := start(t, workloads.Preloaded).URL
	for _, count := range []int{0, 3, workloads.MaxDownload} {
		response, err := http.Get(fmt.Sprintf("%s/records?count=%d", base, count))
		if err != nil {
			t.Fatal(err)
		}
		if response.StatusCode != 200 || response.Header.Get("Content-Type") != "application/x-ndjson" ||
			len(response.TransferEncoding) != 1 || response.TransferEncoding[0] != "chunked" {
			t.Errorf("count %d: %d %v %v", count, response.StatusCode, response.Header, response.TransferEncoding)
		}
		lines := bufio.NewScanner(response.Body)
		n := 0
		for ; lines.Scan(); n++ {
			if n < 3 || n == count-1 {
				want, _ := json.Marshal(workloads.Downloaded(n))
				if !sameMessage(t, lines.Bytes(), want) {
					t.Errorf("line %d: %s, expected %s", n, lines.Bytes(), want)
				}
			}
		}
		response.Body.Close()
		if n != count {
			t.Errorf("%d lines, expected %d", n, count)
		}
	}
	if want := `{"id":2,"name":"record-000001","score":0.5,"active":false,"kind":"KIND_MEDIUM",` +
		`"location":{"city":"Springfield","latitude":39.78,"longitude":-89.65},"tags":["alpha","beta"],"samples":[1,2,3]}`; !bytes.Contains(ndjson(2), []byte(want+"\n")) {
		t.Errorf("record 1 is not %s", want)
	}

	// gzip when accepted: the lines inflate.
	request, _ := http.NewRequest("GET", base+"/records?count=500", nil)
	request.Header.Set("Accept-Encoding", "gzip")
	response, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(request)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(response.Body)
	if err != nil || response.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%v %v", response.Header, err)
	}
	plain, _ := io.ReadAll(zr)
	response.Body.Close()
	if !bytes.Equal(plain, ndjson(500)) {
		t.Error("the gzip download differs")
	}

	for _, query := range []string{"", "?count=", "?count=abc", "?count=1.5", "?count=-1", "?count=100001", "?count=99999999999999999999", "?n=3"} {
		response, err := http.Get(base + "/records" + query)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(response.Body)
		response.Body.Close()
		if response.StatusCode != 400 || !bytes.Contains(data, []byte(`"INVALID_ARGUMENT"`)) {
			t.Errorf("%q: %d %s", query, response.StatusCode, data)
		}
	}
	if status, _ := post(t, base+"/records", "application/json", strings.NewReader("{}"), 2); status != 405 {
		t.Errorf("POST /records: %d", status)
	}
}

// Stream vectors as contract/README.md writes them go through checkVector.
func TestStreamVectors(t *testing.T) {
	base := start(t, workloads.Preloaded).URL
	cases := []string{
		`{"method": "POST", "path": "/records/upload", "body": {"ndjson": [{"id": 5, "active": true, "samples": [1]}, {"id": 9}]},
		  "expect": {"status": 200, "json": {"count": 2, "activeCount": 1, "firstId": 5, "lastId": 9, "sampleCount": 1}}}`,
		`{"method": "POST", "path": "/records/upload", "body": {"ndjson": [{"id": 5}, {"kind": "KIND_HUGE"}]}, "expect": {"status": 400}}`,
		`{"method": "GET", "path": "/records?count=2", "expect": {"status": 200, "ndjson": [
		  {"id": 1, "name": "record-000000", "score": 0, "active": true, "kind": "KIND_SMALL", "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65}, "tags": ["alpha", "beta"], "samples": [0, 1, 2]},
		  {"id": 2, "name": "record-000001", "score": 0.5, "kind": "KIND_MEDIUM", "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65}, "tags": ["alpha", "beta"], "samples": [1, 2, 3]}]}}`,
		`{"method": "GET", "path": "/records?count=0", "expect": {"status": 200, "ndjson": []}}`,
	}
	for _, text := range cases {
		var c vectors.RESTCase
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			t.Fatal(err)
		}
		t.Run(c.Method+" "+c.Path, func(t *testing.T) { checkVector(t, base, &c) })
	}
}
