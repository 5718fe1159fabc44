"""`python -m callbench.boundary`: seed 004's table for callbench's workloads. Starts the Rust servers it
needs (through `callbench serve`), pins itself and them to different cores, runs every cell K times
interleaved (measuring again what was disturbed: rounds.py), prints the table and writes results.json,
report.md and report.html."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from .. import _native
from ..clients import connect
from ..servers import Server, find_cli, find_repo, stop_all, stop_on_signals, target_dir
from . import plan, record, table
from .progress import Progress
from .rounds import Rounds


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m callbench.boundary", description=__doc__)
    p.add_argument("--repetitions", "-k", type=int, default=5, help="repetitions of every cell (default 5)")
    p.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiplies the article's call counts (setup ×1000, step 10000/ntimes...); 0.01 for a quick look",
    )
    p.add_argument(
        "--noop-calls",
        type=int,
        default=None,
        help="calls per no-op repetition (default 200,000 in-process, 2,000 over the wire, times --scale)",
    )
    p.add_argument(
        "--only", default="", help="comma-separated mechanisms: pyo3,python,requests,requests-nosession,httpx,grpcio"
    )
    p.add_argument("--experiments", default="", help="comma-separated: noop,setup,step,auth,echo (default all)")
    p.add_argument("--rest-server", default="rust-axum", help="REST server of the checkout (default rust-axum)")
    p.add_argument("--grpc-server", default="rust-tonic", help="gRPC server of the checkout (default rust-tonic)")
    p.add_argument("--out", help="results folder (default results/<timestamp>-boundary in the checkout)")
    p.add_argument("--repo", help="the callbench checkout (default: found from here)")
    p.add_argument("--callbench", help="the callbench binary (default: the checkout's target/release/callbench)")
    p.add_argument("--no-build", action="store_true", help="do not run the servers' build commands first")
    p.add_argument(
        "--allow-cpu-idle",
        action="store_true",
        help="let idle CPUs sleep (by default /dev/cpu_dma_latency is held at 0 for the run, as `callbench run` does)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    a = p.parse_args(argv)
    if a.repetitions < 1 or a.repetitions > 1000:
        p.error("--repetitions must be in 1..1000")
    if not 0 < a.scale <= 100:
        p.error("--scale must be in (0, 100]")
    if a.noop_calls is not None and a.noop_calls < 1:
        p.error("--noop-calls must be at least 1")
    return a


def pinning() -> tuple[list[int], list[int]]:
    """The client on the first CPU it may use, the servers on the others (none when there is one)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return cpus, cpus
    os.sched_setaffinity(0, {cpus[0]})
    return [cpus[0]], cpus[1:]


def select(a: argparse.Namespace) -> tuple[list[plan.Mechanism], list[plan.Operation]]:
    """The mechanisms and operations `--only` and `--experiments` keep."""
    mechanisms = plan.mechanisms(a.rest_server, a.grpc_server)
    wanted = {w.strip() for w in a.only.split(",") if w.strip()}
    unknown = wanted - {m.name.split("+")[0] for m in mechanisms}
    if unknown:
        raise SystemExit(
            f"callbench: unknown mechanism(s) {', '.join(sorted(unknown))} "
            "(pyo3, python, requests, requests-nosession, httpx, grpcio)"
        )
    if wanted:
        mechanisms = [m for m in mechanisms if m.name.split("+")[0] in wanted]
    ops = plan.operations(a.scale, 1)
    kinds = {w.strip() for w in a.experiments.split(",") if w.strip()}
    if kinds - set(record.TITLES):
        raise SystemExit(
            f"callbench: unknown experiment(s) {', '.join(sorted(kinds - set(record.TITLES)))} "
            f"({', '.join(record.TITLES)})"
        )
    if kinds:
        ops = [op for op in ops if op.experiment in kinds]
    return mechanisms, ops


