"""`python -m callbench_fastapi --port P --workers N --mode M --users PATH`: serves the app with uvicorn.

One worker: a single uvicorn process serving on the socket bound here. N workers: uvicorn's own supervisor
(`Multiprocess`, as `uvicorn --workers N`) with N worker processes sharing that socket.
"""

import functools
import signal
import sys
from importlib.metadata import version

import uvicorn
from uvicorn.supervisors import Multiprocess

from callbench_shared import serving, tls

from .app import create_app

# Seconds a worker has to start serving before the supervisor gives up announcing.
WORKER_START_TIMEOUT = 60


class Server(uvicorn.Server):
    """uvicorn's server, announcing the address once it accepts connections."""

    def __init__(self, config: uvicorn.Config, host: str, port: int) -> None:
        super().__init__(config)
        self.address = (host, port)

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started:
            serving.announce(*self.address)


class Supervisor(Multiprocess):
    """uvicorn's worker supervisor, announcing the address once every worker serves."""

    def __init__(self, config: uvicorn.Config, sockets, host: str, port: int) -> None:
        super().__init__(config, sockets)
        self.address = (host, port)

    def init_processes(self) -> None:
        super().init_processes()
        if all(p.wait_until_ready(WORKER_START_TIMEOUT, self.should_exit) for p in self.processes):
            serving.announce(*self.address)


def main() -> None:
    args = serving.parse_args(
        "REST/JSON server of the callbench contract on FastAPI and uvicorn",
        f"callbench-fastapi (FastAPI {version('fastapi')}, uvicorn {version('uvicorn')})",
    )
    args.open_users()  # a bad users file fails here, once, with a one-line message
    if args.tls:
        with tls.PemFiles(tls.self_signed()) as pem:
            run(args, pem)
    else:
        run(args, None)


def run(args: serving.ServeArgs, pem: tls.PemFiles | None) -> None:
    config = uvicorn.Config(
        functools.partial(create_app, args.users, args.mode),
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        loop="uvloop",
        http="httptools",
        lifespan="off",  # nothing to start or stop
        access_log=False,
        log_level="warning",
        proxy_headers=False,  # no proxy in front: X-Forwarded-* are not trusted, nor parsed
        # SIGTERM: open calls get at most one second, idle keep-alive connections are closed at once.
        timeout_graceful_shutdown=1,
        # --tls: every worker loads the files (Python's ssl module: TLS 1.2 and 1.3, no ALPN: uvicorn serves
        # HTTP/1.1 only). uvicorn's default cipher string ("TLSv1") would leave TLS 1.2 only CBC-SHA1 suites,
        # which modern clients (rustls) do not offer: the AEAD suites, as the Rust and Go servers serve them.
        ssl_certfile=pem.cert if pem else None,
        ssl_keyfile=pem.key if pem else None,
        ssl_ciphers="ECDHE+AESGCM:ECDHE+CHACHA20",
    )
    sock = config.bind_socket()  # bound once here (port 0 included), shared by the workers
    port = sock.getsockname()[1]
    if args.workers == 1:
        # uvicorn re-raises the SIGINT/SIGTERM it stopped on once it is done; exit 0 then.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, frame: sys.exit(0))
        Server(config, args.host, port).run(sockets=[sock])
    else:
        Supervisor(config, [sock], args.host, port).run()


if __name__ == "__main__":
    main()
