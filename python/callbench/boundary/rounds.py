"""The measured rounds of a boundary run, judged as `callbench run` judges its own: a repetition that
other processes or the hypervisor disturbed (a meaningful share of the pinned CPUs taken during its
loop) is measured again at once, twice at most and as many times in all as the cell has repetitions;
after the rounds, a repetition whose CPU per call rose above its cell's median (a slow spell of the
machine: no other process, no steal, only the sides' own work shows it) is measured again and
replaced when the new one is not slow too. What stays slow is marked `disturbed` with the figure."""

from __future__ import annotations

import json
import time

from .. import _native
from ..servers import Server
from . import measure, plan, record
from .progress import Progress

# `callbench run`'s own rules, read from the engine: how often a disturbed repetition is measured
# again at once (`_native.may_rerun`), and a slow one after the rounds.
SLOW_ATTEMPTS_PER_REPETITION = _native.SLOW_ATTEMPTS_PER_REPETITION
Cells = list[tuple[plan.Operation, plan.Mechanism, int]]


class Rounds:
    def __init__(
        self,
        cells: Cells,
        targets: dict[str, plan.Target],
        running: dict[str, Server],
        sides: measure.Sides,
        repetitions: int,
        progress: Progress,
    ) -> None:
        self.cells = cells
        self.targets = targets
        self.running = running
        self.client_cpus, self.server_cpus = sides
        self.repetitions = repetitions
        self.progress = progress
        # Each cell's per-call µs, by repetition: a repetition measured again replaces its own.
        self.samples: dict[str, list[list[float]]] = {}

    def measure(self, op: plan.Operation, m: plan.Mechanism, loops: int) -> tuple[dict | None, list[float], str | None]:
        """One repetition: its metrics, per-call µs and the problem that ended it (None when ok)."""
        server = self.running.get(m.server) if m.server else None
        wire = m.transport != "inproc"
        try:
            call, check = plan.repetition_call(op, self.targets[m.name])
            pid, port = (server.server_pid, server.port) if server else (None, None)
            if m.name.startswith("requests-nosession+"):
                port = None  # its connections close within the call: `ss` cannot see their bytes
            sides = (self.client_cpus, self.server_cpus if wire else [])
            metrics, per_call = measure.run(call, loops, wire, pid, port, sides)
            return metrics, per_call, check()
        except Exception as e:  # noqa: BLE001 - a failed repetition is recorded in its cell, the others go on
            return None, [], f"{type(e).__name__}: {e}"

    def say(self, text: str) -> None:
        if not self.progress.quiet:
            self.progress.note(f"callbench: {text}")

    def one_round(self, rep: int, doc: dict) -> None:
        """Repetition `rep` of every cell still ok, in order; a failed call ends its cell, not the run."""
        first = True
        for (op, m, loops), cell in zip(self.cells, doc["cells"]):
            if cell["status"] != "ok":
                continue
            # A line (not only a redraw) when a round starts, whichever cell comes first in it.
            self.progress.show(f"round {rep + 1}/{self.repetitions}: {cell['id']}", new_line=first)
            first = False
            started = time.monotonic()
            reruns = 0
            while True:
                metrics, per_call, problem = self.measure(op, m, loops)
                why = metrics.get("disturbed") if metrics and not problem else None
                if not why or not _native.may_rerun(reruns, cell.get("reruns", 0), self.repetitions):
                    break
                reruns += 1
                cell["reruns"] = cell.get("reruns", 0) + 1
                self.say(f"repetition {rep + 1} of {cell['id']} disturbed ({why}): measuring it again")
            if problem:
                cell["status"], cell["error"] = "error", f"repetition {rep + 1}: {problem}"
                self.progress.drop(cell["id"])
                continue
            self.progress.done(cell["id"], time.monotonic() - started)
            cell["runs"].append(metrics)
            self.samples.setdefault(cell["id"], []).append(per_call)
            cell["spectrum"] = self.spectrum(cell["id"])

    def spectrum(self, cell_id: str) -> list[list[float]]:
        return record.spectrum([us for run in self.samples.get(cell_id, []) for us in run])

    def measure_slow_again(self, doc: dict) -> None:
        """After the rounds: each cell's slow repetitions measured again, twice each at most and as many
        times in all as it has repetitions, the slowest first; what stays slow is marked."""

        # Calls one at a time: the client does the same work for every call, and so does the server.
        def judged(m: plan.Mechanism) -> tuple[bool, bool]:
            return True, m.transport != "inproc"

        # The time left counts one measurement per slow repetition (a second one is the exception).
        for (_, m, _), cell in zip(self.cells, doc["cells"]):
            if cell["status"] == "ok":
                self.progress.expect(cell["id"], len(_native.slow_runs(json.dumps(cell["runs"]), *judged(m))))
        for (op, m, loops), cell in zip(self.cells, doc["cells"]):
            if cell["status"] != "ok":
                continue
            attempts = [0] * len(cell["runs"])
            for _ in range(len(cell["runs"])):
                runs = json.dumps(cell["runs"])
                slow = [
                    (i, why)
                    for i, why in _native.slow_runs(runs, *judged(m))
                    if attempts[i] < SLOW_ATTEMPTS_PER_REPETITION
                ]
                if not slow:
                    break
                run, why = slow[0]
                attempts[run] += 1
                self.progress.show(f"measuring a repetition of {cell['id']} again ({why})", new_line=True)
                started = time.monotonic()
                metrics, per_call, problem = self.measure(op, m, loops)
                self.progress.done(cell["id"], time.monotonic() - started)
                cell["reruns"] = cell.get("reruns", 0) + 1
                if problem or metrics is None or metrics.get("disturbed"):
                    continue
                if _native.slow_against(json.dumps(metrics), runs, *judged(m)):
                    continue
                cell["runs"][run] = metrics
                self.samples[cell["id"]][run] = per_call
            self.progress.expect(cell["id"], 0)
            for run, why in _native.slow_runs(json.dumps(cell["runs"]), *judged(m)):
                cell["runs"][run]["disturbed"] = cell["runs"][run].get("disturbed") or why
            cell["spectrum"] = self.spectrum(cell["id"])
