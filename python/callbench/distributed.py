"""One load from several machines on Ray: one actor per node runs its share of the run (`--segment`, so the
shares add up to exactly the one-machine run), all start at one moment of the coordinator's clock, and their
reports merge into one (histograms added, never percentiles averaged).

    python -m callbench.distributed --address HOST:PORT --workers N <the flags of callbench load>

Ray places the workers (one per node, pinned by node affinity), calls each at most once (an actor call is
never re-run, so a share is never made twice) and says when a worker's process or node died. Every node needs
this package installed (`pip install ./python`): it carries the Rust engine.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from . import _native, engine

# The largest start skew accepted between workers: beyond it, their calls did not start together and
# the merged rate is not the one asked for. The estimate of each worker's clock is good to about half the
# fastest round trip to it (under a millisecond on a LAN), so 5 ms leaves room for that and for a
# worker's wake-up, and is 0.5% of a one-second window.
SKEW_LIMIT_S = 0.005
# How far ahead of "now" the common start is set, once every worker has prepared its target (resolved
# it, probed the server): long enough for the start call to reach every worker; one that gets it too
# late fails the run rather than start late.
LEAD_S = 1.5
# How long a worker may take to prepare its target.
PREPARE_TIMEOUT_S = 120.0
# Round trips to each worker to estimate its clock; the fastest one is kept (as NTP's filter does).
CLOCK_SAMPLES = 9
# A worker that is more than this late past the run's planned end has stopped reporting.
GRACE_S = 15.0
# A worker that achieved less than this share of its rate fell behind its schedule.
RATE_KEPT = 0.98
# A worker whose calls started late (more than the engine's 1 ms after their time) this often fell behind. Only on the
# precise timer: the coarse one starts calls up to a millisecond late by design.
LATE_SHARE = 0.05
# Client CPU above this share of a core: the worker's own CPU was the limit.
CPU_SATURATED = 0.90
# How often the workers' counts are added up into one line of live progress.
PROGRESS_EVERY_S = 1.0


@dataclass
class Clock:
    """A worker's monotonic clock against the coordinator's: worker = coordinator + offset, good to ±uncertainty."""

    offset: float
    uncertainty: float


@dataclass
class WorkerRun:
    name: str
    node_id: str
    address: str
    segment: tuple[Fraction, Fraction]
    actor: Any
    clock: Clock | None = None
    result: engine.LoadResult | None = None
    error: str | None = None
    start_late_s: float | None = None
    behind: list[str] = field(default_factory=list)
    # Calls done, as last read while the run went on (its result's count once it ended).
    done: int = 0


def split(n: int) -> list[tuple[Fraction, Fraction]]:
    """[0, 1] in n equal segments: worker i of n gets calls k ≡ i (mod n) of an evenly spaced schedule."""
    return [(Fraction(i, n), Fraction(i + 1, n)) for i in range(n)]


def estimate_clock(samples: Sequence[tuple[float, float, float]]) -> Clock:
    """From (sent, worker's clock, received) round trips: the offset of the fastest one, whose worker reading
    lies within half its round trip of the middle."""
    sent, theirs, received = min(samples, key=lambda s: s[2] - s[0])
    return Clock(offset=theirs - (sent + received) / 2, uncertainty=(received - sent) / 2)


def skew(starts: Sequence[float]) -> float:
    return max(starts) - min(starts) if starts else 0.0


def behind_schedule(report: dict[str, Any]) -> list[str]:
    """Why a worker fell behind its share: its rate not achieved, calls not started or started late, or its CPU
    saturated."""
    why = []
    rate = report.get("rate")
    if rate and rate["requested"] > 0 and rate["achieved"] < RATE_KEPT * rate["requested"]:
        why.append(f"achieved {rate['achieved']:.1f}/s of its {rate['requested']:.1f}/s")
    if rate and rate.get("not_started"):
        why.append(f"{rate['not_started']} calls not started")
    window = report.get("duration_s") or 0.0
    calls = report["calls"]["ok"] + report["calls"]["errors"]
    precise = report.get("settings", {}).get("precise_timer", True)
    if rate and precise and calls and rate.get("late_starts", 0) > LATE_SHARE * calls:
        why.append(f"{rate['late_starts']} of its {calls} calls started more than 1 ms late")
    cores = report["client_cpu_us_per_call"] * calls / 1e6 / window if window > 0 else 0.0
    # In open loop the engine spins to start calls on time: its CPU says nothing there.
    if not rate and cores > CPU_SATURATED:
        why.append(f"its CPU was {cores * 100:.0f}% busy")
    return why


def _worker_class() -> Any:
    import ray

    # Two threads: `stop` must be heard while `run` is in the engine (which releases the GIL).
    @ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0, max_concurrency=2)
    class Worker:
        """One machine's engine: its clock, one run of its share, and a way to end that run early."""

        def __init__(self) -> None:
            self.cancel = _native.Cancel()
            self.progress = _native.Progress()

        def where(self) -> dict[str, str]:
            import socket

            return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname()}

        def clock(self) -> float:
            return _native.monotonic_now()

        def prepare(self, args: list[str]) -> None:
            self.prepared = _native.prepare_load(args)

        def run(self, start_at: float) -> tuple[str, bytes, bytes, float]:
            return self.prepared.run(start_at, self.cancel, self.progress)

        def done(self) -> int:
            return self.progress.done()

        def stop(self) -> None:
            self.cancel.cancel()

    return Worker


