"""One grpc.aio server: the contract's services, health and reflection, the 4 MiB limit, gzip."""

import asyncio
import signal
from collections.abc import Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from callbench_shared import serving, tls
from callbench_shared.auth import UserStore
from callbench_shared.limits import MAX_BODY_BYTES

from .services import SERVICE_NAMES, add_services
from .symbols import MethodAwarePool

# GRPC_COMPRESS_LEVEL_LOW: grpc core picks, among the algorithms the client lists in grpc-accept-encoding, the
# first of gzip, deflate; a client that accepts neither gets uncompressed replies. (grpcio's `compression=`
# argument sets an algorithm instead, used whatever the client accepts.)
COMPRESSION_LEVEL_LOW = 1


def server_options(reuse_port: bool) -> list[tuple[str, int]]:
    return [
        # Exactly 4 MiB passes, more is RESOURCE_EXHAUSTED (grpcio's default, made explicit); for a gzip
        # message, grpc core applies it to the inflated size too.
        ("grpc.max_receive_message_length", MAX_BODY_BYTES),
        ("grpc.default_compression_level", COMPRESSION_LEVEL_LOW),
        # On only when several processes share the port (grpc core's default is on: a port in use would not fail).
        ("grpc.so_reuseport", int(reuse_port)),
    ]


async def serve(
    args: serving.ServeArgs,
    users: UserStore,
    port: int,
    reuse_port: bool,
    on_ready: Callable[[int], None],
    pem: tls.Pem | None = None,
) -> None:
    """Serves on host:port until SIGINT or SIGTERM (over TLS with `pem`); `on_ready(port)` once it accepts calls."""
    server = grpc.aio.server(options=server_options(reuse_port))
    add_services(server, users)
    await add_health(server)
    reflection.enable_server_reflection(
        SERVICE_NAMES + (health.SERVICE_NAME, reflection.SERVICE_NAME), server, pool=MethodAwarePool()
    )
    try:
        address = serving.host_port(args.host, port)
        if pem is None:
            bound = server.add_insecure_port(address)
        else:
            # grpc core's own TLS (BoringSSL): TLS 1.2 and 1.3, ALPN h2.
            bound = server.add_secure_port(address, grpc.ssl_server_credentials([(pem.key, pem.cert)]))
    except RuntimeError as e:
        serving.fail(f"cannot listen on {serving.host_port(args.host, port)}: {e}")
    await server.start()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    on_ready(bound)
    await stop.wait()
    # Open calls get at most one second.
    await server.stop(grace=1)


async def add_health(server: grpc.aio.Server) -> None:
    """grpc.health.v1.Health: the server ("") and every callbench.v1 service SERVING."""
    servicer = health.aio.HealthServicer()
    for name in ("",) + SERVICE_NAMES:
        await servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
