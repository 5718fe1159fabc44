"""Output parsers of the load tools bench/engine.py drives: calls completed, errors and the measured
window, from each tool's own report. The peers' reports (wrk, h2load, ghz, oha) are read by callbench's own
adapters (crates/peers, `callbench claims TOOL`): one parser of them, the one `callbench run` uses."""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Callable


def parse_peer(callbench: str, tool: str, text: str) -> dict:
    """`tool`'s output (wrk's, h2load's, ghz's or oha's stdout) read by its adapter in crates/peers, the one reader
    of the tools' reports, through `callbench claims TOOL`: calls ok and failed (calls in flight at the end, or cut
    by oha's deadline, are neither), the window in seconds, and the tool's own calls/s as `rps`."""
    done = subprocess.run([callbench, "claims", tool], input=text, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        why = done.stderr.strip().removeprefix("callbench: error: ")
        raise ValueError(why or f"`callbench claims {tool}` ended with exit {done.returncode}")
    d = json.loads(done.stdout)
    return {"ok": int(d["ok"]), "errors": int(d["errors"]), "seconds": float(d["seconds"]), "rps": d["throughput"]}


def parse_callbench(text: str) -> dict:
    d = json.loads(text)
    out = {
        "ok": int(d["calls"]["ok"]),
        "errors": int(d["calls"]["errors"]),
        "self_cpu_us": d.get("client_cpu_us_per_call"),
        "rate": d.get("rate"),
        "wire_sent": (d.get("wire_bytes_per_call") or {}).get("sent"),
        "p50_us": (d.get("latency_us") or {}).get("p50"),
    }
    if d.get("duration_s"):
        out["seconds"] = float(d["duration_s"])
    elif d.get("throughput_per_s"):
        out["seconds"] = out["ok"] / float(d["throughput_per_s"]) if out["ok"] else 0.0
    else:
        raise ValueError("neither duration_s nor throughput_per_s in callbench's JSON")
    return out


def parser(tool: str, callbench: str) -> Callable[[str], dict]:
    """The reader of `tool`'s output: callbench's JSON here, a load tool's by `callbench claims` (the binary
    `callbench`)."""
    if tool == "callbench":
        return parse_callbench
    return functools.partial(parse_peer, callbench, tool)
