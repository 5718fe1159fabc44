"""One repetition of one cell: a timed loop (timeit-style, garbage collector off) with the client's CPU,
per-call latencies where a call is long enough to time alone, the server's CPU, peak RSS and socket
bytes from /proc, and (given the pinned CPUs) what else used those CPUs during the loop."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import _native


@dataclass
class ServerSample:
    cpu_s: float
    read_bytes: int | None
    written_bytes: int | None


def server_sample(pid: int | None, port: int | None) -> ServerSample | None:
    """The server's CPU time (every thread's, from schedstat: ns resolution, not 10 ms ticks) and the
    TCP payload bytes its connections on `port` received and sent (tcp_info through `ss`)."""
    if not pid:
        return None
    try:
        cpu_ns = sum(int((t / "schedstat").read_text().split()[0]) for t in Path(f"/proc/{pid}/task").iterdir())
    except (OSError, ValueError, IndexError):
        return None
    received, sent = socket_bytes(port) if port else (None, None)
    return ServerSample(cpu_ns / 1e9, received, sent)


def socket_bytes(port: int) -> tuple[int | None, int | None]:
    """Bytes received and sent by the established TCP connections whose local port is `port`."""
    try:
        out = subprocess.run(
            ["ss", "-tinH", "state", "established", f"( sport = :{port} )"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    received = sum(int(v) for v in re.findall(r"\bbytes_received:(\d+)", out))
    sent = sum(int(v) for v in re.findall(r"\bbytes_acked:(\d+)", out))
    return received, sent


def peak_rss_kib(pid: int | None) -> int | None:
    if not pid:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def percentile(sorted_us: list[float], q: float) -> float:
    return sorted_us[min(len(sorted_us) - 1, int(q * len(sorted_us)))]


Sides = tuple[list[int], list[int]]


def run(
    call: Callable[[], object],
    loops: int,
    per_call: bool,
    server_pid: int | None,
    port: int | None,
    sides: Sides | None = None,
) -> tuple[dict, list[float]]:
    """`loops` calls of `call`; returns the run's metrics (results.json `RunMetrics`) and the per-call µs.
    With `sides` (the client's and the server's CPUs; no server CPUs in-process) the metrics hold the
    loop's `interference` and, when others took a meaningful share of those CPUs, why it was `disturbed`."""
    before = server_sample(server_pid, port)
    pids = [server_pid] if server_pid and sides and sides[1] else []
    gc_was = gc.isenabled()
    gc.disable()
    samples: list[float] = []
    try:
        machine0 = _native.machine_snapshot(pids) if sides else None
        cpu0, t0 = time.process_time(), time.perf_counter()
        if per_call:
            clock = time.perf_counter_ns
            for _ in range(loops):
                began = clock()
                call()
                samples.append((clock() - began) / 1000.0)
        else:
            for _ in range(loops):
                call()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        machine1 = _native.machine_snapshot(pids) if sides else None
    finally:
        if gc_was:
            gc.enable()
    after = server_sample(server_pid, port)
    metrics: dict = {
        "calls_ok": loops,
        "calls_errors": 0,
        "errors": {},
        "duration_s": wall,
        "throughput_per_s": loops / wall if wall > 0 else 0.0,
        "latency_us": None,
        "latency_uncorrected_us": None,
        "rate_requested": None,
        "rate_achieved": None,
        "connections_opened": 0,
        "connect_p50_us": None,
        "wire_sent_per_call": 0.0,
        "wire_received_per_call": 0.0,
        "payload_sent_per_call": 0.0,
        "payload_received_per_call": 0.0,
        "client_cpu_us_per_call": cpu * 1e6 / loops,
        "client_cpu_cores": cpu / wall if wall > 0 else 0.0,
        "server_cpu_us_per_call": None,
        "server_cpu_cores": None,
        "server_rss_peak_kib": None,
    }
    if sides and machine0 and machine1:
        metrics.update(json.loads(_native.interference_between(machine0, machine1, sides[0], sides[1], loops)))
    if samples:
        s = sorted(samples)
        metrics["latency_us"] = {
            "p50": percentile(s, 0.5),
            "p90": percentile(s, 0.9),
            "p99": percentile(s, 0.99),
            "p99.9": percentile(s, 0.999),
            "max": s[-1],
            "mean": sum(s) / len(s),
        }
    if before and after:
        server_cpu = after.cpu_s - before.cpu_s
        read0, read1 = before.read_bytes, after.read_bytes
        written0, written1 = before.written_bytes, after.written_bytes
        if read0 is not None and read1 is not None and written0 is not None and written1 is not None:
            # What the server received is what the client sent, and the other way round.
            metrics["wire_sent_per_call"] = (read1 - read0) / loops
            metrics["wire_received_per_call"] = (written1 - written0) / loops
        metrics["server_cpu_us_per_call"] = server_cpu * 1e6 / loops
        metrics["server_cpu_cores"] = server_cpu / wall if wall > 0 else 0.0
        metrics["server_rss_peak_kib"] = peak_rss_kib(server_pid)
    return metrics, samples
