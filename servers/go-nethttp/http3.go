package main

import (
	"crypto/tls"
	"net"
	"net/http"

	"callbench/goshared/serverkit"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// serveHTTP3 serves the same handlers over HTTP/3 (quic-go's http3) on UDP at the TCP
// listener's port, as sites that offer HTTP/3 beside HTTP/1.1 and HTTP/2 do; 0-RTT accepted.
// It answers on served when it stops.
func serveHTTP3(host string, port int, handler http.Handler, base *tls.Config, served chan<- error) *http3.Server {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(host), Port: port})
	if err != nil {
		serverkit.Fail("cannot listen for HTTP/3 on UDP port %d: %v", port, err)
	}
	server := &http3.Server{
		Handler:    handler,
		TLSConfig:  http3.ConfigureTLSConfig(base.Clone()),
		QUICConfig: &quic.Config{Allow0RTT: true},
	}
	go func() { served <- server.Serve(udp) }()
	return server
}
