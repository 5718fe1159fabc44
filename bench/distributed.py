#!/usr/bin/env python3
"""One Ray worker against two sharing the same open-loop rate: does splitting a load change what the server sees?

`callbench lab` makes four hosts on one bridge (head, node1, node2, server: network namespaces, 198.18.1.N); a
Ray head and two worker nodes run in the first three, pinned to CPU 0; rust-axum in the fourth, pinned to CPU 1,
counting the calls it answers. `python -m callbench.distributed --workers 1` and `--workers 2` alternate, A B A B,
at the same rate. For each run:

    server calls/s   the server's own count over the middle 80% of the span in which it answered calls
    p50, p99         the merged latency (the workers' HDR histograms added), µs
    client CPU/call  all workers' CPU over all calls, µs

Both configurations share client CPU 0 here (this machine has 2 cores): what it shows is that the split itself
costs nothing and changes nothing, not that two machines go further than one. Open-loop calls start on the
runtime's 1 ms timer (`--coarse-timer`) in both: the default precise timer spins between calls, and two spinning
workers on one core would measure their contention, not the split.

Run with the Python that has the package and Ray (`scripts/test-python` makes target/python-venv); needs root.
Every process is in a process group of its own and stopped on exit, Ctrl-C or an error. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Cargo's target directory, as callbench finds it ($CARGO_TARGET_DIR, relative to the checkout).
TARGET = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")
CALLBENCH = TARGET / "release" / "callbench"
VENV_PYTHON = TARGET / "python-venv" / "bin" / "python"
HOSTS = ["head", "node1", "node2", "server"]
# Each process group started, with the signal that ends it (Ray nodes are killed: never `ray stop`).
LIVE: list[tuple[subprocess.Popen, signal.Signals]] = []
ENV = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")


def stop_all() -> None:
    """Every process group this script started, newest first (Ray nodes before the lab they live in)."""
    for p, first in reversed(LIVE):
        for sig in (first, signal.SIGKILL):
            if p.poll() is not None:
                break
            try:
                os.killpg(p.pid, sig)
                p.wait(timeout=10)
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
    LIVE.clear()


def start(argv: list[str], stop: signal.Signals = signal.SIGTERM, **kw) -> subprocess.Popen:
    kw.setdefault("env", ENV)
    p = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, **kw)
    LIVE.append((p, stop))
    return p


def netns(ns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def wait_for(what: str, check, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


class Counter:
    """The server's count of calls answered (CALLBENCH_ANSWERED_FILE), sampled every 10 ms while a run goes on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def read(self) -> int:
        data = self.path.read_bytes()[:8] if self.path.exists() else b""
        return struct.unpack("<Q", data)[0] if len(data) == 8 else 0

    def __enter__(self) -> Counter:
        self.samples = []
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), self.read()))
            time.sleep(0.01)

    def rate(self) -> tuple[float, int]:
        """Calls/s over the middle 80% of the span from the first to the last call answered, and the calls."""
        first, last = self.samples[0][1], self.samples[-1][1]
        moving = [(t, n) for t, n in self.samples if first < n]
        if not moving:
            return 0.0, 0
        t0 = moving[0][0]
        t1 = next(t for t, n in self.samples if n == last)
        a, b = t0 + 0.1 * (t1 - t0), t0 + 0.9 * (t1 - t0)
        at = lambda t: max((s for s in self.samples if s[0] <= t), key=lambda s: s[0])  # noqa: E731
        (ta, na), (tb, nb) = at(a), at(b)
        return ((nb - na) / (tb - ta) if tb > ta else 0.0), last - first


