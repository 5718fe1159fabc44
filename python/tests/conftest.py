"""Shared fixtures: the checkout (for the contract's vectors and the servers) and users.json; the processes
a command left behind, to check that none outlived it."""

from __future__ import annotations

import ctypes
import json
import os
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
    """Every process below `pid` (children, theirs...) now, with its command line, from /proc."""
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


PR_SET_CHILD_SUBREAPER = 36


class Orphans:
    """What a command left running when it exited, found without watching it: this process becomes the
    "subreaper" of its descendants (prctl PR_SET_CHILD_SUBREAPER), so a process whose parent exits is
    adopted by us instead of init. Whatever the command started and did not stop is then our child once
    the command is gone, however briefly it lived. Create before starting the command; `left()` after it
    exited lists the adopted processes still alive (and reaps those that have since ended)."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        self.before = set(self._children())

    @staticmethod
    def _children() -> dict[int, str]:
        me = str(os.getpid())
        found = {}
        for entry in Path("/proc").iterdir():
            fields = _stat(int(entry.name)) if entry.name.isdigit() else None
            if fields and len(fields) > 1 and fields[1] == me:
                found[int(entry.name)] = fields[0]
        return found

    def left(self) -> list[str]:
        alive = []
        for pid, state in self._children().items():
            if pid in self.before:
                continue
            if state == "Z":
                try:
                    os.waitpid(pid, os.WNOHANG)  # adopted and ended since: ours to reap
                except ChildProcessError:
                    pass
            else:
                alive.append(f"{pid} {_cmdline(pid)}")
        return alive
