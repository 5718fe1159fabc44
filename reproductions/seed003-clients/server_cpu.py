#!/usr/bin/env python3
"""One reading of the server's cost, printed as a JSON line: run before and after the calls a run times.

Inside `callbench serve … -- COMMAND`, CALLBENCH_SERVER_PID names the server's process group and
CALLBENCH_CPU_LIMIT_DIR (with --cpu-limit) its cgroup. The reading holds the group's CPU time
(utime + stime of each of its processes, every thread, in clock ticks, and the scheduler's ns of
its live threads), the wall clock, and the
cgroup's cpu.stat (periods, throttled periods and time, bursts) with its burst setting, so two
readings give the server's CPU and throttling over exactly what ran between them.
"""

import json
import os
import sys
import time
from pathlib import Path


def group_pids(group):
    """The processes whose process group is `group`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(entry.name)
        if fields and int(fields[2]) == group:
            pids.append(int(entry.name))
    return pids


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command's name: state, ppid, pgrp, …"""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def cpu_ticks(pids):
    """utime + stime (fields 14 and 15) of every process, in clock ticks."""
    total = 0
    for pid in pids:
        fields = stat_fields(pid)
        if fields:
            total += int(fields[11]) + int(fields[12])
    return total


def sched_ns(pids):
    """The scheduler's run time of every live thread, in ns: precise, but blind to threads that ended."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total += int(task.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def cgroup(directory):
    """cpu.stat as numbers, and the burst the group was given (None: the kernel has no burst file)."""
    if not directory:
        return None
    d = Path(directory)
    stat = dict(line.split() for line in (d / "cpu.stat").read_text().splitlines() if line.strip())
    burst = next((d / f for f in ("cpu.max.burst", "cpu.cfs_burst_us") if (d / f).is_file()), None)
    return {
        "stat": {k: int(v) for k, v in stat.items()},
        "burst_file": burst.name if burst else None,
        "burst_us": int(burst.read_text().split()[0]) if burst else None,
    }


def main():
    group = int(os.environ["CALLBENCH_SERVER_PID"])
    pids = group_pids(group)
    if not pids:
        sys.exit(f"server_cpu.py: no process in the group {group}")
    reading = {
        "wall_s": time.monotonic(),
        "cpu_ticks": cpu_ticks(pids),
        "sched_ns": sched_ns(pids),
        "ticks_per_s": os.sysconf("SC_CLK_TCK"),
        "cgroup": cgroup(os.environ.get("CALLBENCH_CPU_LIMIT_DIR")),
    }
    print(json.dumps(reading))


if __name__ == "__main__":
    main()
