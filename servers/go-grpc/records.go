package main

import (
	"errors"
	"io"

	"google.golang.org/grpc"

	"callbench/go-grpc/internal/pb"
	"callbench/goshared/workloads"
)

// callbench.v1.Records, the streaming calls: each runs on its call's
// goroutine and handles one message at a time as it arrives or leaves, so a
// stream never sits whole in memory. A record is checked as echo checks it.

type recordsService struct {
	pb.UnimplementedRecordsServer
}

// Upload counts the records until the client half-closes, then answers their
// summary; the first invalid record ends the call with INVALID_ARGUMENT.
func (recordsService) Upload(stream grpc.ClientStreamingServer[pb.Record, pb.UploadSummary]) error {
	var summary workloads.UploadSummary
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err // already a status: the client went away, or a message was refused
		}
		loc := r.GetLocation()
		err = summary.Add(r.GetId(), r.GetActive(), len(r.GetSamples()), workloads.Kind(r.GetKind()),
			r.GetScore(), loc.GetLatitude(), loc.GetLongitude())
		if err != nil {
			return toStatus(err)
		}
	}
	return stream.SendAndClose(&pb.UploadSummary{
		Count:       summary.Count,
		ActiveCount: summary.ActiveCount,
		FirstId:     summary.FirstID,
		LastId:      summary.LastID,
		SampleCount: summary.SampleCount,
	})
}

// Converse answers every message unchanged as soon as it is read, and ends
// the call when the client half-closes; an invalid message ends it with
// INVALID_ARGUMENT after the answers to the messages before it.
func (recordsService) Converse(stream grpc.BidiStreamingServer[pb.EchoMessage, pb.EchoMessage]) error {
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkEcho(m); err != nil {
			return toStatus(err)
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
}

// Download sends the count records of the contract's rule, one message each,
// made as they are sent.
func (recordsService) Download(req *pb.DownloadRequest, stream grpc.ServerStreamingServer[pb.Record]) error {
	if err := workloads.CheckDownload(req.GetCount()); err != nil {
		return toStatus(err)
	}
	for i := range int(req.GetCount()) {
		r := workloads.Downloaded(i)
		if err := stream.Send(recordToPB(&r)); err != nil {
			return err // the client went away
		}
	}
	return nil
}
