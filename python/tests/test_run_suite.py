"""Python callers inside `callbench run` (experiments of kind "python"): the real CLI starts and verifies
the Rust servers, runs `python -m callbench.boundary.cell` per repetition, and writes the cells into the
same results.json and report as any experiment; and the cell entry point alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO, Orphans

from callbench.servers import target_dir

CALLBENCH = str(target_dir(REPO) / "release" / "callbench")
CELL = [sys.executable, "-m", "callbench.boundary.cell"]

SUITE = """
name = "python-callers"
description = "Python callers, a small run"
repetitions = 2

[[experiment]]
id = "step"
kind = "python"
title = "Life step from Python"
headline = "wall_us_per_call"
servers = ["pyo3", "python", "requests+rust-axum", "httpx+rust-axum", "grpcio+rust-tonic"]
workloads = ["life"]
calls = 20
sweep = { param = "ntimes", values = [1, 50] }

[[experiment.reference]]
seed = "004"
what = "step ntimes=1 through PyO3"
article = "796 µs per call"
cell = "life/pyo3/ntimes=1"
metric = "wall_us_per_call"

[[experiment]]
id = "others"
kind = "python"
title = "The other workloads from Python"
servers = ["pyo3", "grpcio+rust-tonic", "requests+rust-axum", "requests-nosession+rust-axum"]
workloads = ["noop", "auth", "echo", "life-setup"]
calls = 30
"""


class Ran(subprocess.CompletedProcess[str]):
    """A finished `callbench run` and the processes it left behind."""

    left: list[str]


def callbench_run(suite_path, out, *extra: str, env=None) -> Ran:
    """`callbench run`; its `left` attribute lists the processes it left running when it exited."""
    env = {**os.environ, "CALLBENCH_PYTHON": sys.executable, **(env or {})}
    orphans = Orphans()
    p = subprocess.Popen(
        [CALLBENCH, "run", str(suite_path), "--out", str(out), "--no-build", *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        stdout, stderr = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    r = Ran(p.args, p.returncode, stdout, stderr)
    r.left = orphans.left()
    return r


def test_python_experiments_run_inside_callbench_run(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    r = callbench_run(suite, tmp_path / "out")
    assert r.returncode == 0, r.stderr + r.stdout
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["complete"] and {c["status"] for c in doc["cells"]} == {"ok"}, [c["error"] for c in doc["cells"]]
    cells = {c["id"]: c for c in doc["cells"]}
    assert len(cells) == 5 * 2 + 4 * 4
    wire = cells["step/life/grpcio+rust-tonic/ntimes=50"]
    assert wire["transport"] == "grpc" and len(wire["runs"]) == 2
    run = wire["runs"][0]
    assert run["calls_ok"] == 20 and run["server_cpu_us_per_call"] > 0 and run["wire_sent_per_call"] > 50
    assert wire["spectrum"], "per-call times over the wire make a spectrum"
    assert cells["step/life/pyo3/ntimes=1"]["transport"] == "inproc"
    assert cells["others/auth/pyo3"]["params"] == {"client": "pyo3", "calls": 30}
    # The servers were verified by the runner before their first cell.
    verified = {s["name"]: s["verify"] for s in doc["servers"] if s["verify"]}
    assert set(verified) == {"rust-axum", "rust-tonic"} and all(v["failed"] == 0 for v in verified.values())
    assert any(s["name"] == "requests+rust-axum" and s["language"] == "Python" for s in doc["servers"])
    # The article's figure sits beside the cell it names, in the report.
    ref = doc["experiments"][0]["references"][0]
    assert ref["cell"] == "step/life/pyo3/ntimes=1" and "wall_us_per_call" in cells[ref["cell"]]["summary"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "requests+rust-axum" in html and "796 µs per call" in html
    assert r.left == [], "outlived the run"


def test_suites_with_wrong_python_callers_are_refused_before_anything_runs(tmp_path):
    for bad, says in [
        (SUITE.replace('"grpcio+rust-tonic"]', '"grpcio+rust-axum"]'), "grpcio calls gRPC servers; rust-axum is REST"),
        (SUITE.replace('"httpx+rust-axum"', '"httpx"'), "httpx needs a server"),
        (SUITE.replace('workloads = ["life"]', 'workloads = ["students"]'), "Python experiments call"),
    ]:
        suite = tmp_path / "bad.toml"
        suite.write_text(bad)
        r = callbench_run(suite, tmp_path / "bad-out")
        assert r.returncode != 0 and says in r.stderr, r.stderr
        assert not (tmp_path / "bad-out").exists()
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    r = callbench_run(suite, tmp_path / "no-python", env={"CALLBENCH_PYTHON": "/usr/bin/python3-nonexistent"})
    assert r.returncode != 0 and "CALLBENCH_PYTHON" in r.stderr, r.stderr


def cell(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CELL, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_the_cell_entry_point_prints_one_repetition(users):
    r = cell("--mechanism", "pyo3", "--workload", "auth", "--calls", "50", "--users", str(users))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["metrics"]["calls_ok"] == 50 and out["metrics"]["duration_s"] > 0
    assert out["samples_us"] == []  # in-process calls are timed as a loop, not one by one
    r = cell("--mechanism", "python", "--workload", "life", "--ntimes", "3", "--calls", "5", "--warmup-calls", "0")
    assert r.returncode == 0 and json.loads(r.stdout)["metrics"]["calls_ok"] == 5, r.stderr


def test_the_cell_entry_point_refuses_bad_arguments_and_reports_failed_calls():
    for args in (
        ["--mechanism", "curl", "--workload", "noop", "--calls", "1"],
        ["--mechanism", "pyo3", "--workload", "noop", "--calls", "0"],
        ["--mechanism", "requests", "--workload", "noop", "--calls", "1"],
        ["--mechanism", "pyo3", "--workload", "life", "--ntimes", "5000", "--calls", "1"],
    ):
        r = cell(*args)
        assert r.returncode == 2 and r.stderr.strip() and "Traceback" not in r.stderr, (args, r.stderr)
    # Nothing listens on port 1: the call fails, one line, exit 1.
    r = cell("--mechanism", "httpx", "--workload", "noop", "--calls", "1", "--address", "127.0.0.1:1")
    assert r.returncode == 1 and "ConnectError" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
