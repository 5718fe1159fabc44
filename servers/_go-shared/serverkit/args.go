// Package serverkit holds the flags and start-up steps every Go reference
// server shares (contract/README.md, "Serving"), so each server's own code is
// only its framework's routing and handlers.
package serverkit

import (
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"callbench/goshared/workloads"
)

// Args are the serving flags of the contract.
type Args struct {
	Host    string
	Port    int
	Workers int
	Mode    workloads.Mode
	Users   string
	TLS     bool
}

// ParseArgs reads the flags (-flag and --flag both work). --version prints the
// versions compiled into the binary and exits; bad flags exit with status 2.
// GOMAXPROCS is set to --workers: that many threads run Go code at once.
// extra adds a server's own flags beside the contract's.
func ParseArgs(about string, extra ...func(*flag.FlagSet)) Args {
	var a Args
	var mode string
	var version bool
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "%s\n\nUsage: %s [flags]\n", about, os.Args[0])
		flags.PrintDefaults()
	}
	flags.StringVar(&a.Host, "host", "127.0.0.1", "address to bind")
	flags.IntVar(&a.Port, "port", 8080, "port to listen on; 0 picks a free one")
	flags.IntVar(&a.Workers, "workers", 1, "threads that run calls (GOMAXPROCS); give it the cores it is pinned to")
	flags.StringVar(&mode, "mode", string(workloads.Preloaded), "how auth finds users: preloaded (parsed once) or per-request (read and parsed on every call, as seed 000)")
	flags.StringVar(&a.Users, "users", "users.json", "the users file written by `callbench gen-users`")
	flags.BoolVar(&a.TLS, "tls", false, "serve TLS 1.2/1.3 with a self-signed certificate for localhost made at start (SHA-256 fingerprint on stderr)")
	flags.BoolVar(&version, "version", false, "print the Go and module versions compiled in (or, given a module path, that module's version) and exit")
	for add := range extra {
		extra[add](flags)
	}
	_ = flags.Parse(os.Args[1:])

	if version {
		PrintVersions(os.Stdout, flags.Args())
		os.Exit(0)
	}
	if flags.NArg() > 0 {
		Fail("unexpected argument %q", flags.Arg(0))
	}
	if a.Port < 0 || a.Port > 65535 {
		Fail("--port must be in 0..65535")
	}
	if a.Workers < 1 || a.Workers > 1024 {
		Fail("--workers must be in 1..1024")
	}
	var err error
	if a.Mode, err = workloads.ParseMode(mode); err != nil {
		Fail("--mode: %v", err)
	}
	runtime.GOMAXPROCS(a.Workers)
	return a
}

// Addr is host:port, with brackets around an IPv6 host.
func (a Args) Addr() string {
	return net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}

// OpenUsers opens the users file in the chosen mode, or exits with a one-line message.
func (a Args) OpenUsers() *workloads.UserStore {
	users, err := workloads.OpenUsers(a.Users, a.Mode)
	if err != nil {
		Fail("cannot read users file %s: %v (write it with `callbench gen-users`)", a.Users, err)
	}
	return users
}

// Fail prints a one-line error on stderr and exits with status 2.
func Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(2)
}
