package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"callbench/go-grpc/internal/pb"
	"callbench/goshared/vectors"
	"callbench/goshared/workloads"
)

// Tests of callbench.v1.Records: the three streaming calls through the typed
// client, stream vectors in the contract's format, and reflection of records.proto.

func records(t *testing.T) (pb.RecordsClient, context.Context) {
	t.Helper()
	// Generous: this client accepts gzip, so each of a download's 100,000
	// messages is compressed on its own, slow under the race detector.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return pb.NewRecordsClient(dial(t, start(t, workloads.Preloaded))), ctx
}

func downloaded(i int) *pb.Record {
	r := workloads.Downloaded(i)
	return recordToPB(&r)
}

func TestUploadSummarizesWhatWasSent(t *testing.T) {
	client, ctx := records(t)
	upload := func(records ...*pb.Record) (*pb.UploadSummary, error) {
		stream, err := client.Upload(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range records {
			if err := stream.Send(r); err != nil {
				break // refused early: CloseAndRecv has the status
			}
		}
		return stream.CloseAndRecv()
	}
	many := make([]*pb.Record, 1000)
	for i := range many {
		many[i] = downloaded(i)
	}
	cases := []struct {
		records []*pb.Record
		want    *pb.UploadSummary
	}{
		{nil, &pb.UploadSummary{}},
		{[]*pb.Record{{Id: 42, Active: true, Samples: []int64{1, 2}}}, &pb.UploadSummary{Count: 1, ActiveCount: 1, FirstId: 42, LastId: 42, SampleCount: 2}},
		{many, &pb.UploadSummary{Count: 1000, ActiveCount: 500, FirstId: 1, LastId: 1000, SampleCount: 3000}},
	}
	for _, c := range cases {
		got, err := upload(c.records...)
		if err != nil || !proto.Equal(got, c.want) {
			t.Errorf("%d records: %v %v, expected %v", len(c.records), got, err, c.want)
		}
	}
	if _, err := upload(downloaded(0), downloaded(1), &pb.Record{Kind: 9}, downloaded(3)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("kind 9: %v", err)
	}
	// The 4 MiB limit holds for each message of a stream.
	if _, err := upload(downloaded(0), &pb.Record{Name: strings.Repeat("a", workloads.MaxBodyBytes)}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a record over 4 MiB: %v", err)
	}
}

func TestConverseAnswersEachMessageInTurn(t *testing.T) {
	client, ctx := records(t)
	message := func(id int64) *pb.EchoMessage {
		return &pb.EchoMessage{Records: []*pb.Record{{Id: id, Name: "turn", Kind: pb.Kind_KIND_MEDIUM}}}
	}
	// One message at a time, each answer read before the next is sent: the server never waits for more.
	stream, err := client.Converse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id := range int64(5) {
		if err := stream.Send(message(id)); err != nil {
			t.Fatal(err)
		}
		got, err := stream.Recv()
		if err != nil || !proto.Equal(got, message(id)) {
			t.Fatalf("answer %d: %v %v", id, got, err)
		}
	}
	_ = stream.CloseSend()
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after the half-close: %v, expected the end of the call", err)
	}

	// All sent first, the third invalid: two answers, then INVALID_ARGUMENT.
	stream, err = client.Converse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*pb.EchoMessage{message(1), {}, {Records: []*pb.Record{{Kind: 9}}}, message(4)} {
		_ = stream.Send(m)
	}
	_ = stream.CloseSend()
	var answers int
	for {
		if _, err = stream.Recv(); err != nil {
			break
		}
		answers++
	}
	if answers != 2 || status.Code(err) != codes.InvalidArgument {
		t.Errorf("%d answers, then %v", answers, err)
	}
}

