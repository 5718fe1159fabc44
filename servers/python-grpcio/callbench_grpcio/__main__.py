"""`python -m callbench_grpcio --port P --workers N --mode M --users PATH`: the gRPC server.

One worker: one process, one grpc.aio server. N workers: see workers.py.
"""

import asyncio
from importlib.metadata import version

from callbench_shared import serving, tls

from . import workers
from .server import serve


def main() -> None:
    args = serving.parse_args(
        "gRPC server of the callbench contract on grpcio (grpc.aio)",
        f"callbench-grpcio (grpcio {version('grpcio')}, protobuf {version('protobuf')})",
    )
    users = args.open_users()  # a bad users file fails here, once, with a one-line message
    pem = tls.self_signed() if args.tls else None  # one certificate, served by every worker
    if args.workers == 1:
        asyncio.run(
            serve(
                args,
                users,
                args.port,
                reuse_port=False,
                on_ready=lambda port: serving.announce(args.host, port),
                pem=pem,
            )
        )
    else:
        workers.run(args, pem)


if __name__ == "__main__":
    main()