def pick_nodes(nodes: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """n alive nodes, the head last (it also runs Ray's own services)."""
    alive = [x for x in nodes if x.get("Alive")]
    alive.sort(
        key=lambda x: (
            bool(x.get("IsHeadNode") or x.get("Resources", {}).get("node:__internal_head__")),
            x.get("NodeManagerAddress", ""),
            x["NodeID"],
        )
    )
    if len(alive) < n:
        raise RuntimeError(f"{n} workers need {n} alive Ray nodes; the cluster has {len(alive)}")
    return alive[:n]


class LiveProgress:
    """Every second, the calls all workers have done so far (warm-up included) and the rate over that second,
    as one line: the merged run's progress, not one worker's."""

    def __init__(self, start: float, show: bool) -> None:
        self.start, self.show = start, show
        self.next = start + PROGRESS_EVERY_S
        self.last: tuple[float, int] | None = None
        self.lines: list[dict[str, float]] = []

    def due(self) -> float:
        """Seconds to the next line."""
        return max(0.0, self.next - time.monotonic())

    def tick(self, runs: list[WorkerRun]) -> None:
        import ray

        if time.monotonic() < self.next:
            return
        self.next += PROGRESS_EVERY_S * max(1, int((time.monotonic() - self.next) / PROGRESS_EVERY_S) + 1)
        asking = [r for r in runs if r.result is None and r.error is None]
        try:
            counts = ray.get([r.actor.done.remote() for r in asking], timeout=PROGRESS_EVERY_S / 2)
        except Exception:  # noqa: BLE001 - a worker too busy or gone to answer: its run's call decides its fate
            return
        for r, n in zip(asking, counts):
            r.done = n
        now, done = time.monotonic(), sum(r.done for r in runs)
        rate = (done - self.last[1]) / (now - self.last[0]) if self.last else None
        self.last = (now, done)
        self.lines.append({"t_s": round(now - self.start, 3), "done": done})
        if self.show:
            per_s = f", {rate:.0f}/s over the last second" if rate is not None else ""
            print(f"  {now - self.start:6.1f} s  {done} calls done by {len(runs)} workers{per_s}", file=sys.stderr)


def run(
    load_args: list[str],
    workers: int,
    lead: float = LEAD_S,
    skew_limit: float = SKEW_LIMIT_S,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Runs `callbench load <load_args>` split across `workers` nodes of the Ray cluster this process is
    connected to (`ray.init(address=...)`); returns the merged result, valid or not (see `problems`). With
    `show_progress`, a line of merged progress every second on stderr."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if workers < 1:
        raise ValueError("--workers must be at least 1")
    if any(a.startswith("--segment") for a in load_args):
        raise ValueError("the coordinator sets each worker's --segment itself")
    Worker = _worker_class()
    runs: list[WorkerRun] = []
    actors = []
    for node, segment in zip(pick_nodes(ray.nodes(), workers), split(workers)):
        name = f"worker {len(runs) + 1} ({node.get('NodeManagerAddress', '?')})"
        strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
        actors.append(Worker.options(scheduling_strategy=strategy).remote())
        runs.append(WorkerRun(name, node["NodeID"], node.get("NodeManagerAddress", ""), segment, actors[-1]))
    problems: list[str] = []
    # Every worker prepares its share (the flags checked, the target resolved and probed) before the start
    # time is chosen: a slow preparation delays the start, it does not make one worker late.
    preparing = {}
    for r, actor in zip(runs, actors):
        args = load_args + ["--segment", engine.segment_flag(r.segment), "--segment-stripes", str(workers)]
        preparing[r.name] = actor.prepare.remote(args)
    failed: list[tuple[str, BaseException]] = []
    for name, ref in preparing.items():
        # Every answer is read (an error left unread is printed by Ray), the first failure reported.
        try:
            ray.get(ref, timeout=PREPARE_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - any failure of a worker's preparation is reported below
            failed.append((name, getattr(e, "cause", None) or e))
    if failed:
        _kill(actors)
        name, cause = failed[0]
        kind = ValueError if isinstance(cause, ValueError) else RuntimeError
        raise kind(f"{name} could not prepare: {(str(cause).strip() or type(cause).__name__).splitlines()[0]}")
    try:
        for r, actor in zip(runs, actors):
            samples = []
            for _ in range(CLOCK_SAMPLES):
                sent = time.monotonic()
                theirs = ray.get(actor.clock.remote(), timeout=60)
                samples.append((sent, theirs, time.monotonic()))
            r.clock = estimate_clock(samples)
    except Exception as e:  # a worker that cannot even answer its clock
        _kill(actors)
        raise RuntimeError(f"a worker did not answer: {e}") from e
    start = time.monotonic() + lead
    offsets = [_clock(r).offset for r in runs]
    futures = {actor.run.remote(start + offset): r for r, actor, offset in zip(runs, actors, offsets)}
    deadline = start + planned_length(load_args) + GRACE_S
    pending = list(futures)
    stopping = False
    progress = LiveProgress(start, show_progress)
    interrupted = False
    try:
        while pending:
            wait = min(max(0.0, deadline - time.monotonic()), progress.due())
            try:
                done, pending = ray.wait(pending, num_returns=1, timeout=wait)
            except KeyboardInterrupt:
                # Ctrl-C (or SIGINT from `callbench run`): stop every worker, keep what they measured.
                if interrupted:
                    raise
                interrupted = stopping = True
                problems.append("interrupted: the workers were stopped early, what they measured is kept")
                for f in pending:
                    futures[f].actor.stop.remote()
                deadline = min(deadline, time.monotonic() + GRACE_S)
                continue
            if not done:
                if time.monotonic() >= deadline:
                    for f in pending:
                        futures[f].error = "stopped reporting: no result by the run's end plus its grace"
                    break
                progress.tick(runs)
                continue
            r = futures[done[0]]
            try:
                report, hist, uncorrected, started = ray.get(done[0])
            except ray.exceptions.RayActorError as e:
                r.error = f"died ({type(e).__name__}: its process or node ended)"
            except ray.exceptions.RayTaskError as e:
                r.error = str(getattr(e, "cause", e)).splitlines()[0]
            else:
                r.result = engine.LoadResult(json.loads(report), bytes(hist), bytes(uncorrected), started)
                r.done = r.result.report["calls"]["ok"] + r.result.report["calls"]["errors"]
                r.start_late_s = started - _clock(r).offset - start
                r.behind = behind_schedule(r.result.report)
            if r.error and not stopping:
                # The run has failed: the others end now, keeping what they measured (a partial result).
                stopping = True
                deadline = min(deadline, time.monotonic() + GRACE_S)
                for f in pending:
                    futures[f].actor.stop.remote()
    finally:
        _kill(actors)
    for r in runs:
        if r.error:
            problems.append(f"{r.name} {r.error}")
    measured = [r for r in runs if r.result]
    starts = [r.start_late_s for r in measured if r.start_late_s is not None]
    run_skew = skew(starts)
    if len(starts) > 1 and run_skew > skew_limit:
        problems.append(f"the workers started {run_skew * 1e3:.2f} ms apart (limit {skew_limit * 1e3:.1f} ms)")
    merged = engine.merge([r.result for r in measured if r.result]) if measured else None
    histogram = merged.pop("histogram") if merged else None
    behind = [f"{r.name}: {', '.join(r.behind)}" for r in measured if r.behind]
    return {
        "valid": not problems,
        "interrupted": interrupted,
        "problems": problems,
        "bottleneck": "client" if behind else None,
        "behind_schedule": behind,
        "workers": len(runs),
        # The common start on the coordinator's monotonic clock (`time.monotonic()`).
        "start_monotonic": start,
        "start_skew_ms": run_skew * 1e3,
        "skew_limit_ms": skew_limit * 1e3,
        "merged": merged,
        # The merged latency histogram (µs, HdrHistogram V2 deflated); not in the JSON, see --histogram-out.
        "_histogram": histogram,
        # The merged progress as it was read every second: seconds after the common start, calls done.
        "progress": progress.lines,
        "per_worker": [
            {
                "name": r.name,
                "node_id": r.node_id,
                "address": r.address,
                "segment": engine.segment_flag(r.segment),
                "clock_offset_s": r.clock.offset if r.clock else None,
                "clock_uncertainty_ms": r.clock.uncertainty * 1e3 if r.clock else None,
                "start_late_ms": r.start_late_s * 1e3 if r.start_late_s is not None else None,
                "error": r.error,
                "stopped_early": bool(r.result and r.result.report.get("interrupted")),
                "behind_schedule": r.behind,
                "report": r.result.report if r.result else None,
            }
            for r in runs
        ],
    }


def alive_nodes(address: str, netns: str | None = None) -> int:
    """How many nodes of the Ray cluster at `address` are alive (0 when it cannot be joined), asked from a process
    of its own (in network namespace `netns`, e.g. a host of `callbench lab`): for scripts that start a cluster and
    wait for its nodes."""
    import subprocess

    from .servers import in_netns

    code = (
        "import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    r = subprocess.run(
        in_netns(netns, [sys.executable, "-c", code, address]),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, RAY_USAGE_STATS_ENABLED="0"),
    )
    return int(r.stdout.strip() or 0) if r.returncode == 0 else 0


def _kill(actors: list[Any]) -> None:
    import ray

    for a in actors:
        try:
            ray.kill(a)
        except Exception:  # noqa: BLE001 - already gone with its node
            pass


def _clock(r: WorkerRun) -> Clock:
    """A worker's clock, estimated before any run is started."""
    assert r.clock is not None, f"{r.name}: no clock estimated"
    return r.clock


def planned_length(load_args: list[str]) -> float:
    """The run's length and warm-up in seconds, as the engine reads its flags (a run bounded by calls alone:
    10 minutes)."""
    length = _native.planned_length(load_args)
    return 600.0 if length is None else length


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m callbench.distributed",
        description="One callbench load split across the nodes of a Ray cluster; the other flags are callbench load's.",
    )
    parser.add_argument("--address", required=True, help="the Ray cluster's address, HOST:PORT (its GCS)")
    parser.add_argument("--workers", type=int, required=True, help="machines to split the load across")
    parser.add_argument("--lead", type=float, default=LEAD_S, help="seconds ahead the common start is set")
    parser.add_argument("--skew-limit-ms", type=float, default=SKEW_LIMIT_S * 1e3)
    parser.add_argument("--out", help="write the merged result (JSON) here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no line of progress every second")
    parser.add_argument("--histogram-out", help="write the merged latency histogram (HdrHistogram V2) here")
    ours, load_args = parser.parse_known_args(argv)
    # stdout is the result's alone: what Ray prints there (a node's death, its workers' logs) goes to stderr.
    sys.stdout.flush()
    result_out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import ray

    try:
        # Ray retries a cluster that is not there for minutes: one connection says so at once.
        host, _, port = ours.address.rpartition(":")
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
        ray.init(address=ours.address, logging_level="ERROR", log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - whatever Ray raises, the user is told in one line
        print(
            f"callbench: error: cannot join the Ray cluster at {ours.address}: {str(e).splitlines()[0]}",
            file=sys.stderr,
        )
        return 2
    try:
        result = run(load_args, ours.workers, ours.lead, ours.skew_limit_ms / 1e3, show_progress=not ours.quiet)
    except (ValueError, RuntimeError) as e:
        print(f"callbench: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    finally:
        ray.shutdown()
    histogram = result.pop("_histogram")
    if ours.histogram_out and histogram is not None:
        with open(ours.histogram_out, "wb") as f:
            f.write(histogram)
    text = json.dumps(result, indent=2)
    if ours.out:
        with open(ours.out, "w") as f:
            f.write(text + "\n")
    else:
        result_out.write(text + "\n")
        result_out.flush()
    summary(result)
    return 0 if result["valid"] else 1


def summary(result: dict[str, Any]) -> None:
    m = result["merged"]
    if m:
        lat = m["latency_us"] or {}
        print(
            f"{result['workers']} workers, started within {result['start_skew_ms']:.3f} ms: "
            f"{m['calls']['ok']} ok, {m['calls']['errors']} failed -> {m['throughput_per_s']:.1f} calls/s; "
            f"p50 {lat.get('p50', '-')} µs, p99 {lat.get('p99', '-')} µs",
            file=sys.stderr,
        )
    for p in result["problems"]:
        print(f"callbench: invalid run: {p}", file=sys.stderr)
    for b in result["behind_schedule"]:
        print(f"callbench: the client side was the limit: {b}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
