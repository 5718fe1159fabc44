package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"callbench/go-grpc/internal/pb"
	"callbench/goshared/vectors"
	"callbench/goshared/workloads"
)

// start serves newServer on a loopback port for the test, in the given mode.
func start(t *testing.T, mode workloads.Mode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, workloads.UsersJSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	users, err := workloads.OpenUsers(path, mode)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server, _ := newServer(users, nil, 0)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return listener.Addr().String()
}

func dial(t *testing.T, addr string, options ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append(options, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// raw sends and receives message bytes as they are, bad ones included.
type raw struct{ data []byte }

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)      { return v.(*raw).data, nil }
func (rawCodec) Unmarshal(data []byte, v any) error { v.(*raw).data = bytes.Clone(data); return nil }
func (rawCodec) Name() string                       { return "proto" }

func messageType(t *testing.T, name protoreflect.FullName) protoreflect.MessageType {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return mt
}

// TestVectors sends every gRPC vector of contract/vectors/ in both modes.
func TestVectors(t *testing.T) {
	all, err := vectors.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []workloads.Mode{workloads.Preloaded, workloads.PerRequest} {
		conn := dial(t, start(t, mode))
		for _, v := range all {
			if v.GRPC == nil || v.GRPC.ContentType != "" { // grpc-go clients send only application/grpc
				continue
			}
			t.Run(string(mode)+"/"+v.Name, func(t *testing.T) { checkVector(t, conn, v.GRPC) })
		}
	}
}

func checkVector(t *testing.T, conn *grpc.ClientConn, c *vectors.GRPCCase) {
	service, name, _ := strings.Cut(c.Method, "/")
	var method protoreflect.MethodDescriptor
	if d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service)); err == nil {
		method = d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name))
	}
	bodies := []vectors.Body{c.Request}
	if c.Streams() {
		bodies = c.Requests
	}
	requests := make([]*raw, len(bodies))
	for i, body := range bodies {
		requests[i] = &raw{}
		if body.JSON != nil {
			message := messageType(t, method.Input().FullName()).New().Interface()
			if err := protojson.Unmarshal(body.JSON, message); err != nil {
				t.Fatal(err)
			}
			requests[i].data, _ = proto.Marshal(message)
		} else {
			var err error
			if requests[i].data, err = body.Raw(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var replies []*raw
	var err error
	if method != nil && (method.IsStreamingClient() || method.IsStreamingServer()) {
		replies, err = streamCall(conn, c.Method, method, requests)
	} else {
		reply := &raw{}
		err = conn.Invoke(context.Background(), "/"+c.Method, requests[0], reply, grpc.ForceCodec(rawCodec{}))
		if err == nil {
			replies = append(replies, reply)
		}
	}
	code := status.Code(err)
	if c.Expect.Code == "ANY_ERROR" {
		if code == codes.OK {
			t.Fatal("OK, expected an error")
		}
		return
	}
	var want codes.Code
	if err := want.UnmarshalJSON([]byte(`"` + c.Expect.Code + `"`)); err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("%v, expected %s", err, c.Expect.Code)
	}
	expected := c.Expect.Messages
	if expected == nil {
		if c.Expect.JSON == nil {
			return
		}
		expected, replies = []json.RawMessage{c.Expect.JSON}, replies[:min(len(replies), 1)]
	}
	if len(replies) != len(expected) {
		t.Fatalf("%d answers, expected %d", len(replies), len(expected))
	}
	mt := messageType(t, method.Output().FullName())
	for i, reply := range replies {
		got, want := mt.New().Interface(), mt.New().Interface()
		if err := proto.Unmarshal(reply.data, got); err != nil {
			t.Fatal(err)
		}
		if err := protojson.Unmarshal(expected[i], want); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("answer %d: got %v, expected %v", i, got, want)
		}
	}
}

// streamCall sends the requests in order, half-closes, and reads every answer
// until the call ends; the error is the call's status.
func streamCall(conn *grpc.ClientConn, name string, method protoreflect.MethodDescriptor, requests []*raw) ([]*raw, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	desc := &grpc.StreamDesc{ClientStreams: method.IsStreamingClient(), ServerStreams: method.IsStreamingServer()}
	stream, err := conn.NewStream(ctx, desc, "/"+name, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return nil, err
	}
	for _, request := range requests {
		if stream.SendMsg(request) != nil {
			break // the call ended early: RecvMsg tells how
		}
	}
	_ = stream.CloseSend()
	var replies []*raw
	for {
		reply := &raw{}
		if err := stream.RecvMsg(reply); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return replies, err
		}
		replies = append(replies, reply)
		if !desc.ServerStreams { // one answer; grpc-go checks the end of the call itself
			return replies, nil
		}
	}
}

type h2cReply struct {
	status   string // grpc-status
	encoding string // grpc-encoding
	flag     byte   // the compressed flag of the reply's message
	message  []byte // the reply's message, inflated
}

