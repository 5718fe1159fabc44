// Command go-grpc is callbench's reference gRPC server on grpc-go, with the
// standard health and reflection services and gzip.
package main

import (
	"crypto/tls"
	"flag"
	"time"

	"callbench/goshared/serverkit"
)

func main() {
	var maxAge time.Duration
	args := serverkit.ParseArgs("go-grpc: callbench's gRPC server on grpc-go", func(f *flag.FlagSet) {
		f.DurationVar(&maxAge, "max-connection-age", 0, "end each connection gracefully (GOAWAY) after this long, as grpc-go's MaxConnectionAge does behind load balancers; 0: never")
	})
	if maxAge < 0 {
		serverkit.Fail("--max-connection-age must not be negative")
	}
	users := args.OpenUsers()
	listener := args.Listen()

	var tlsConfig *tls.Config
	if args.TLS {
		tlsConfig = serverkit.SelfSignedTLS()
	}
	server, health := newServer(users, tlsConfig, maxAge)

	stop, cancel := serverkit.StopSignal()
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	serverkit.Announce(listener.Addr())

	select {
	case err := <-served:
		serverkit.Fail("server error: %v", err)
	case <-stop.Done():
	}
	// NOT_SERVING to health checks from now on; open calls get a moment to finish,
	// then what is left is closed: a call that never ends must not keep us up.
	health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		server.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(serverkit.ShutdownGrace):
		server.Stop()
	}
}
