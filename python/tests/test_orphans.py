"""The check every end-to-end test uses for "no process left behind" finds one that was."""

from __future__ import annotations

import subprocess
import time

from conftest import Orphans


def test_a_process_left_behind_is_found_and_one_stopped_is_not():
    orphans = Orphans()
    # The shell exits at once; its `sleep` outlives it, as a server a command forgot to stop would.
    subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 &"], check=True)
    left = orphans.left()
    assert len(left) == 1 and "sleep 60" in left[0], left
    pid = int(left[0].split()[0])
    subprocess.run(["kill", str(pid)], check=True)
    deadline = time.monotonic() + 30
    while any(line.startswith(f"{pid} ") for line in orphans.left()) and time.monotonic() < deadline:
        time.sleep(0.01)  # until it has died and been reaped (a poll, not a guess: the loop ends when it is)
    assert orphans.left() == []
