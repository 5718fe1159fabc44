"""The machine a reproduction ran on, in one line, for its results.json."""

import os
import platform


def describe():
    model = ""
    try:
        model = next(x.split(":", 1)[1].strip() for x in open("/proc/cpuinfo") if x.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, {model}".strip(", ")
