package main

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/gzip" // importing it registers the compressor: gzip requests are inflated
)

// grpc-go answers with the encoding of the request (a gzip request gets a gzip
// reply, a plain one a plain reply), whatever the client's
// grpc-accept-encoding says. The contract asks for a reply compressed when
// (and only when) the client accepts gzip, as tonic does: these interceptors
// choose the reply's compressor from grpc-accept-encoding, through grpc-go's
// own per-call API (grpc.SetSendCompressor).

func replyCompressor(ctx context.Context) {
	name := encoding.Identity
	if accepted, err := grpc.ClientSupportedCompressors(ctx); err == nil && slices.Contains(accepted, gzip.Name) {
		name = gzip.Name
	}
	_ = grpc.SetSendCompressor(ctx, name) // cannot fail: identity, or gzip which the client accepts
}

func unaryCompression(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	replyCompressor(ctx)
	return handler(ctx, req)
}

func streamCompression(srv any, stream grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	replyCompressor(stream.Context())
	return handler(srv, stream)
}