// h2cCall sends one message frame over plain net/http (HTTP/2 with prior
// knowledge), the compression headers and flag as given, as no grpc-go client
// would: a gzip request that does not accept gzip, a corrupt gzip message.
func h2cCall(t *testing.T, addr, method string, flag byte, message []byte, header http.Header) h2cReply {
	t.Helper()
	frame := append([]byte{flag, 0, 0, 0, 0}, message...)
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(message)))
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	request, _ := http.NewRequest("POST", "http://"+addr+method, bytes.NewReader(frame))
	request.Header = header
	request.Header.Set("Content-Type", "application/grpc")
	request.Header.Set("Te", "trailers")
	response, err := client.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	reply := h2cReply{status: response.Trailer.Get("Grpc-Status"), encoding: response.Header.Get("Grpc-Encoding")}
	if reply.status == "" { // a trailers-only answer
		reply.status = response.Header.Get("Grpc-Status")
	}
	if len(body) >= 5 {
		reply.flag, reply.message = body[0], body[5:]
		if reply.flag == 1 {
			zr, err := gzip.NewReader(bytes.NewReader(reply.message))
			if err != nil {
				t.Fatal(err)
			}
			reply.message, _ = io.ReadAll(zr)
		}
	}
	return reply
}

func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

// TestGzipBothWays: a gzip request is inflated; a reply is compressed when the
// client accepts gzip, and only then, whether or not its request came gzipped.
func TestGzipBothWays(t *testing.T) {
	addr := start(t, workloads.Preloaded)
	message := &pb.EchoMessage{}
	for i := range 40 {
		message.Records = append(message.Records, &pb.Record{Id: int64(i), Name: "a record of the gzip test", Tags: []string{"alpha", "beta"}})
	}
	encoded, _ := proto.Marshal(message)
	for _, c := range []struct{ gzipRequest, acceptGzip bool }{{true, false}, {false, true}, {true, true}, {false, false}} {
		header := http.Header{}
		flag, body := byte(0), encoded
		if c.gzipRequest {
			flag, body = 1, gzipped(encoded)
			header.Set("Grpc-Encoding", "gzip")
		}
		if c.acceptGzip {
			header.Set("Grpc-Accept-Encoding", "gzip")
		}
		reply := h2cCall(t, addr, "/callbench.v1.Echo/Echo", flag, body, header)
		if compressed := reply.flag == 1; reply.status != "0" || compressed != c.acceptGzip || compressed && reply.encoding != "gzip" {
			t.Errorf("%+v: status %s, reply compressed %v, grpc-encoding %q", c, reply.status, compressed, reply.encoding)
		}
		if !bytes.Equal(reply.message, encoded) {
			t.Errorf("%+v: the echo differs", c)
		}
	}

	// A small gzip message that inflates past 4 MiB is refused like a large one.
	big, _ := proto.Marshal(&pb.EchoMessage{Records: []*pb.Record{{Name: strings.Repeat("a", workloads.MaxBodyBytes)}}})
	gzipHeader := http.Header{"Grpc-Encoding": {"gzip"}}
	if reply := h2cCall(t, addr, "/callbench.v1.Echo/Echo", 1, gzipped(big), gzipHeader); reply.status != "8" {
		t.Errorf("inflating past 4 MiB: grpc-status %s, expected 8 (RESOURCE_EXHAUSTED)", reply.status)
	}
	// A corrupt gzip message is an error, not a crash.
	truncated := gzipped(encoded)
	truncated = truncated[:len(truncated)-4]
	if reply := h2cCall(t, addr, "/callbench.v1.Echo/Echo", 1, truncated, gzipHeader); reply.status == "0" || reply.status == "" {
		t.Errorf("a corrupt gzip message: grpc-status %q", reply.status)
	}
}

func TestHealthAndReflectionNameEveryService(t *testing.T) {
	conn := dial(t, start(t, workloads.Preloaded))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	request := &reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}
	if err := stream.Send(request); err != nil {
		t.Fatal(err)
	}
	answer, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range answer.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	health := healthpb.NewHealthClient(conn)
	for _, want := range []string{"callbench.v1.Auth", "callbench.v1.Students", "callbench.v1.Cars", "callbench.v1.Life",
		"callbench.v1.Echo", "callbench.v1.Records", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} {
		if !strings.Contains(strings.Join(names, " ")+" ", want+" ") {
			t.Errorf("reflection lists %v, not %s", names, want)
		}
		if strings.HasPrefix(want, "callbench.v1.") {
			reply, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: want})
			if err != nil || reply.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("health of %s: %v %v", want, reply, err)
			}
		}
	}
}

// The REST JSON shapes are not used here, but the vectors' expectations are
// proto3 JSON: make sure a reply written by protojson reads back (sanity of the setup).
func TestProtoJSONRoundTrip(t *testing.T) {
	out, err := protojson.Marshal(studentsToPB(workloads.ListStudents()))
	if err != nil || !json.Valid(out) || !bytes.Contains(out, []byte(`"firstName"`)) {
		t.Fatalf("%s %v", out, err)
	}
}
