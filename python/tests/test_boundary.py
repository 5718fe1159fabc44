"""`python -m callbench.boundary` end to end: a small run against the real servers prints the table,
writes a results.json that callbench reads back, and leaves no server; bad flags exit non-zero."""

from __future__ import annotations

import json
import os
import signal
import threading
import subprocess
import sys

from conftest import REPO

CMD = [sys.executable, "-m", "callbench.boundary"]


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*CMD, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def servers_running() -> list[str]:
    out = subprocess.run(["pgrep", "-af", "rust-axum|rust-tonic"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_a_small_run_prints_the_table_and_writes_valid_results(tmp_path):
    before = servers_running()
    r = run("--scale", "0.002", "-k", "2", "--noop-calls", "200", "--no-build", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr + r.stdout
    for words in ("no-op", "step ntimes=1000", "article rpc", "48.712 s", "crossing the boundary", "grpcio+rust-tonic"):
        assert words in r.stdout, words
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema"] == "callbench-results/1" and doc["complete"] and not doc["interrupted"]
    assert {c["status"] for c in doc["cells"]} == {"ok"}
    assert len(doc["cells"]) == 6 * (1 + 1 + 4 + 1 + 1)
    noop = next(c for c in doc["cells"] if c["id"] == "noop/noop/pyo3")
    assert noop["summary"]["wall_us_per_call"]["median"] > 0 and len(noop["runs"]) == 2
    wire = next(c for c in doc["cells"] if c["id"] == "step/life/grpcio+rust-tonic/ntimes=1")
    assert wire["runs"][0]["wire_sent_per_call"] > 50 and wire["runs"][0]["server_cpu_us_per_call"] > 0
    assert (tmp_path / "report.html").stat().st_size > 10_000
    verified = [s["verify"] for s in doc["servers"] if "+" in s["name"]]
    assert len(verified) == 4 and all(v and v["passed"] > 50 and v["failed"] == 0 for v in verified), verified
    # callbench's own CLI reads it back (same schema as `callbench run`).
    report = subprocess.run([str(REPO / "target" / "release" / "callbench"), "report", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert servers_running() == before


def test_bad_flags_exit_non_zero_with_one_line():
    for args in (["--only", "carrier-pigeon"], ["--scale", "0"], ["--experiments", "nope"], ["-k", "0"]):
        r = run(*args, timeout=60)
        assert r.returncode != 0 and r.stderr.strip(), args
        assert "Traceback" not in r.stderr, r.stderr


def test_ctrl_c_leaves_a_valid_partial_file_and_no_server(tmp_path):
    before = servers_running()
    # Far more rounds than it can run before the signal: it cannot finish on its own first.
    p = subprocess.Popen([*CMD, "--scale", "0.2", "-k", "200", "--no-build", "--out", str(tmp_path)],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait for what it says: its first progress line of round 1 (results.json is written by then);
    # a run that never says it is killed after 5 minutes, and the test fails.
    watchdog = threading.Timer(300, p.kill)
    watchdog.start()
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.startswith("round 1/200"):
            break
    assert (tmp_path / "results.json").exists(), "".join(seen)
    p.send_signal(signal.SIGINT)
    out, rest = p.communicate(timeout=120)
    watchdog.cancel()
    err = "".join(seen) + rest
    assert p.returncode == 130, err
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["interrupted"] and not doc["complete"]
    assert servers_running() == before
    assert os.path.exists(tmp_path / "report.md")
