"""The results.json of a boundary run (schema `callbench-results/1`, as `callbench run` writes it):
the reproducibility record, the servers and experiments, cells filled as repetitions finish, written
atomically (an interrupted run leaves a valid partial file), summarised by callbench's own statistics."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import _native
from .article import ARTICLE, NOTE
from .plan import Mechanism, Operation, article_rest

TITLES = {
    "noop": ("The boundary alone: a call that does nothing", "wall_us_per_call"),
    "setup": ("Seed 004's setup: a new acorn board, ×1000", "wall_us_per_call"),
    "step": ("Seed 004's step: 10,000 generations as 10000/ntimes calls of step(ntimes)", "wall_us_per_call"),
    "auth": ("Auth (seed 000's work, users preloaded) through each boundary", "wall_us_per_call"),
    "echo": ("Echo of 10 records (~1.9 KB of JSON) through each boundary", "wall_us_per_call"),
}
DESCRIPTIONS = {
    "noop": (
        "PyO3: a Rust function that does nothing; Python: a Python function that does nothing; over the wire: each "
        "server's cheapest call (GET /health, grpc.health.v1.Health/Check) on a kept-alive connection."
    ),
    "setup": "Python value out: a set of (x, y) tuples, whatever crosses the boundary.",
    "step": (
        "The board is a Python set advanced in place (PyO3 and pure Python) or sent and rebuilt from the answer (over "
        "the wire), as seed 004's rpc_step. Every row starts from the acorn and checks the final board."
    ),
    "auth": (
        "Hash of user 9999's password: PyO3 and pure Python with users.json parsed once, servers in preloaded mode."
    ),
    "echo": "The contract's echo message as a Python dict, returned equal.",
}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment(repo: Path, client_cpus: list[int], server_cpus: list[int]) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain")
    cpu = next((x.split(":", 1)[1].strip() for x in _lines("/proc/cpuinfo") if x.startswith("model name")), "")
    os_name = next(
        (x.split("=", 1)[1].strip('"') for x in _lines("/etc/os-release") if x.startswith("PRETTY_NAME")), ""
    )
    tools = {
        "python": platform.python_version(),
        "pyo3": _native.PYO3_VERSION,
        "callbench (python)": _native.__version__,
    }
    tools.update({p: package_version(p) for p in ("requests", "httpx", "grpcio", "protobuf")})
    return {
        "callbench_version": _native.__version__,
        "git_commit": commit.strip() if commit else None,
        "git_dirty": bool(status.strip()) if status is not None else None,
        "command_line": [sys.executable, "-m", "callbench.boundary", *sys.argv[1:]],
        "cpu_model": cpu,
        "cores": os.cpu_count() or 0,
        "kernel": platform.release(),
        "os": os_name,
        "client_cpus": client_cpus,
        "server_cpus": server_cpus,
        "tools": tools,
        "started_at": now(),
        "finished_at": None,
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def server_record(m: Mechanism) -> dict[str, Any]:
    versions = {"python": platform.python_version()}
    if m.name == "pyo3":
        versions.update({"pyo3": _native.PYO3_VERSION, "callbench": _native.__version__})
    elif m.server:
        versions[m.library] = package_version(m.library)
        versions["server"] = m.server
    return {
        "name": m.name,
        "language": "Rust (from Python)" if m.name == "pyo3" else "Python",
        "framework": m.description,
        "protocol": {"inproc": "inproc", "rest-h1": "rest", "grpc": "grpc"}[m.transport],
        "versions": versions,
        "verify": None,
        "failures": [],
    }


def experiments(ops: list[Operation], rest: str | None) -> list[dict[str, Any]]:
    """The experiments of `ops`; the article's rpc figures sit beside the `rest` mechanism's cells."""
    out: list[dict[str, Any]] = []
    for op in ops:
        if any(e["id"] == op.experiment for e in out):
            continue
        title, headline = TITLES[op.experiment]
        refs = []
        for key, (rpc, pyo3, loops) in ARTICLE.items():
            if key.split("/")[0] != op.experiment:
                continue
            suffix = f"/ntimes={key.split('/')[1]}" if "/" in key else ""
            for who, total, cell in (("rpc (hyper + requests)", rpc, rest), ("pyo3", pyo3, "pyo3")):
                refs.append(
                    {
                        "seed": "004",
                        "what": f"{key.replace('/', ' ntimes=')} via {who}, {loops} calls: {total} s in all",
                        "article": f"{total / loops * 1e6:,.1f} µs per call",
                        "cell": f"{op.experiment}/life/{cell}{suffix}" if cell else None,
                        "metric": "wall_us_per_call",
                        "note": NOTE,
                    }
                )
        out.append(
            {
                "id": op.experiment,
                "title": title,
                "description": DESCRIPTIONS[op.experiment],
                "seeds": ["004"] if op.workload in ("life", "noop") else ["000" if op.workload == "auth" else "004"],
                "sweep": "ntimes" if op.experiment == "step" else None,
                "headline": headline,
                "references": refs,
            }
        )
    return out


def document(
    command: str,
    repetitions: int,
    environment: dict[str, Any],
    steadiness: dict[str, Any],
    mechanisms: list[Mechanism],
    ops: list[Operation],
    cells: list[tuple[Operation, Mechanism, int]],
) -> dict[str, Any]:
    """A new results.json document for `cells`, nothing measured yet. Timing intervals are widened to
    at least the spread of a fixed loop on the pinned CPUs that the `steadiness` probe measured, as
    `callbench run` widens them."""
    return {
        "schema": _native.RESULTS_SCHEMA,
        "complete": False,
        "interrupted": False,
        "suite": {
            "name": "seed004-boundary-python",
            "description": (
                "Seed 004: Python calling Rust in-process (PyO3) vs over the wire (requests, httpx, grpcio) vs pure "
                "Python."
            ),
            "file": "python -m callbench.boundary",
            "text": command,
            "repetitions": repetitions,
            "interval_floor": steadiness["loop_spread"],
        },
        "steadiness": steadiness,
        "environment": environment,
        "servers": [server_record(m) for m in mechanisms],
        "experiments": experiments(ops, article_rest([m.name for m in mechanisms])),
        "cells": [new_cell(op, m, loops) for op, m, loops in cells],
        "comparisons": [],
    }


def cell_id(op: Operation, m: Mechanism) -> str:
    return f"{op.experiment}/{op.workload}/{m.name}" + (f"/ntimes={op.ntimes}" if op.ntimes else "")


def new_cell(op: Operation, m: Mechanism, loops: int) -> dict[str, Any]:
    return {
        "id": cell_id(op, m),
        "experiment": op.experiment,
        "server": m.name,
        "workload": op.workload,
        "transport": m.transport,
        "params": {"calls": loops, "client": m.library, **op.params},
        "x": float(op.ntimes) if op.ntimes else None,
        "status": "ok",
        "error": None,
        "runs": [],
        "summary": {},
        "spectrum": [],
        "bottleneck": "",
        "noisy": False,
        "hdr_file": None,
    }


SPECTRUM = (0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0)


def spectrum(samples_us: list[float]) -> list[list[float]]:
    if not samples_us:
        return []
    s = sorted(samples_us)
    return [[p, s[min(len(s) - 1, int(p / 100.0 * len(s)))]] for p in SPECTRUM]


def write(doc: dict[str, Any], out: Path) -> dict[str, Any]:
    """Summarises `doc` with callbench's statistics and writes results.json atomically; returns it."""
    summarised = json.loads(_native.summarise_results(json.dumps(doc)))
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".results.json.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(summarised, indent=2, ensure_ascii=False))
    os.replace(tmp, out / "results.json")
    return summarised
