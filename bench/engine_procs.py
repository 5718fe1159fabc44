"""The processes bench/engine.py runs: every one started in its own process group and stopped on the way out,
the reference servers (pinned, announcing their port, keeping their count of answered calls), and one pinned,
time-bounded client run with its CPU from wait4 and what the server and others used meanwhile."""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRA_PATH = [Path.home() / "go" / "bin", Path("/usr/local/go/bin"), Path.home() / ".cargo" / "bin"]
CLK_TCK = os.sysconf("SC_CLK_TCK")

# ---------------------------------------------------------------------------------------------------------------
# Processes: every one started here is registered and killed (whole process group) on the way out.


class Procs:
    def __init__(self) -> None:
        self.live: dict[int, subprocess.Popen] = {}

    def start(self, argv, **kw) -> subprocess.Popen:
        p = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, **kw)
        self.live[p.pid] = p
        return p

    def forget(self, p):
        self.live.pop(p.pid, None)

    def stop(self, p, grace=5.0):
        """SIGTERM to the group, SIGKILL after `grace` seconds; reaps it."""
        if p.returncode is None:
            _killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                _killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)
        _killpg(p.pid, signal.SIGKILL)  # anything left in its group
        self.forget(p)

    def stop_all(self):
        for p in list(self.live.values()):
            try:
                self.stop(p, grace=2.0)
            except Exception as e:  # noqa: BLE001 - keep stopping the others
                print(f"warning: could not stop pid {p.pid}: {e}", file=sys.stderr)


def _killpg(pid, sig):
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


PROCS = Procs()


def which(name: str) -> str | None:
    path = os.pathsep.join([os.environ.get("PATH", "")] + [str(p) for p in EXTRA_PATH])
    return shutil.which(name, path=path)


def cores_busy_seconds(cpus: list[int]) -> float:
    """Busy time (user, nice, system, irq, softirq, steal) of the given CPUs, from /proc/stat."""
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            name, *vals = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                v = [int(x) for x in vals]
                total += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
    return total / CLK_TCK


