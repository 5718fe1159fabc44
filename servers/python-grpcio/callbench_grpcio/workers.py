"""`--workers N` with N > 1: N processes, each with its own grpc.aio server, sharing the port (SO_REUSEPORT).

grpcio's asyncio server runs on one event loop, so one process is its unit of parallelism; grpc's own
multiprocessing example does the same: a port reserved with SO_REUSEPORT, then processes that each bind it.
The workers are spawned, not forked: grpc core must not be forked once it runs. The kernel spreads new
connections over the workers; this process only supervises.
"""

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import threading
import time
from contextlib import contextmanager

from callbench_shared import serving, tls

from .server import serve

# Seconds the workers have to start serving.
START_TIMEOUT = 60
# Seconds a worker has to stop once told to, before it is killed.
STOP_TIMEOUT = 5


def run(args: serving.ServeArgs, pem: tls.Pem | None) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())
    context = multiprocessing.get_context("spawn")
    with reserve_port(args.host, args.port) as port:
        ready = context.SimpleQueue()
        workers = [context.Process(target=worker, args=(args, port, ready, pem)) for _ in range(args.workers)]
        for process in workers:
            process.start()
        if wait_ready(workers, ready, stop):
            serving.announce(args.host, port)
            # Until a signal, or until a worker ends by itself (then the others are stopped too).
            while not stop.is_set() and all(p.is_alive() for p in workers):
                multiprocessing.connection.wait([p.sentinel for p in workers], timeout=0.2)
        for process in workers:
            process.terminate()
        for process in workers:
            process.join(STOP_TIMEOUT)
            if process.is_alive():
                process.kill()
                process.join()
    if not stop.is_set():
        serving.fail("a worker process ended on its own")


def worker(args: serving.ServeArgs, port: int, ready, pem: tls.Pem | None) -> None:
    users = args.open_users()
    asyncio.run(serve(args, users, port, reuse_port=True, on_ready=lambda _: ready.put(os.getpid()), pem=pem))


def wait_ready(workers: list, ready, stop: threading.Event) -> bool:
    """True once every worker serves; False on a signal, a worker's death or the timeout."""
    deadline = time.monotonic() + START_TIMEOUT
    started = 0
    while started < len(workers):
        if stop.is_set() or time.monotonic() > deadline or not all(p.is_alive() for p in workers):
            return False
        if ready.empty():
            stop.wait(0.1)
        else:
            ready.get()
            started += 1
    return True


@contextmanager
def reserve_port(host: str, port: int):
    """Binds host:port with SO_REUSEPORT (port 0: a free one) without listening, so the port stays ours while
    the workers bind it too; yields the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            serving.fail(f"cannot listen on {serving.host_port(host, port)}: {e}")
        yield sock.getsockname()[1]
