package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"callbench/goshared/vectors"
	"callbench/goshared/workloads"
)

func start(t *testing.T, mode workloads.Mode) *httptest.Server {
	t.Helper()
	server := unstarted(t, mode)
	server.Start()
	return server
}

// unstarted is the server on a loopback port, to configure before Start.
func unstarted(t *testing.T, mode workloads.Mode) *httptest.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, workloads.UsersJSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	users, err := workloads.OpenUsers(path, mode)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(routes(users))
	t.Cleanup(server.Close)
	return server
}

// TestVectors sends every REST vector of contract/vectors/ in both modes.
func TestVectors(t *testing.T) {
	all, err := vectors.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []workloads.Mode{workloads.Preloaded, workloads.PerRequest} {
		server := start(t, mode)
		for _, v := range all {
			if v.REST != nil {
				t.Run(string(mode)+"/"+v.Name, func(t *testing.T) { checkVector(t, server.URL, v.REST) })
			}
		}
	}
}

func checkVector(t *testing.T, base string, c *vectors.RESTCase) {
	var body []byte
	header := http.Header{}
	if b := c.Body; b != nil {
		if b.JSON != nil {
			var compact bytes.Buffer
			_ = json.Compact(&compact, b.JSON)
			body = compact.Bytes()
			header.Set("Content-Type", "application/json")
		} else {
			var err error
			if body, err = b.Raw(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, value := range c.Headers {
		if value == "" {
			header.Del(name)
		} else {
			header.Set(name, value)
		}
	}
	request, _ := http.NewRequest(c.Method, base+c.Path, bytes.NewReader(body))
	if c.Body != nil && c.Body.NDJSON != nil {
		header.Set("Content-Type", "application/x-ndjson")
		request.ContentLength = -1 // chunked, as the contract sends NDJSON bodies
	}
	request.Header = header
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	got, _ := io.ReadAll(response.Body)
	if response.StatusCode != c.Expect.Status {
		t.Fatalf("status %d, expected %d: %s", response.StatusCode, c.Expect.Status, got)
	}
	contentType := "application/json"
	if c.Expect.NDJSON != nil {
		contentType = "application/x-ndjson"
	}
	if !strings.HasPrefix(response.Header.Get("Content-Type"), contentType) {
		t.Errorf("content-type %q, expected %s", response.Header.Get("Content-Type"), contentType)
	}
	if c.Expect.JSON != nil && !sameMessage(t, got, c.Expect.JSON) {
		t.Fatalf("got %s, expected %s", got, c.Expect.JSON)
	}
	if c.Expect.NDJSON != nil {
		lines := strings.SplitAfter(string(got), "\n")
		if last := lines[len(lines)-1]; last != "" {
			t.Fatalf("the answer does not end in a newline: %q", last)
		}
		lines = lines[:len(lines)-1]
		if len(lines) != len(c.Expect.NDJSON) {
			t.Fatalf("%d lines, expected %d", len(lines), len(c.Expect.NDJSON))
		}
		for i, line := range lines {
			if !sameMessage(t, []byte(line), c.Expect.NDJSON[i]) {
				t.Fatalf("line %d: got %s, expected %s", i, line, c.Expect.NDJSON[i])
			}
		}
	}
}

// sameMessage compares JSON as messages: fields holding their default value
// (0, "", false, [], null, KIND_UNSPECIFIED) count as absent.
func sameMessage(t *testing.T, a, b []byte) bool {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(withoutDefaults(x), withoutDefaults(y))
}

func withoutDefaults(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, item := range v {
			switch item {
			case nil, 0.0, "", false, "KIND_UNSPECIFIED":
				continue
			}
			if list, ok := item.([]any); ok && len(list) == 0 {
				continue
			}
			out[k] = withoutDefaults(item)
		}
		return out
	case []any:
		for i := range v {
			v[i] = withoutDefaults(v[i])
		}
	}
	return v
}

func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

func TestGzipBothWays(t *testing.T) {
	server := start(t, workloads.Preloaded)
	// Go's transport asks for gzip and inflates by itself unless told otherwise: ask by hand.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	call := func(method, path string, body []byte, headers ...string) (*http.Response, []byte) {
		t.Helper()
		request, _ := http.NewRequest(method, server.URL+path, bytes.NewReader(body))
		for i := 0; i < len(headers); i += 2 {
			request.Header.Set(headers[i], headers[i+1])
		}
		response, err := client.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		data, _ := io.ReadAll(response.Body)
		return response, data
	}

	step := []byte(`{"ntimes":1,"board":[[0,1],[1,1],[2,1]]}`)
	response, data := call("POST", "/life/step", gzipped(step), "Content-Type", "application/json",
		"Content-Encoding", "gzip", "Accept-Encoding", "br;q=1.0, gzip;q=0.5")
	if response.StatusCode != 200 || response.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d %v", response.StatusCode, response.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !sameMessage(t, plain, []byte(`{"board":[[1,0],[1,1],[1,2]]}`)) {
		t.Errorf("%s", plain)
	}

	for _, accept := range []string{"", "identity", "gzip;q=0", "br"} {
		response, data = call("GET", "/students", nil, "Accept-Encoding", accept)
		if response.Header.Get("Content-Encoding") != "" || !json.Valid(data) {
			t.Errorf("Accept-Encoding %q: compressed", accept)
		}
	}
	if !acceptsGzip("*") || acceptsGzip("*, gzip;q=0") || !acceptsGzip("GZIP") {
		t.Error("acceptsGzip reads q-values or wildcards wrong")
	}

	bomb := gzipped(append(append([]byte(`{"records":[{"name":"`), bytes.Repeat([]byte("a"), workloads.MaxBodyBytes)...), `"}]}`...))
	cases := []struct {
		body     []byte
		encoding string
		status   int
	}{
		{bomb, "gzip", 413},                     // small on the wire, over 4 MiB inflated
		{[]byte(`{"records":[]}`), "gzip", 400}, // not gzip
		{[]byte(`{"records":[]}`), "br", 415},   // an encoding we do not speak
		{[]byte(`{"records":[]}`), "identity", 200},
	}
	for _, c := range cases {
		response, data = call("POST", "/echo", c.body, "Content-Type", "application/json", "Content-Encoding", c.encoding)
		if response.StatusCode != c.status {
			t.Errorf("%s body of %d bytes: %d %s, expected %d", c.encoding, len(c.body), response.StatusCode, data, c.status)
		}
	}
}

// Bad input answered from a read body keeps the connection; any HTTP/2 client
// with prior knowledge is served too.
func TestKeepAliveAndH2C(t *testing.T) {
	server := unstarted(t, workloads.Preloaded)
	var conns atomic.Int32
	server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	server.Config.Protocols = new(http.Protocols)
	server.Config.Protocols.SetHTTP1(true)
	server.Config.Protocols.SetUnencryptedHTTP2(true)
	server.Start()

	client := &http.Client{Transport: &http.Transport{}}
	for _, body := range []string{`{"password": `, `{"password": 1}`, `{}`, `{"password":"x"}`} {
		response, err := client.Post(server.URL+"/auth/1", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, response.Body)
		response.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 4 calls", n)
	}

	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	client = &http.Client{Transport: &http.Transport{Protocols: &h2c}}
	response, err := client.Get(server.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if response.ProtoMajor != 2 || response.StatusCode != 200 {
		t.Errorf("%s %d", response.Proto, response.StatusCode)
	}
}