func TestDownloadSendsTheContractsRecords(t *testing.T) {
	client, ctx := records(t)
	for _, count := range []int64{0, 3, workloads.MaxDownload} {
		stream, err := client.Download(ctx, &pb.DownloadRequest{Count: count})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for ; ; n++ {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("count %d, record %d: %v", count, n, err)
			}
			if n < 3 || n == int(count)-1 {
				if want := downloaded(n); !proto.Equal(r, want) {
					t.Fatalf("record %d: %v, expected %v", n, r, want)
				}
			}
		}
		if n != int(count) {
			t.Errorf("%d records, expected %d", n, count)
		}
	}
	want, _ := protojson.Marshal(downloaded(2))
	if got := `{"id":"3","name":"record-000002","score":1,"active":true,"kind":"KIND_LARGE",` +
		`"location":{"city":"Springfield","latitude":39.78,"longitude":-89.65},"tags":["alpha","beta"],"samples":["2","3","4"]}`; !jsonEqual(got, string(want)) {
		t.Errorf("record 2 is %s", want)
	}
	for _, count := range []int64{-1, workloads.MaxDownload + 1} {
		stream, err := client.Download(ctx, &pb.DownloadRequest{Count: count})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("count %d: %v", count, err)
		}
	}
}

func jsonEqual(a, b string) bool {
	x, y := &pb.Record{}, &pb.Record{}
	return protojson.Unmarshal([]byte(a), x) == nil && protojson.Unmarshal([]byte(b), y) == nil && proto.Equal(x, y)
}

// Stream vectors as contract/README.md writes them go through checkVector.
func TestStreamVectors(t *testing.T) {
	conn := dial(t, start(t, workloads.Preloaded))
	cases := []string{
		`{"method": "callbench.v1.Records/Upload", "requests": [{"json": {"id": 5, "active": true, "samples": [1]}}, {"json": {"id": 9}}],
		  "expect": {"code": "OK", "json": {"count": 2, "activeCount": 1, "firstId": 5, "lastId": 9, "sampleCount": 1}}}`,
		`{"method": "callbench.v1.Records/Upload", "requests": [], "expect": {"code": "OK", "json": {}}}`,
		`{"method": "callbench.v1.Records/Upload", "requests": [{"json": {"id": 1}}, {"base64": "KAk="}], "expect": {"code": "INVALID_ARGUMENT"}}`,
		`{"method": "callbench.v1.Records/Converse", "requests": [{"json": {"records": [{"id": 1}]}}, {"json": {}}],
		  "expect": {"code": "OK", "messages": [{"records": [{"id": 1}]}, {}]}}`,
		`{"method": "callbench.v1.Records/Converse", "requests": [{"json": {}}, {"base64": "CgIoCQ=="}, {"json": {}}],
		  "expect": {"code": "INVALID_ARGUMENT", "messages": [{}]}}`,
		`{"method": "callbench.v1.Records/Download", "request": {"json": {"count": 2}}, "expect": {"code": "OK", "messages": [
		  {"id": 1, "name": "record-000000", "score": 0, "active": true, "kind": "KIND_SMALL", "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65}, "tags": ["alpha", "beta"], "samples": [0, 1, 2]},
		  {"id": 2, "name": "record-000001", "score": 0.5, "kind": "KIND_MEDIUM", "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65}, "tags": ["alpha", "beta"], "samples": [1, 2, 3]}]}}`,
		`{"method": "callbench.v1.Records/Download", "request": {"json": {"count": 100001}}, "expect": {"code": "INVALID_ARGUMENT"}}`,
	}
	for i, text := range cases {
		var c vectors.GRPCCase
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		t.Run(c.Method, func(t *testing.T) { checkVector(t, conn, &c) })
	}
}

// Reflection answers with records.proto for the service, and echo.proto (its import) with it.
func TestReflectionGivesRecordsProto(t *testing.T) {
	conn := dial(t, start(t, workloads.Preloaded))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	request := &reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "callbench.v1.Records"}}
	if err := stream.Send(request); err != nil {
		t.Fatal(err)
	}
	answer, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, data := range answer.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var file descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(data, &file); err != nil {
			t.Fatal(err)
		}
		files = append(files, file.GetName())
	}
	if len(files) == 0 || files[0] != "callbench/v1/records.proto" {
		t.Errorf("files %v", files)
	}
}
