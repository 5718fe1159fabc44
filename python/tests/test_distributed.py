"""`python -m callbench.distributed` on a real Ray cluster of this machine: a head and two worker nodes
(`ray start --block`, each its own process group, ended by its id, never `ray stop`), a real server counting
the calls it answers. The split run's merged count is the sum of the workers' and the server's own; the
workers start together; a node killed mid-run fails the run and is named."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import pytest

from callbench import distributed
from callbench.servers import Server, find_cli

from conftest import REPO

ray = pytest.importorskip("ray")
RAY = Path(sys.executable).with_name("ray")
# Nodes are declared dead after 4 missed checks 0.5 s apart (Ray's default takes about 15 s).
SYSTEM_CONFIG = json.dumps({"health_check_period_ms": 500, "health_check_failure_threshold": 4})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    """One `ray start --block` and everything it started (its own session, killed as a group)."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log.open("w")
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        self.proc = subprocess.Popen([str(RAY), "start", "--block", "--disable-usage-stats", *args], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True, env=env)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.log.close()


def wait_for(what: str, check, timeout: float = 120.0, logs: Path | None = None):
    """Polls `check` until it returns something true: what the code does, not a sleep. On a timeout, the
    end of every node's log in `logs`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}" + (tails(logs) if logs else ""))


def tails(logs: Path) -> str:
    """The end of every node's log."""
    return "".join(f"\n--- {p.name}:\n" + "".join(p.read_text().splitlines(True)[-15:]) for p in sorted(logs.glob("*.log")))


@pytest.fixture(scope="module")
def cluster():
    # Ray's socket paths must stay short: a directory of its own directly under /tmp.
    temp = Path(tempfile.mkdtemp(prefix="cbray-", dir="/tmp"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    # 100 MB of object store each (Ray's default is 30% of the memory per node): results are a few kB.
    common = ["--node-ip-address", "127.0.0.1", "--temp-dir", str(temp), "--object-store-memory", "100000000"]
    head = ["--head", "--port", str(port), "--num-cpus", "0", "--include-dashboard", "false",
            f"--system-config={SYSTEM_CONFIG}"]
    nodes = [Node(head + common, temp / "head.log")]

    def alive(n: int):
        if any(node.proc.poll() is not None for node in nodes):
            raise AssertionError("a Ray node ended at its start" + tails(temp))
        return _alive_nodes(address) >= n

    try:
        for i in range(2):
            wait_for(f"{len(nodes)} alive Ray node(s)", lambda: alive(len(nodes)), logs=temp)
            nodes.append(Node(["--address", address, "--num-cpus", "1", *common], temp / f"node{i + 1}.log"))
        wait_for("3 alive Ray nodes", lambda: alive(3), logs=temp)
        yield address, nodes
    finally:
        for n in reversed(nodes):
            n.kill()
        shutil.rmtree(temp, ignore_errors=True)


def _alive_nodes(address: str) -> int:
    r = subprocess.run([sys.executable, "-c", "import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
                        "print(sum(n['Alive'] for n in ray.nodes()))", address], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, RAY_USAGE_STATS_ENABLED="0"))
    return int(r.stdout.strip() or 0) if r.returncode == 0 else 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    counter = tmp_path_factory.mktemp("answered") / "count"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CALLBENCH_ANSWERED_FILE", str(counter))
        with Server(REPO, find_cli(REPO), "rust-axum", None, build=False) as s:
            yield s, counter


def answered(counter: Path) -> int:
    return struct.unpack("<Q", counter.read_bytes()[:8])[0] if counter.exists() else 0


class distributed_run:
    """`python -m callbench.distributed` in the background; ended by its id when the test ends."""

    def __init__(self, address: str, *args: str) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "callbench.distributed", "--address", address, *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, RAY_USAGE_STATS_ENABLED="0"))

    def __enter__(self) -> subprocess.Popen:
        return self.p

    def __exit__(self, *exc: object) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.communicate()


def test_the_split_is_exact_and_even():
    assert distributed.split(3) == [(0, Fraction(1, 3)), (Fraction(1, 3), Fraction(2, 3)), (Fraction(2, 3), 1)]
    # The fastest round trip's midpoint: 1 s sent, worker read 101.0005, answer back at 1.001 s.
    clock = distributed.estimate_clock([(0.0, 100.0, 0.01), (1.0, 101.0005, 1.001), (2.0, 102.3, 2.2)])
    assert clock.offset == pytest.approx(100.0) and clock.uncertainty == pytest.approx(0.0005)
    assert distributed.planned_length(["-z", "2s", "--warmup", "500ms"]) == 2.5
    assert distributed.planned_length(["--rate-shape", "0..10@1s,10@2s"]) == 3.0
    assert distributed.behind_schedule({"rate": {"requested": 100.0, "achieved": 90.0, "not_started": 0},
                                        "duration_s": 1.0, "calls": {"ok": 90, "errors": 0},
                                        "client_cpu_us_per_call": 10.0}) == ["achieved 90.0/s of its 100.0/s"]


def test_two_workers_make_the_one_machine_run(cluster, server):
    address, _ = cluster
    s, counter = server
    before = answered(counter)
    with distributed_run(address, "--workers", "2", f"http://{s.addr}/", "--workload", "students",
                         "--rate", "300", "-z", "2s", "--warmup", "200ms") as p:
        out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    result = json.loads(out)
    merged = result["merged"]
    workers = [w["report"] for w in result["per_worker"]]
    assert [w["segment"] for w in result["per_worker"]] == ["0:1/2", "1/2:1"]
    assert len({w["node_id"] for w in result["per_worker"]}) == 2, "one worker per node"
    assert merged["calls"]["ok"] == sum(w["calls"]["ok"] for w in workers) > 0
    assert merged["rate"]["requested"] == 300.0
    # Warm-up calls reach the server too: its count is every call the workers made.
    made = sum(w["calls"]["ok"] + w["calls"]["errors"] for w in workers)
    assert answered(counter) - before >= made
    assert result["start_skew_ms"] <= result["skew_limit_ms"], result
    assert result["valid"] and not result["problems"]


def test_a_node_killed_mid_run_fails_the_run_and_is_named(cluster, server):
    address, nodes = cluster
    s, counter = server
    before = answered(counter)
    with distributed_run(address, "--workers", "2", f"http://{s.addr}/", "--workload", "students",
                         "--rate", "200", "-z", "20s") as p:
        # The run has started once the server answers its calls.
        wait_for("the run's first calls", lambda: answered(counter) > before + 50 or p.poll() is not None)
        assert p.poll() is None, p.communicate()
        nodes[2].kill()
        out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    result = json.loads(out)
    assert not result["valid"]
    dead = [w for w in result["per_worker"] if w["error"]]
    assert len(dead) == 1 and "died" in dead[0]["error"], result["per_worker"]
    assert dead[0]["name"] in " ".join(result["problems"]) and "invalid run" in err
    # What the other worker measured is kept.
    assert result["merged"]["calls"]["ok"] > 0


def test_a_cluster_that_is_not_there_is_a_one_line_error():
    with distributed_run(f"127.0.0.1:{free_port()}", "--workers", "2", "inproc:noop", "-n", "10") as p:
        out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and out == ""
    assert err.strip().startswith("callbench: error: cannot join the Ray cluster") and len(err.strip().splitlines()) == 1
