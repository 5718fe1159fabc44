"""Output parsers of the load tools bench/engine.py drives: calls completed, errors and the measured
window, from each tool's own report."""

from __future__ import annotations

import json
import re

_UNIT_S = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_wrk(text: str) -> dict:
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m|h)\b", text)
    if not m:
        raise ValueError("no 'N requests in' line")
    requests, seconds = int(m.group(1)), float(m.group(2)) * _UNIT_S[m.group(3)]
    non2xx = 0
    if "Non-2xx" in text:
        n = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
        if not n:
            raise ValueError("a 'Non-2xx' line without its count")
        non2xx = int(n.group(1))
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    sock_errors = sum(int(g) for g in sock.groups()) if sock else 0
    return {"ok": requests - non2xx, "errors": non2xx + sock_errors, "seconds": seconds}


def parse_h2load(text: str) -> dict:
    m = re.search(r"finished in ([\d.]+)(us|ms|s|m|h)\b", text)
    r = re.search(
        r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
        r"(\d+) errored, (\d+) timeout",
        text,
    )
    if not (m and r):
        raise ValueError("no 'finished in' / 'requests: ... succeeded' lines")
    return {
        "ok": int(r.group(4)),
        "errors": int(r.group(5)) + int(r.group(6)) + int(r.group(7)),
        "seconds": float(m.group(1)) * _UNIT_S[m.group(2)],
    }


def parse_ghz(text: str) -> dict:
    d = json.loads(text)
    codes = d.get("statusCodeDistribution") or {}
    ok = int(codes.get("OK", 0))
    return {"ok": ok, "errors": int(d.get("count", 0)) - ok, "seconds": d["total"] / 1e9, "rps": d.get("rps")}


def parse_oha(text: str) -> dict:
    """oha's `--output-format json`: 2xx answers are ok; calls cut by the deadline (in flight at the end, which wrk
    and h2load do not count either) are neither."""
    d = json.loads(text)
    codes = {int(k): int(v) for k, v in (d.get("statusCodeDistribution") or {}).items()}
    ok = sum(n for code, n in codes.items() if 200 <= code < 300)
    failed = sum(n for k, n in (d.get("errorDistribution") or {}).items() if k != "aborted due to deadline")
    return {"ok": ok, "errors": sum(codes.values()) - ok + int(failed), "seconds": float(d["summary"]["total"])}


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


PARSERS = {"wrk": parse_wrk, "h2load": parse_h2load, "ghz": parse_ghz, "oha": parse_oha, "callbench": parse_callbench}
