"""The flags and start-up steps every Python reference server shares (contract/README.md, "Serving")."""

import argparse
import sys
from dataclasses import dataclass
from typing import NoReturn

from .auth import Mode, UserStore


@dataclass(frozen=True)
class ServeArgs:
    host: str
    port: int
    workers: int
    mode: Mode
    users: str
    tls: bool = False

    def open_users(self) -> UserStore:
        """Opens the users file in the chosen mode, or exits with a one-line message."""
        try:
            return UserStore(self.users, self.mode)
        except (OSError, ValueError) as e:
            fail(f"cannot read users file {self.users}: {e} (write it with `callbench gen-users`)")


def parse_args(description: str, version: str) -> ServeArgs:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--port", type=int, default=8080, help="port to listen on; 0 picks a free one")
    parser.add_argument("--workers", type=int, default=1, help="processes that serve calls")
    parser.add_argument(
        "--mode",
        type=Mode,
        default=Mode.PRELOADED,
        choices=list(Mode),
        help="how auth finds users: preloaded, or per-request (read and parsed every call)",
    )
    parser.add_argument("--users", default="users.json", help="the users file written by `callbench gen-users`")
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve TLS 1.2/1.3 with a self-signed certificate for localhost made at start "
        "(SHA-256 fingerprint on stderr)",
    )
    parser.add_argument("--version", action="version", version=version)
    args = parser.parse_args()
    if not 1 <= args.workers <= 1024:
        parser.error("--workers must be in 1..1024")
    return ServeArgs(args.host, args.port, args.workers, args.mode, args.users, args.tls)


def host_port(host: str, port: int) -> str:
    """`host:port`, with brackets around an IPv6 host."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def announce(host: str, port: int) -> None:
    """The line the harness waits for: `listening on HOST:PORT`."""
    print(f"listening on {host_port(host, port)}", flush=True)


def fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)
