// Command go-nethttp is callbench's reference REST/JSON server on the standard
// library: net/http (Go 1.22 method+path patterns) and encoding/json.
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"time"

	"callbench/goshared/serverkit"
	"github.com/quic-go/quic-go/http3"
)

func main() {
	var withHTTP3 bool
	args := serverkit.ParseArgs("go-nethttp: callbench's REST/JSON server on net/http and encoding/json",
		func(flags *flag.FlagSet) {
			flags.BoolVar(&withHTTP3, "http3", false, "also serve HTTP/3 (QUIC, quic-go) on UDP at the same port (needs --tls)")
		})
	if withHTTP3 && !args.TLS {
		serverkit.Fail("--http3 needs --tls: QUIC always carries TLS")
	}
	users := args.OpenUsers()
	listener := args.Listen()

	// HTTP/1.1, and HTTP/2 with prior knowledge (h2c) as the Rust REST servers serve it;
	// with --tls, HTTP/2 and HTTP/1.1 chosen by ALPN.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	server := &http.Server{
		Handler:   routes(users),
		Protocols: &protocols,
		// Bounds a client that opens a connection and never finishes its headers
		// (also the TLS handshake limit); the body limit is in readBody.
		ReadHeaderTimeout: serverkit.HandshakeTimeout,
		IdleTimeout:       2 * time.Minute,
	}
	if args.TLS {
		server.TLSConfig = serverkit.SelfSignedTLS()
	}

	stop, cancel := serverkit.StopSignal()
	defer cancel()
	served := make(chan error, 1)
	go func() {
		if args.TLS {
			served <- server.ServeTLS(listener, "", "")
		} else {
			served <- server.Serve(listener)
		}
	}()
	var h3 *http3.Server
	if withHTTP3 {
		h3 = serveHTTP3(args.Host, listener.Addr().(*net.TCPAddr).Port, server.Handler, server.TLSConfig, served)
	}
	serverkit.Announce(listener.Addr())

	select {
	case err := <-served:
		serverkit.Fail("server error: %v", err)
	case <-stop.Done():
	}
	// Stop accepting, let open calls finish for a moment, then close what is left.
	ctx, cancelGrace := context.WithTimeout(context.Background(), serverkit.ShutdownGrace)
	defer cancelGrace()
	if h3 != nil {
		_ = h3.Shutdown(ctx)
	}
	if err := server.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		_ = server.Close()
	}
}
