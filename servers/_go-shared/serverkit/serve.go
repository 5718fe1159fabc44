package serverkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// ShutdownGrace is how long calls still open at SIGINT/SIGTERM get before the server exits anyway.
const ShutdownGrace = time.Second

// Listen binds the address of the flags (port 0 included, so the announced address is the real one).
func (a Args) Listen() net.Listener {
	listener, err := net.Listen("tcp", a.Addr())
	if err != nil {
		Fail("cannot listen on %s: %v", a.Addr(), err)
	}
	return listener
}

// Announce prints the line the harness waits for: `listening on HOST:PORT`.
// os.Stdout is unbuffered in Go: the line is out when this returns.
func Announce(addr net.Addr) {
	fmt.Fprintf(os.Stdout, "listening on %s\n", addr)
}

// StopSignal is done on the first SIGINT or SIGTERM. Installed before the
// announce line, so a harness that signals right after reading it stops us
// cleanly rather than killing us.
func StopSignal() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
