package main

import (
	"crypto/tls"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"callbench/go-grpc/internal/pb"
	"callbench/goshared/serverkit"
	"callbench/goshared/workloads"
)

// newServer is the gRPC server with the contract's services,
// grpc.health.v1.Health and server reflection (grpc.reflection.v1 and v1alpha);
// plaintext HTTP/2 (h2c), or TLS with ALPN h2 when tlsConfig is set. A maxAge
// above 0 ends each connection with GOAWAY after that long (calls in flight get
// as long again to finish).
func newServer(users *workloads.UserStore, tlsConfig *tls.Config, maxAge time.Duration) (*grpc.Server, *health.Server) {
	options := []grpc.ServerOption{
		// grpc-go's default, spelled out as it is the contract's limit: a message
		// over 4 MiB (on the wire, or once inflated) is RESOURCE_EXHAUSTED, exactly 4 MiB passes.
		grpc.MaxRecvMsgSize(workloads.MaxBodyBytes),
		// gzip replies when the client accepts gzip (compression.go).
		grpc.UnaryInterceptor(unaryCompression),
		grpc.StreamInterceptor(streamCompression),
	}
	if tlsConfig != nil {
		options = append(options,
			grpc.Creds(credentials.NewTLS(tlsConfig)), // adds ALPN h2
			grpc.ConnectionTimeout(serverkit.HandshakeTimeout))
	}
	if maxAge > 0 {
		options = append(options, grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      maxAge,
			MaxConnectionAgeGrace: maxAge,
		}))
	}
	server := grpc.NewServer(options...)

	pb.RegisterAuthServer(server, &authService{users: users})
	pb.RegisterStudentsServer(server, studentsService{})
	pb.RegisterCarsServer(server, carsService{})
	pb.RegisterLifeServer(server, lifeService{})
	pb.RegisterEchoServer(server, echoService{})
	pb.RegisterRecordsServer(server, recordsService{})

	// "" (the whole server) is SERVING from the start; every callbench.v1
	// service too, named from what was registered rather than from a list.
	h := health.NewServer()
	for name := range server.GetServiceInfo() {
		if strings.HasPrefix(name, "callbench.v1.") {
			h.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
		}
	}
	healthpb.RegisterHealthServer(server, h)
	reflection.Register(server)
	return server, h
}
