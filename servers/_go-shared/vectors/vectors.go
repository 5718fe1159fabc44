// Package vectors reads the contract's test vectors (contract/vectors/*.json)
// for the Go servers' own tests; `callbench verify` is the judge that counts.
package vectors

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Vector is one case: a REST or a gRPC call and the answer it expects.
type Vector struct {
	Name  string    `json:"name"`
	Class string    `json:"class"`
	REST  *RESTCase `json:"rest"`
	GRPC  *GRPCCase `json:"grpc"`
}

type RESTCase struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"` // "" means: do not send this header
	Body    *Body             `json:"body"`
	Expect  struct {
		Status  int               `json:"status"`
		Message string            `json:"message"`
		JSON    json.RawMessage   `json:"json"`
		NDJSON  []json.RawMessage `json:"ndjson"` // a streamed answer: every line, in order
	} `json:"expect"`
}

type GRPCCase struct {
	Method      string `json:"method"` // package.Service/Method
	ContentType string `json:"content_type"`
	Request     Body   `json:"request"`
	Requests    []Body `json:"requests"` // a client- or bidi-streaming call: sent in order, then half-closed
	Expect      struct {
		Code     string            `json:"code"` // a status name, or ANY_ERROR
		JSON     json.RawMessage   `json:"json"`
		Messages []json.RawMessage `json:"messages"` // a server- or bidi-streaming call: every answer, in order
	} `json:"expect"`
}

// Streams tells whether the call sends a stream of requests.
func (c *GRPCCase) Streams() bool { return c.Requests != nil }

// Body is exactly one of JSON, NDJSON, Text, Base64, Fill.
type Body struct {
	JSON   json.RawMessage   `json:"json"`
	NDJSON []json.RawMessage `json:"ndjson"` // compact JSON lines, sent as application/x-ndjson, chunked
	Text   *string           `json:"text"`
	Base64 *string           `json:"base64"`
	Fill   *struct {
		Byte   byte   `json:"byte"`
		Size   int    `json:"size"`
		Prefix string `json:"prefix_base64"`
		Suffix string `json:"suffix_base64"`
	} `json:"fill"`
}

// Raw is the bytes of a non-JSON body (JSON bodies are the caller's to encode);
// NDJSON is its values compacted, each line ending in a newline.
func (b *Body) Raw() ([]byte, error) {
	switch {
	case b.NDJSON != nil:
		var out bytes.Buffer
		for _, line := range b.NDJSON {
			if err := json.Compact(&out, line); err != nil {
				return nil, err
			}
			out.WriteByte('\n')
		}
		return out.Bytes(), nil
	case b.Text != nil:
		return []byte(*b.Text), nil
	case b.Base64 != nil:
		return base64.StdEncoding.DecodeString(*b.Base64)
	case b.Fill != nil:
		prefix, err := base64.StdEncoding.DecodeString(b.Fill.Prefix)
		if err != nil {
			return nil, err
		}
		suffix, err := base64.StdEncoding.DecodeString(b.Fill.Suffix)
		if err != nil {
			return nil, err
		}
		return append(append(prefix, bytes.Repeat([]byte{b.Fill.Byte}, b.Fill.Size)...), suffix...), nil
	}
	return nil, fmt.Errorf("a JSON body has no raw bytes")
}

// Load reads every vector file of the contract folder under root (the repo).
func Load(root string) ([]Vector, error) {
	files, err := filepath.Glob(filepath.Join(root, "contract", "vectors", "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no vectors under %s (%v)", root, err)
	}
	sort.Strings(files)
	var all []Vector
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var file struct {
			Vectors []Vector `json:"vectors"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, file.Vectors...)
	}
	return all, nil
}
