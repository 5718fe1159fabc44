"""The machine a reproduction ran on, in one line, and the checkout it ran from, for its results.json."""

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def describe():
    model = ""
    try:
        model = next(x.split(":", 1)[1].strip() for x in open("/proc/cpuinfo") if x.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, {model}".strip(", ")


def checkout():
    """The commit HEAD names and whether the tree differs from it (environment.git_commit, git_dirty)."""

    def git(*args):
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    return git("rev-parse", "HEAD"), bool(git("status", "--porcelain"))