def cpu_list(spec: str) -> list[int]:
    """taskset's list syntax: 0, 0-3, 0,2."""
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def proc_cpu_seconds(pid: int) -> float:
    """user + sys CPU of a running process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14 and 15)


# ---------------------------------------------------------------------------------------------------------------
# Servers


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    port: int
    log: Path
    # The server's own count of the calls it answered (CALLBENCH_ANSWERED_FILE: the Rust reference servers keep
    # it in a mapped file), or None for a server that keeps none.
    answered: Path | None = None

    def answered_calls(self) -> int | None:
        try:
            data = self.answered.read_bytes()[:8] if self.answered else b""
        except OSError:
            return None
        return int.from_bytes(data, sys.byteorder) if len(data) == 8 else None


def start_server(binary: str, name: str, cpu: str, users: Path, workdir: Path, extra=(), timeout=30.0) -> Server:
    log = workdir / f"{name}.stderr"
    answered = workdir / f"answered-{name}"  # a server that keeps no count never makes it
    argv = ["taskset", "-c", cpu, binary, "--host", "127.0.0.1", "--port", "0", "--workers", "1", "--users", str(users)]
    argv += list(extra)
    env = dict(os.environ, CALLBENCH_ANSWERED_FILE=str(answered))
    p = PROCS.start(argv, stdout=subprocess.PIPE, stderr=open(log, "wb"), cwd=workdir, env=env)
    stdout = p.stdout
    assert stdout is not None  # stdout=PIPE
    sel = selectors.DefaultSelector()
    sel.register(stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    buf = b""
    try:
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise RuntimeError(f"{name} did not say 'listening on' within {timeout:.0f}s (log: {log})")
            chunk = os.read(stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"{name} exited before listening: {log.read_text(errors='replace')[-2000:]}")
            buf += chunk
    finally:
        sel.close()
    line = buf.split(b"\n", 1)[0].decode(errors="replace")
    m = re.search(r"listening on (\S+):(\d+)", line)
    if not m:
        raise RuntimeError(f"{name}: unexpected first line {line!r}")
    # Keep draining its stdout so it never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in iter(lambda: stdout.read(65536), b"")], daemon=True).start()
    return Server(name, p, int(m.group(2)), log, answered)


# ---------------------------------------------------------------------------------------------------------------
# One client run: pinned, bounded, CPU from wait4.


@dataclass
class Run:
    tool: str
    protocol: str
    rep: int
    ok: int = 0
    errors: int = 0
    seconds: float = 0.0  # the tool's own measuring window
    wall: float = 0.0  # the process's whole life
    cpu: float = 0.0  # user + sys of the client process, from wait4
    server_cpu: float = 0.0  # share of one CPU the server used during the tool's window
    foreign: float = 0.0  # CPU used on the two pinned CPUs by anything but client and server, share of one CPU
    status: int = 0
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        return self.ok / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_us_per_call(self) -> float:
        return self.cpu * 1e6 / self.ok if self.ok else float("nan")


@dataclass
class ClientResult:
    code: int
    cpu: float  # user + sys of the client, from wait4
    wall: float
    server_cpu: float  # seconds of CPU the server used meanwhile
    foreign: float  # seconds of CPU others used meanwhile on the client's and the server's CPUs
    out: str
    err: str
    samples: list  # (seconds since start, value) from the sampler, if one was given


def server_received_bytes(port: int) -> int:
    """Payload bytes received so far by the server's established TCP connections on `port` (the kernel's
    tcp_info bytes_received, read with ss): what the client has sent it, counted outside the client."""
    out = subprocess.run(
        ["ss", "-tinH", "state", "established", f"( sport = :{port} )"], capture_output=True, text=True, timeout=10
    ).stdout
    return sum(int(x) for x in re.findall(r"bytes_received:(\d+)", out))


def run_client(
    argv, cpu: str, timeout: float, server: Server | None, workdir: Path, server_cpus: str, sample_at=(), sampler=None
) -> ClientResult:
    """Runs argv pinned to `cpu`, at most `timeout` seconds, and measures what it and the server used; calls
    `sampler()` at each of the `sample_at` seconds after the start (while the client runs)."""
    out = tempfile.TemporaryFile(dir=workdir)
    err = tempfile.TemporaryFile(dir=workdir)
    cores = sorted(set(cpu_list(cpu) + cpu_list(server_cpus)))
    s0 = proc_cpu_seconds(server.proc.pid) if server else 0.0
    b0 = cores_busy_seconds(cores)
    t0 = time.monotonic()
    p = PROCS.start(["taskset", "-c", cpu] + list(argv), stdout=out, stderr=err, cwd=ROOT)
    status, ru, killed = None, None, False
    pending, samples = sorted(sample_at), []
    try:
        deadline = t0 + timeout
        while True:
            pid, st, r = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                status, ru = st, r
                break
            if pending and sampler and time.monotonic() - t0 >= pending[0]:
                pending.pop(0)
                a = time.monotonic()
                value = sampler()
                samples.append(((a + time.monotonic()) / 2 - t0, value))  # the middle of the read
                continue
            if time.monotonic() > deadline and not killed:
                killed = True
                _killpg(p.pid, signal.SIGTERM)
                deadline = time.monotonic() + 3
            elif killed and time.monotonic() > deadline:
                _killpg(p.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.02)
    finally:
        if status is None:  # interrupted while waiting: the caller's finally stops it
            pass
        else:
            p.returncode = os.waitstatus_to_exitcode(status)
            _killpg(p.pid, signal.SIGKILL)  # no stray children
            PROCS.forget(p)
    wall = time.monotonic() - t0
    s1 = proc_cpu_seconds(server.proc.pid) if server else 0.0
    b1 = cores_busy_seconds(cores)
    out.seek(0)
    err.seek(0)
    text, etext = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    out.close()
    err.close()
    code = os.waitstatus_to_exitcode(status)
    if killed:
        etext += f"\n[bench: killed after {timeout:.0f}s]"
    used = ru.ru_utime + ru.ru_stime
    return ClientResult(code, used, wall, s1 - s0, max(0.0, (b1 - b0) - used - (s1 - s0)), text, etext, samples)


# ---------------------------------------------------------------------------------------------------------------
# What an installed tool can do, asked before a run.


def oha_speaks_http3(oha: str) -> bool:
    """Whether oha was built with its `http3` feature: without it `--http-version 3` is refused before any call."""
    try:
        r = subprocess.run(
            [oha, "--no-tui", "--http-version", "3", "-n", "1", "--insecure", "https://127.0.0.1:9/"],
            capture_output=True,
            timeout=20,
        )
        return b"not been built with HTTP/3" not in r.stdout + r.stderr
    except Exception:  # noqa: BLE001
        return False


def callbench_load_works(cb: str) -> bool:
    try:
        r = subprocess.run([cb, "load", "--help"], capture_output=True, timeout=20)
        return r.returncode == 0
    except Exception:  # noqa: BLE001
        return False