def cluster_up(a, lab, temp: Path) -> tuple[dict[str, tuple[str, str]], str, Path, str]:
    """The Ray cluster in the lab and the server: hosts, the head's address, the server's counter file and its
    address."""
    from callbench.distributed import alive_nodes

    hosts = lab.hosts
    ray = str(VENV_PYTHON.with_name("ray"))
    address = f"{hosts['head'][1]}:6379"
    common = ["--temp-dir", str(temp), "--object-store-memory", "100000000", "--disable-usage-stats"]
    pin = ["taskset", "-c", a.client_cpu]
    log = open(temp / "nodes.log", "w")
    start(
        netns(
            hosts["head"][0],
            pin
            + [
                ray,
                "start",
                "--block",
                "--head",
                "--port",
                "6379",
                "--num-cpus",
                "0",
                "--include-dashboard",
                "false",
                "--node-ip-address",
                hosts["head"][1],
                *common,
            ],
        ),
        signal.SIGKILL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    for i, node in enumerate(("node1", "node2")):
        wait_for(f"{i + 1} Ray node(s)", lambda: alive_nodes(address, hosts["head"][0]) >= i + 1)  # noqa: B023 - waited for here
        start(
            netns(
                hosts[node][0],
                pin
                + [
                    ray,
                    "start",
                    "--block",
                    "--address",
                    address,
                    "--num-cpus",
                    "1",
                    "--node-ip-address",
                    hosts[node][1],
                    *common,
                ],
            ),
            signal.SIGKILL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    wait_for("3 Ray nodes", lambda: alive_nodes(address, hosts["head"][0]) >= 3)
    counter = temp / "answered"
    server = start(
        netns(
            hosts["server"][0],
            [
                "taskset",
                "-c",
                a.server_cpu,
                str(CALLBENCH),
                "serve",
                "rust-axum",
                "--no-build",
                "--host",
                hosts["server"][1],
            ],
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(ENV, CALLBENCH_ANSWERED_FILE=str(counter)),
    )
    stderr = server.stderr
    assert stderr is not None  # stderr=PIPE
    while True:
        line = stderr.readline()
        if not line:
            raise RuntimeError("rust-axum ended before it was ready")
        if "ready at " in line:
            url = line.split("ready at ")[1].split()[0]
            break
    threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()
    return hosts, address, counter, url.replace("http://", "")


def one_run(workers: int, hosts, address: str, target: str, counter: Counter, a) -> dict:
    out = counter.path.with_name(f"result-{workers}.json")
    argv = netns(
        hosts["head"][0],
        [
            str(VENV_PYTHON),
            "-m",
            "callbench.distributed",
            "--address",
            address,
            "--workers",
            str(workers),
            "--quiet",
            "--out",
            str(out),
            f"http://{target}/",
            "--workload",
            "students",
            "--rate",
            str(a.rate),
            "-z",
            f"{a.seconds}s",
            "--warmup",
            "1s",
            "--coarse-timer",
        ],
    )
    with counter:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=a.seconds + 120, env=ENV)
    if not out.exists():
        raise RuntimeError(f"{workers} worker(s): no result ({r.stderr.strip().splitlines()[-1:]})")
    result = json.loads(out.read_text())
    out.unlink()
    m = result["merged"]
    server_rate, answered = counter.rate()
    return {
        "workers": workers,
        "valid": result["valid"],
        "problems": result["problems"] + result["behind_schedule"],
        "server_per_s": server_rate,
        "server_answered": answered,
        "calls": m["calls"]["ok"] + m["calls"]["errors"],
        "errors": m["calls"]["errors"],
        "p50_us": m["latency_us"]["p50"],
        "p99_us": m["latency_us"]["p99"],
        "client_cpu_us_per_call": m["client_cpu_us_per_call"],
        "skew_ms": result["start_skew_ms"],
    }


METRICS = [
    ("server calls/s", "server_per_s", "{:.1f}"),
    ("p50 µs", "p50_us", "{:.0f}"),
    ("p99 µs", "p99_us", "{:.0f}"),
    ("client CPU µs/call", "client_cpu_us_per_call", "{:.1f}"),
]


def markdown(runs: list[dict], a) -> str:
    one = [r for r in runs if r["workers"] == 1]
    two = [r for r in runs if r["workers"] == 2]
    lines = [
        f"# One Ray worker vs two sharing {a.rate} calls/s ({dt.date.today()})",
        "",
        f"{a.reps} interleaved pairs of {a.seconds} s (after 1 s of warm-up), GET /students on rust-axum "
        f"(CPU {a.server_cpu}); the Ray nodes on CPU {a.client_cpu}; hosts of `callbench lab`. Median "
        "[min – max] of the repetitions; ratio: two / one, median of the pairs' ratios [min – max].",
        "",
        "| | one worker | two workers | two / one |",
        "|---|---|---|---|",
    ]
    for label, key, fmt in METRICS:

        def cell(rs, key=key, fmt=fmt):
            v = [r[key] for r in rs]
            return f"{fmt.format(statistics.median(v))} [{fmt.format(min(v))} – {fmt.format(max(v))}]"

        ratios = [b[key] / x[key] for x, b in zip(one, two, strict=False) if x[key]]
        ratio = f"{statistics.median(ratios):.3f}× [{min(ratios):.3f} – {max(ratios):.3f}]" if ratios else "-"
        lines.append(f"| {label} | {cell(one)} | {cell(two)} | {ratio} |")
    lines += [
        "",
        "Calls the server answered per run: " + ", ".join(f"{r['workers']}w {r['server_answered']}" for r in runs),
        "Start skew of the two-worker runs (ms): " + ", ".join(f"{r['skew_ms']:.3f}" for r in two),
    ]
    problems = [f"{r['workers']} worker(s): {p}" for r in runs for p in r["problems"]]
    lines += ["", "Problems: " + ("; ".join(problems) if problems else "none (every run valid, no worker behind)")]
    return "\n".join(lines) + "\n"


def measure(a, hosts, address: str, target: str, counter: Counter, runs: list[dict]) -> None:
    """A B A B: one worker, then two, `a.reps` times."""
    for rep in range(a.reps):
        for workers in (1, 2):
            r = one_run(workers, hosts, address, target, counter, a)
            print(
                f"rep {rep + 1}, {workers} worker(s): server {r['server_per_s']:.1f}/s, p50 {r['p50_us']} µs, "
                f"p99 {r['p99_us']} µs, client {r['client_cpu_us_per_call']:.1f} µs/call"
                + (f"  ({'; '.join(r['problems'])})" if r["problems"] else ""),
                file=sys.stderr,
            )
            runs.append(r)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=8000)
    parser.add_argument("--quick", action="store_true", help="2 pairs of 3 s")
    parser.add_argument("--client-cpu", default="0")
    parser.add_argument("--server-cpu", default="1")
    parser.add_argument("--markdown", action="store_true", help="the Markdown on stdout only")
    a = parser.parse_args()
    if a.quick:
        a.reps, a.seconds = 2, 3.0
    if os.geteuid() != 0:
        print("bench/distributed.py: needs root (callbench lab makes network namespaces)", file=sys.stderr)
        return 2
    if not VENV_PYTHON.exists() or not CALLBENCH.exists():
        print(
            "bench/distributed.py: build first: cargo build --release, then scripts/test-python (the venv)",
            file=sys.stderr,
        )
        return 2
    try:
        from callbench.lab import Lab
    except ImportError:  # run with the system's Python: go on with the venv's, which has the package and Ray
        if Path(sys.executable) != VENV_PYTHON:
            os.execv(VENV_PYTHON, [str(VENV_PYTHON), __file__, *sys.argv[1:]])
        raise
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    runs: list[dict] = []
    # Ray's socket paths must stay short: a directory of its own directly under /tmp.
    temp = Path(tempfile.mkdtemp(prefix="cbray-", dir="/tmp"))

    try:
        with Lab(str(CALLBENCH), HOSTS) as lab:
            try:
                hosts, address, counter_file, target = cluster_up(a, lab, temp)
                counter = Counter(counter_file)
                measure(a, hosts, address, target, counter, runs)
            finally:
                stop_all()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    text = markdown(runs, a)
    if a.markdown:
        print(text, end="")
    else:
        out = ROOT / "bench" / "results" / f"distributed-{dt.date.today()}.md"
        out.write_text(text)
        print(text, end="")
        print(f"written to {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