def open_targets(
    stack: ExitStack, mechanisms: list[plan.Mechanism], running: dict[str, Server], users: Path
) -> dict[str, plan.Target]:
    """Each mechanism's workload functions; the clients' connections close with `stack`."""
    targets = {}
    for m in mechanisms:
        if m.transport == "inproc":
            targets[m.name] = plan.inproc_target(m.name, str(users))
        else:
            assert m.server is not None, f"{m.name} goes over the wire: it names its server"
            impl = connect(m.name.split("+")[0], running[m.server].addr)
            stack.callback(impl.close)
            targets[m.name] = plan.Target(impl, None)
    return targets


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    a = parse_args(args)
    mechanisms, ops = select(a)
    repo = find_repo(a.repo)
    servers_needed = sorted({m.server for m in mechanisms if m.server})
    cli = find_cli(repo, a.callbench) if servers_needed else ""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(a.out) if a.out else repo / "results" / f"{stamp}-boundary"
    if out.exists() and not out.is_dir():
        raise SystemExit(f"callbench: --out {out} is not a folder")
    stop_on_signals()
    client_cpus, server_cpus = pinning()

    def noop_calls(m: plan.Mechanism) -> int:
        if a.noop_calls:
            return a.noop_calls
        return max(1, round((200_000 if m.transport == "inproc" else 2_000) * a.scale))

    cells = [(op, m, noop_calls(m) if op.experiment == "noop" else op.loops) for op in ops for m in mechanisms]
    environment = record.environment(repo, client_cpus, server_cpus)
    progress = Progress([record.cell_id(op, m) for op, m, _ in cells], a.repetitions, a.quiet)
    say = progress.show
    # Held for the whole run, before the probe so that its wake-up round trip is what the cells meet.
    awake = _native.keep_cpus_awake(a.allow_cpu_idle)
    say("probing the machine's steadiness", new_line=True)
    steadiness = json.loads(awake.probe_steadiness(client_cpus, server_cpus))
    for warning in steadiness["warnings"]:
        progress.note(f"callbench: steadiness: {warning}")
    doc = record.document(" ".join(args), a.repetitions, environment, steadiness, mechanisms, ops, cells)
    users = target_dir(repo) / "callbench" / "users.json"
    _native.write_users_json(users)
    status = 0
    try:
        record.write(doc, out)
        with ExitStack() as stack:
            running: dict[str, Server] = {}
            for name in servers_needed:
                say(f"starting and verifying {name}", new_line=True)
                running[name] = stack.enter_context(Server(repo, cli, name, server_cpus, build=not a.no_build))
            for m, server in zip(mechanisms, doc["servers"]):
                if m.server:
                    server["verify"] = running[m.server].verify_record
            targets = open_targets(stack, mechanisms, running, users)
            for i, ((op, m, loops), cell) in enumerate(zip(cells, doc["cells"])):
                # Opens connections, fills caches, checks every path once; the time a call took here
                # times the calls of a repetition is the first estimate of the time left.
                say(f"warming up {i + 1}/{len(cells)}: {cell['id']}", new_line=i == 0)
                call, _ = plan.repetition_call(op, targets[m.name])
                warm = min(loops, 20)
                started = time.perf_counter()
                for _ in range(warm):
                    call()
                progress.guess(cell["id"], (time.perf_counter() - started) / warm * loops)
            rounds = Rounds(cells, targets, running, (client_cpus, server_cpus), a.repetitions, progress)
            for rep in range(a.repetitions):
                rounds.one_round(rep, doc)
                doc = record.write(doc, out)
            rounds.measure_slow_again(doc)
            doc = record.write(doc, out)
        doc["complete"] = True
    except KeyboardInterrupt:
        doc["interrupted"] = True
        status = 130
        for cell in doc["cells"]:
            if cell["status"] == "ok" and len(cell["runs"]) < a.repetitions:
                cell["status"], cell["error"] = "interrupted", f"{len(cell['runs'])} of {a.repetitions} repetitions ran"
    except RuntimeError as e:
        print(f"\ncallbench: {e}", file=sys.stderr)
        status = 1
    finally:
        stop_all()
        awake.release()
    progress.end(
        "interrupted after" if status == 130 else "every round measured in" if doc.get("complete") else "stopped after"
    )
    doc["environment"]["finished_at"] = record.now()
    doc = record.write(doc, out)
    _native.write_reports(json.dumps(doc), out)
    print(table.render(doc, [m.name for m in mechanisms]))
    print(f"\nresults: {out / 'results.json'}\nreport:  {out / 'report.md'}\n         {out / 'report.html'}")
    failed = [c for c in doc["cells"] if c["status"] not in ("ok",)]
    for c in failed:
        print(f"callbench: {c['id']}: {c['status']}: {c['error']}", file=sys.stderr)
    return status or (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
