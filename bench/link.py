#!/usr/bin/env python3
"""What the emulated link itself costs: callbench load against rust-actix directly on loopback (A) and across
`callbench serve --network rtt=0` (B), interleaved A B A B, the server pinned to one CPU and the client to another
(the link's forwarder runs beside the server: `serve` and what it starts inherit its CPU).

    sequential  auth, one call at a time:   the latency the link adds (p50 and mean, µs)
    closed-50   students, 50 in flight:     throughput through the link, packets/s, the forwarder's CPU share

Python 3.11 standard library only; needs root (the link makes network namespaces). Every process it starts is
in its own process group and stopped on exit, Ctrl-C or an error; every run is bounded in time. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALLBENCH = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "callbench"
LIVE: list[subprocess.Popen] = []

CASES = {
    "sequential": ["-c", "1", "--workload", "auth"],
    "closed-50": ["-c", "50", "--workload", "students"],
}


def stop_all():
    for p in LIVE:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    LIVE.clear()


def start(argv, **kw) -> subprocess.Popen:
    p = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, **kw)
    LIVE.append(p)
    return p


def load_args(case: str, seconds: float, target: str) -> list[str]:
    return [str(CALLBENCH), "load", "-q", "-o", "json", "-z", f"{seconds}s", "--warmup", "0.5s", *CASES[case], target]


def direct(case: str, seconds: float, a) -> dict:
    """The server on loopback, the client beside it: the baseline."""
    server = start(
        ["taskset", "-c", a.server_cpu, str(CALLBENCH), "serve", "rust-actix", "--no-build"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None  # stderr=PIPE
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            if not line:
                raise RuntimeError("rust-actix ended before it was ready")
            m = re.search(r"ready at (http://\S+)", line)
            url = m.group(1) if m else None
        if url is None:
            raise RuntimeError("rust-actix was not ready within 60 s")
        out = subprocess.run(
            ["taskset", "-c", a.client_cpu, *load_args(case, seconds, url)],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=True,
        ).stdout
        return {"load": json.loads(out)}
    finally:
        stop_all()


def across(case: str, seconds: float, a) -> dict:
    """The same load from the link's client side (`serve --network rtt=0 -- load`)."""
    script = f'exec taskset -c {a.client_cpu} "$@" "$CALLBENCH_TARGET"'
    argv = [
        "taskset",
        "-c",
        a.server_cpu,
        str(CALLBENCH),
        "serve",
        "rust-actix",
        "--no-build",
        "--network",
        "rtt=0",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        *load_args(case, seconds, "")[:-1],
    ]
    p = start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=seconds + 90)
    finally:
        stop_all()
    if p.returncode != 0:
        raise RuntimeError(f"serve --network exited {p.returncode}: {err.strip()[-400:]}")
    m = re.search(r"carried (\d+) packets up .* and (\d+) down .*forwarder used ([\d.]+)% of a CPU", err)
    if not m:
        raise RuntimeError(f"no link statistics in: {err.strip()[-400:]}")
    return {"load": json.loads(out), "packets": int(m.group(1)) + int(m.group(2)), "forwarder": float(m.group(3))}


def figures(run: dict) -> dict:
    load = run["load"]
    f = {
        "p50_us": load["latency_us"]["p50"],
        "mean_us": load["latency_us"]["mean"],
        "calls_per_s": load["throughput_per_s"],
    }
    if "packets" in run:
        f["packets"] = run["packets"]
        f["forwarder_pct"] = run["forwarder"]
    return f


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--quick", action="store_true", help="2 repetitions of 2 s")
    ap.add_argument("--client-cpu", default="0")
    ap.add_argument("--server-cpu", default="1")
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.seconds = 2, 2.0
    if os.geteuid() != 0:
        print("bench/link.py: the link needs root (network namespaces, TUN devices)", file=sys.stderr)
        return 2
    if not CALLBENCH.exists():
        print(
            f"bench/link.py: {CALLBENCH} is missing: run ./callbench once (or cargo build --release)", file=sys.stderr
        )
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    rows: dict[str, dict[str, list[dict]]] = {}
    try:
        for case in CASES:
            rows[case] = {"direct": [], "link": []}
            for rep in range(a.reps):
                for side, fn in (("direct", direct), ("link", across)):
                    f = figures(fn(case, a.seconds, a))
                    rows[case][side].append(f)
                    print(
                        f"{case} rep {rep + 1}/{a.reps} {side}: " + ", ".join(f"{k} {v:,.1f}" for k, v in f.items()),
                        file=sys.stderr,
                    )
    except KeyboardInterrupt:
        print("bench/link.py: interrupted", file=sys.stderr)
        return 130
    finally:
        stop_all()
    med = lambda side, key: statistics.median(r[key] for r in side)  # noqa: E731
    lines = [
        f"# The emulated link's own cost ({dt.date.today()}, {a.reps} × {a.seconds:g} s, interleaved; client CPU "
        f"{a.client_cpu}, server and forwarder CPU {a.server_cpu}; medians)",
        "",
        "| case | direct p50 µs | link p50 µs | added µs (mean) | direct calls/s | link calls/s | packets/s "
        "(warm-up included) | forwarder CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case, r in rows.items():
        d, linked = r["direct"], r["link"]
        added = med(linked, "mean_us") - med(d, "mean_us")
        pps = statistics.median(x["packets"] / (a.seconds + 0.5) for x in linked)
        lines.append(
            f"| {case} | {med(d, 'p50_us'):,.0f} | {med(linked, 'p50_us'):,.0f} | {added:+,.1f} | "
            f"{med(d, 'calls_per_s'):,.0f} | {med(linked, 'calls_per_s'):,.0f} | {pps:,.0f} | "
            f"{med(linked, 'forwarder_pct'):.0f}% |"
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
