"""Shared fixtures: the checkout (for the contract's vectors and the servers) and users.json; the processes
a command started below it, to check that none outlived it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import callbench

REPO = Path(__file__).resolve().parents[2]


def vectors(workload: str) -> list[dict]:
    return json.loads((REPO / "contract" / "vectors" / f"{workload}.json").read_text())["vectors"]


@pytest.fixture(scope="session")
def users(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("users") / "users.json"
    callbench.write_users_json(path)
    return path


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after `(comm)` (state, ppid, ...); None once it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def descendants(pid: int) -> dict[int, str]:
    """Every process below `pid` (children, theirs...) with its command line, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields and len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = _cmdline(child)
            todo.append(child)
    return found


def still_running(processes: dict[int, str]) -> list[str]:
    """Those of `processes` still alive (not a zombie) and still running the same command."""
    left = []
    for pid, cmdline in processes.items():
        fields = _stat(pid)
        if fields and fields[0] != "Z" and _cmdline(pid) == cmdline:
            left.append(f"{pid} {cmdline}")
    return left


class Descendants:
    """Collects every process started below `pid` while it runs (polled every 20 ms on a thread: the
    servers a run starts live for seconds), so that a test can check none of them outlived it, whatever
    other programs on the machine run meanwhile."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.seen: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set() and _stat(self.pid) and _stat(self.pid)[0] != "Z":
            self.seen.update(descendants(self.pid))
            self._stop.wait(0.02)

    def stop(self) -> dict[int, str]:
        self._stop.set()
        self._thread.join(timeout=60)
        return self.seen
