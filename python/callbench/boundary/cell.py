"""`python -m callbench.boundary.cell`: one repetition of one boundary cell, for `callbench run`.

`callbench run` starts, pins and verifies the servers of a `kind = "python"` experiment, then runs this
once per repetition of each cell (pinned to the client CPUs): untimed warm-up calls, `--calls` timed
calls with the answers checked, and one JSON object on stdout: the repetition's metrics in the
results.json `RunMetrics` shape and the per-call µs (over the wire only). Errors: one line on stderr
and exit status 1 (2 for bad arguments)."""

from __future__ import annotations

import argparse
import json
import sys

from . import measure, plan

WORKLOADS = {"noop": "noop", "life-setup": "setup", "life": "step", "auth": "auth", "echo": "echo"}
MECHANISMS = ("pyo3", "python", "requests", "requests-nosession", "httpx", "grpcio")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m callbench.boundary.cell", description=__doc__)
    p.add_argument("--mechanism", required=True, choices=MECHANISMS)
    p.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    p.add_argument("--ntimes", type=int, default=1, help="generations per step call (workload life)")
    p.add_argument("--calls", type=int, required=True, help="timed calls")
    p.add_argument("--warmup-calls", type=int, default=20, help="untimed calls first (default 20)")
    p.add_argument("--address", help="host:port of the server (over the wire)")
    p.add_argument("--server-pid", type=int, help="the server's pid: its CPU time and socket bytes are read")
    p.add_argument("--users", help="users.json for auth in-process")
    a = p.parse_args(argv)
    if not 1 <= a.calls <= 100_000_000:
        p.error("--calls must be in 1..100000000")
    if not 0 <= a.warmup_calls <= 1_000_000:
        p.error("--warmup-calls must be in 0..1000000")
    if not 1 <= a.ntimes <= 1000:
        p.error("--ntimes must be in 1..1000")
    wire = a.mechanism not in ("pyo3", "python")
    if wire and not a.address:
        p.error(f"--address is needed for {a.mechanism}")
    if not wire and a.workload == "auth" and not a.users:
        p.error("--users is needed for auth in-process")
    return a


def target(a: argparse.Namespace) -> plan.Target:
    from ..clients import connect

    if a.mechanism in ("pyo3", "python"):
        return plan.inproc_target(a.mechanism, a.users)
    return plan.Target(connect(a.mechanism, a.address), None)


def run(a: argparse.Namespace) -> dict:
    experiment = WORKLOADS[a.workload]
    ntimes = a.ntimes if experiment == "step" else None
    op = plan.Operation(experiment, "noop" if experiment == "noop" else a.workload.split("-")[0], a.calls, ntimes)
    t = target(a)
    try:
        call, _ = plan.repetition_call(op, t)
        for _ in range(a.warmup_calls):  # opens the connection, fills caches, checks the path once
            call()
        # The check needs fresh state: the step's board must start from the acorn.
        call, check = plan.repetition_call(op, t)
        # Socket bytes are read from the server's established connections: none outlive a call
        # without a Session, so those calls report no wire bytes rather than wrong ones.
        port = int(a.address.rsplit(":", 1)[1]) if a.address and a.mechanism != "requests-nosession" else None
        metrics, samples = measure.run(call, a.calls, a.mechanism not in ("pyo3", "python"), a.server_pid, port)
        problem = check()
    finally:
        close = getattr(t.impl, "close", None)
        if close:
            close()
    if problem:
        raise RuntimeError(problem)
    return {"metrics": metrics, "samples_us": samples}


def main(argv: list[str] | None = None) -> int:
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        out = run(a)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a failed call: the runner records the cell's error
        print(f"callbench: {a.mechanism} {a.workload}: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 1
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
