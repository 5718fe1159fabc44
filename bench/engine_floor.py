"""The floor under the tools bench/engine.py compares: `callbench-floor` (bench/floor) makes the same calls with
nothing on top — for HTTP/1.1 it writes the request's bytes and waits for as many answer bytes as the server's
answer has, no parsing, no timers; for HTTP/2 and gRPC it writes callbench's own frames and reads only the answer's
frame heads; for HTTP/3 it sends a HEADERS frame prepared once on a new QUIC stream per call and reads the answer's
stream to its end, quinn with nothing on top; for raw TCP it ping-pongs 64 bytes with raw-echo (servers/raw-echo).
What a tool costs beyond the floor is its own work; the floor itself is the kernel's (epoll, or io_uring with
`floor-uring`), and for HTTP/3 quinn's too."""

from __future__ import annotations

import json
import re
import socket

from engine_report import med

FLOOR_TOOLS = ("floor", "floor-uring")
# io_uring as it is cheapest here (bench/floor): one multishot receive per connection into provided buffers, and
# completions run only when the client enters the ring (SINGLE_ISSUER + DEFER_TASKRUN).
URING = "uring-multishot-defer"
RAW_SIZE = 64


def http_request(path: str) -> str:
    """The request callbench-floor sends, escaped as its --request takes it."""
    return f"GET {path} HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n"


def http_answer_size(port: int, path: str, timeout: float = 5.0) -> int:
    """Bytes of the server's whole answer to the floor's request, read twice on one kept connection: the floor
    counts bytes, so the answer must be the same size every time (a Date header keeps its length)."""
    raw = http_request(path).replace("\\r", "\r").replace("\\n", "\n").encode()
    sizes = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        for _ in range(2):
            s.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    raise RuntimeError("the server closed the connection before answering")
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"the server answered {head.splitlines()[0]!r}")
            m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
            if not m:
                raise RuntimeError("the answer has no Content-Length: the floor cannot count its bytes")
            length = int(m.group(1))
            while len(body) < length:
                chunk = s.recv(65536)
                if not chunk:
                    raise RuntimeError("the server closed the connection mid-answer")
                body += chunk
            if len(body) != length:
                raise RuntimeError("the server sent more than one answer's bytes")
            sizes.append(len(head) + 4 + length)
    if sizes[0] != sizes[1]:
        raise RuntimeError(f"answers of {sizes[0]} and {sizes[1]} bytes: the floor needs a fixed size")
    return sizes[0]


def http_commands(floor_bin: str, path: str, concurrency: int) -> dict:
    """tool -> function(port, seconds) -> argv, for the HTTP/1.1 case (PORT: the command as the report shows it)."""
    sizes: dict = {}

    def command(io):
        def argv(port, secs):
            if port == "PORT":
                size = "SIZE"
            else:
                size = sizes.setdefault(port, http_answer_size(port, path))
            return [
                floor_bin,
                "client",
                f"127.0.0.1:{port}",
                "--io",
                io,
                "-c",
                str(concurrency),
                "-z",
                str(secs),
                "--warmup",
                "0",
                "--size",
                str(size),
                "--request",
                http_request(path),
            ]

        return argv

    return {"floor": command("epoll"), "floor-uring": command(URING)}


def h2_commands(floor_bin: str, flag: str, connections: int, calls: int) -> dict:
    """The HTTP/2, gRPC or HTTP/3 floor (`flag`: `--http2=PATH`, `--grpc=METHOD` or `--http3=PATH`): the request
    prepared once, `calls` in flight shared by the connections, and nothing on top (bench/floor/src/h2_client.rs,
    h3_client.rs)."""
    streams = -(-calls // connections)
    return {
        "floor": lambda port, secs: [
            floor_bin,
            "client",
            f"127.0.0.1:{port}",
            "-c",
            str(connections),
            "--streams",
            str(streams),
            "-z",
            str(secs),
            "--warmup",
            "0",
            flag,
        ]
    }


def raw_commands(floor_bin: str, concurrency: int, cb: str | None) -> dict:
    """The raw TCP case: callbench's `raw://` target (when `cb` is given) and the floor clients, at `concurrency`
    connections and at one call at a time, against raw-echo."""

    def command(io, c):
        return lambda port, secs: [
            floor_bin,
            "client",
            f"127.0.0.1:{port}",
            "--io",
            io,
            "-c",
            str(c),
            "-z",
            str(secs),
            "--warmup",
            "0",
            "--size",
            str(RAW_SIZE),
        ]

    def callbench(c):
        return lambda port, secs: [
            cb,
            "load",
            "-c",
            str(c),
            "-z",
            f"{secs}s",
            "--threads",
            "1",
            "-o",
            "json",
            "-q",
            f"raw://127.0.0.1:{port}?size={RAW_SIZE}",
        ]

    out = {"callbench": callbench(concurrency), "callbench c=1": callbench(1)} if cb else {}
    out.update(
        {
            "floor": command("epoll", concurrency),
            "floor-uring": command(URING, concurrency),
            "floor c=1": command("epoll", 1),
            "floor-uring c=1": command(URING, 1),
        }
    )
    return out


def parse_floor(text: str) -> dict:
    d = json.loads(text.strip().splitlines()[-1])
    return {
        "ok": int(d["calls"]),
        "errors": 0,
        "seconds": float(d["seconds"]),
        "p50_us": d.get("p50_us"),
        "self_cpu_us": d.get("client_cpu_us_per_call"),
    }


# One call at a time, callbench against the raw ping-pong on the same echo: (CPU per call, p50 latency) at most.
ONE_AT_A_TIME_TARGETS = (1.2, 1.3)


def one_at_a_time(rows):
    """(CPU ratio, latency ratio) of `callbench c=1` over `floor c=1` in the raw TCP case, or None."""
    by = {(r.protocol, r.tool): r for r in rows}
    cb, floor = by.get(("raw TCP", "callbench c=1")), by.get(("raw TCP", "floor c=1"))
    if not cb or not floor or not cb.good or not floor.good:
        return None
    p50 = lambda row: med([r.extra.get("p50_us") for r in row.good if r.extra.get("p50_us") is not None])  # noqa: E731
    return cb.cpu_us / floor.cpu_us, p50(cb) / p50(floor)


def over_floor(rows) -> list:
    """(protocol, tool, CPU per call ÷ the epoll floor's) for every tool measured beside a floor."""
    by = {(r.protocol, r.tool): r for r in rows}
    out = []
    for (protocol, tool), row in by.items():
        floor = by.get((protocol, "floor"))
        if tool == "floor" or not floor or not floor.good or not row.good or "c=1" in tool:
            continue
        out.append((protocol, tool, row.cpu_us / floor.cpu_us))
    return out
