"""The Rust reference servers, started for the length of a `with` block through `callbench serve`
(the same manifests, build and readiness checks as `callbench run`), pinned with taskset, and always
stopped: on exit, on an exception, on Ctrl-C and on SIGTERM."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

READY = re.compile(r"ready at ((?:http|grpc)://(\S+))")


def find_repo(explicit: str | None = None) -> Path:
    """The callbench checkout: `explicit`, $CALLBENCH_ROOT, the current directory's ancestors, or
    the checkout this package was built from."""
    candidates = [explicit, os.environ.get("CALLBENCH_ROOT")]
    candidates += [str(p) for p in [Path.cwd(), *Path.cwd().parents]]
    candidates.append(_built_from())
    for c in candidates:
        if c and (Path(c) / "servers" / "rust-axum" / "server.toml").is_file():
            return Path(c).resolve()
    raise SystemExit("callbench: cannot find the callbench checkout (run inside it, or give --repo / CALLBENCH_ROOT)")


def _built_from() -> str | None:
    from . import _native

    return getattr(_native, "SOURCE_ROOT", None)


def target_dir(repo: Path) -> Path:
    """Cargo's target directory: $CARGO_TARGET_DIR (relative to the checkout) or the checkout's target/,
    as the callbench CLI finds it."""
    return repo / os.environ.get("CARGO_TARGET_DIR", "target")


def find_cli(repo: Path, explicit: str | None = None) -> str:
    """The callbench CLI: `explicit`, $CALLBENCH_BIN, the checkout's release build, or `callbench` on PATH."""
    for c in (explicit, os.environ.get("CALLBENCH_BIN"), str(target_dir(repo) / "release" / "callbench")):
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("callbench")
    if found:
        return found
    raise SystemExit("callbench: no callbench binary (cargo build --release -p callbench, or give --callbench PATH)")


class Server:
    """One server of the checkout, run by `callbench serve NAME` in its own process group, and checked by
    `callbench verify` before it is used."""

    def __init__(
        self,
        repo: Path,
        cli: str,
        name: str,
        cpus: list[int] | None,
        build: bool = True,
        host: str | None = None,
        netns: str | None = None,
        client_netns: str | None = None,
    ) -> None:
        """`host`: the address to listen on; `netns`: the network namespace to serve in, and `client_netns`
        the one to check it from (e.g. hosts of a `callbench lab`)."""
        self.repo, self.cli, self.name, self.cpus, self.build = repo, cli, name, cpus, build
        self.host, self.netns, self.client_netns = host, netns, client_netns
        self.proc: subprocess.Popen[str] | None = None
        self.addr = self.url = ""
        self.verify_record: dict | None = None
        self._log: list[str] = []

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 600.0) -> None:
        argv = [self.cli, "serve", self.name, "--mode", "preloaded"] + ([] if self.build else ["--no-build"])
        argv += ["--host", self.host] if self.host else []
        if self.cpus and shutil.which("taskset"):
            argv = ["taskset", "-c", ",".join(map(str, self.cpus))] + argv
        argv = in_netns(self.netns, argv)
        self.proc = subprocess.Popen(
            argv, cwd=self.repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        _RUNNING.add(self)
        found = threading.Event()
        threading.Thread(target=self._read, args=(found,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = "".join(self._log[-5:]).strip().replace("\n", " | ")
                raise RuntimeError(f"{self.name} did not start: {tail or 'no output'}")
        self.verify()

    def verify(self) -> None:
        """`callbench verify` of the running server against the contract's vectors (no flood): a server
        that answers wrongly is not measured."""
        argv = in_netns(self.client_netns, [self.cli, "verify", self.url, "--flood", "0", "-q"])
        r = subprocess.run(argv, cwd=self.repo, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            self.stop()
            lines = [line.strip() for line in (r.stdout + r.stderr).splitlines() if line.strip()]
            raise RuntimeError(f"{self.name} failed callbench verify: {' | '.join(lines[-3:]) or 'no output'}")
        m = re.search(r"verify: (\d+) passed, (\d+) failed", r.stdout)
        self.verify_record = {"passed": int(m.group(1)), "failed": int(m.group(2)), "failures": []} if m else None

    def _read(self, found: threading.Event) -> None:
        assert self.proc and self.proc.stderr
        for line in self.proc.stderr:
            self._log.append(line)
            m = READY.search(line)
            if m and not found.is_set():
                self.url, self.addr = m.group(1), m.group(2)
                found.set()

    @property
    def port(self) -> int | None:
        return int(self.addr.rsplit(":", 1)[1]) if ":" in self.addr else None

    @property
    def server_pid(self) -> int | None:
        """The server process itself (the child of `callbench serve`), for its CPU, RSS and I/O."""
        if not self.proc:
            return None
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def stop(self) -> None:
        """SIGTERM to `callbench serve` (it stops its server), SIGKILL to the group after 10 s."""
        proc, self.proc = self.proc, None
        _RUNNING.discard(self)
        if not proc or proc.poll() is not None:
            return
        server = None
        try:
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            server = int(children[0]) if children else None
        except OSError:
            pass
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            if sig == signal.SIGKILL and server:
                try:
                    os.killpg(os.getpgid(server), sig)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue


_RUNNING: set[Server] = set()


def in_netns(netns: str | None, argv: list[str]) -> list[str]:
    """`argv` run in network namespace `netns` (`ip netns exec` execs it: same process, same group)."""
    return ["ip", "netns", "exec", netns, *argv] if netns else argv


def stop_all() -> None:
    for s in list(_RUNNING):
        s.stop()


def stop_on_signals() -> None:
    """SIGTERM/SIGHUP end the program like Ctrl-C does (KeyboardInterrupt), so `with` blocks stop servers."""

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
