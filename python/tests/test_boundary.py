"""`python -m callbench.boundary` end to end: a small run against the real servers prints the table,
writes a results.json that callbench reads back, and leaves no server; bad flags exit non-zero; Ctrl-C
leaves a valid partial file; a busy process on the server's CPU marks the over-the-wire cells disturbed.
No test sleeps for the code to be done: each waits for what the command says or does (or, for the busy
loop, for its CPU time to show it runs), with a generous deadline only to fail."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from conftest import REPO, Orphans, descendants, still_running

from callbench.servers import target_dir

CMD = [sys.executable, "-m", "callbench.boundary"]


def run(*args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The command's result and the processes it left running when it exited."""
    orphans = Orphans()
    p = subprocess.Popen([*CMD, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), orphans.left()


def test_a_small_run_prints_the_table_and_writes_valid_results(tmp_path):
    r, left = run("--scale", "0.002", "-k", "2", "--noop-calls", "200", "--no-build", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stderr.strip().splitlines()[-1].startswith("every round measured in "), r.stderr
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
    # Measured as `callbench run` measures: idle CPUs kept awake where allowed, every timing interval
    # widened to the fixed loop's spread on the pinned CPUs.
    steadiness = doc["steadiness"]
    assert steadiness["cpus"] and doc["suite"]["interval_floor"] == steadiness["loop_spread"]
    assert steadiness["idle"]["held"] == os.access("/dev/cpu_dma_latency", os.W_OK), steadiness["idle"]
    verified = [s["verify"] for s in doc["servers"] if "+" in s["name"]]
    assert len(verified) == 4 and all(v and v["passed"] > 50 and v["failed"] == 0 for v in verified), verified
    # callbench's own CLI reads it back (same schema as `callbench run`).
    report = subprocess.run(
        [str(target_dir(REPO) / "release" / "callbench"), "report", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    assert left == [], "outlived the run"


def test_bad_flags_exit_non_zero_with_one_line():
    for args in (["--only", "carrier-pigeon"], ["--scale", "0"], ["--experiments", "nope"], ["-k", "0"]):
        r, _ = run(*args, timeout=60)
        assert r.returncode != 0 and r.stderr.strip(), args
        assert "Traceback" not in r.stderr, r.stderr


def test_ctrl_c_leaves_a_valid_partial_file_and_no_server(tmp_path):
    # Rounds of about a second here (two mechanisms, small counts), and 1000 of them: the run cannot end
    # on its own before the signal, which goes as soon as it says round 2 began (round 1 is then in
    # results.json). A run that never says so is killed after 5 minutes, and the test fails.
    rounds = 1000
    orphans = Orphans()
    p = subprocess.Popen(
        [
            *CMD,
            "--only",
            "pyo3,grpcio",
            "--experiments",
            "noop,step",
            "--scale",
            "0.05",
            "-k",
            str(rounds),
            "--no-build",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal gives it: a test run started in the background (nohup,
        # `cmd &` in a script) hands its children SIGINT ignored, and Python then keeps
        # it ignored instead of raising KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    watchdog = threading.Timer(300, p.kill)
    watchdog.start()
    assert p.stderr is not None  # PIPE
    try:
        seen = []
        for line in p.stderr:
            seen.append(line)
            if line.startswith(f"round 2/{rounds}:"):
                break
        assert seen and seen[-1].startswith(f"round 2/{rounds}:"), "".join(seen)
        started = descendants(p.pid)  # its servers, running now
        assert any("rust-tonic" in c for c in started.values()), started
        p.send_signal(signal.SIGINT)
        out, rest = p.communicate(timeout=120)
    finally:
        watchdog.cancel()
        if p.poll() is None:
            p.kill()
            p.communicate()
    err = "".join(seen) + rest
    assert p.returncode == 130, err
    assert "interrupted after" in rest, err
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["interrupted"] and not doc["complete"]
    assert doc["cells"] and all(c["status"] == "interrupted" and c["runs"] for c in doc["cells"]), doc["cells"]
    assert still_running(started) == [] and orphans.left() == [], "outlived the run"
    assert os.path.exists(tmp_path / "report.md")


def cpu_ticks(pid: int) -> int:
    """utime + stime of `pid` in clock ticks (0 when it cannot be read)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def test_a_busy_process_on_the_server_cpu_marks_the_wire_cells_disturbed(tmp_path):
    # The run pins itself to the first CPU it may use and the servers to the others: the busy loop
    # goes where the servers go (beside the client on a 1-CPU machine).
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = cpus[1] if len(cpus) > 1 else cpus[0]
    busy = subprocess.Popen(["taskset", "-c", str(server_cpu), "sh", "-c", "while :; do :; done"])
    try:
        deadline = time.monotonic() + 60
        while cpu_ticks(busy.pid) < 2:  # running, not only started
            assert time.monotonic() < deadline, "the busy loop never ran"
            time.sleep(0.01)
        # The share of a CPU is read over 20 /proc/stat ticks (0.2 s) at least: 4000 calls over the wire
        # take 0.5 s or more (with 1000, a fresh clone's run on 2026-11-28 read no share and failed here).
        r, left = run(
            "--only",
            "pyo3,grpcio",
            "--experiments",
            "noop",
            "--noop-calls",
            "4000",
            "-k",
            "2",
            "--no-build",
            "--out",
            str(tmp_path),
        )
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode == 0, r.stderr + r.stdout
    doc = json.loads((tmp_path / "results.json").read_text())
    wire = next(c for c in doc["cells"] if c["id"] == "noop/noop/grpcio+rust-tonic")
    # Each repetition judged on the loop it timed; measured again up to the cell's budget (its
    # repetitions), and still disturbed: the busy loop never left.
    for rep in wire["runs"]:
        assert rep["interference"]["server_cpus_other"] > 0.1, rep["interference"]
        assert "of the server CPUs used by other processes" in rep["disturbed"], rep
    assert wire["reruns"] >= 2, wire
    assert wire["disturbed"].startswith("2 of 2 repetitions disturbed: "), wire["disturbed"]
    assert "disturbed (" in r.stderr and "measuring it again" in r.stderr, r.stderr
    if len(cpus) > 1:
        inproc = next(c for c in doc["cells"] if c["id"] == "noop/noop/pyo3")
        # In-process: no server side to judge, and the client's CPU was free (1000 calls are also too
        # short a window to judge at all: no interference recorded).
        assert not any("used by other processes" in (rep.get("disturbed") or "") for rep in inproc["runs"])
    assert left == [], "outlived the run"
