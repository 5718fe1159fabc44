#!/usr/bin/env python3
"""Does `callbench run suites/tools.toml` tell the same story as bench/engine.py about callbench's own cost?

Both measure callbench's client CPU per call against wrk (HTTP/1.1), h2load (HTTP/2) and ghz (gRPC) on the same
reference servers. This reads a tools run's results.json and an engine.py `--json` file and prints, for each pair,
callbench / peer client CPU per call from each with its 95% interval — the median of every ratio between the two
tools' repetitions (Hodges–Lehmann) and the interval of the Mann–Whitney rank test, the rule `callbench run` uses —
and whether the two intervals overlap (agree within noise).

    python3 bench/engine.py --reps 10 --seconds 5 --h2-connections 1 --h2-streams 50 --json all.json
    python3 bench/engine.py --reps 10 --seconds 5 --protocols grpc --ghz-templates --json ghz.json
    python3 bench/agreement.py results/<tools run>/results.json all.json ghz.json

The suite runs every tool as its users do; engine.py runs ghz with its per-call templates off unless
`--ghz-templates`, and HTTP/2 as 5 connections × 10 streams unless told 1 × 50 as the suite does. A later engine
file's runs replace an earlier one's for the protocols it holds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

# tools.toml experiment -> (engine.py protocol, the peer both run)
PAIRS = {"rest-h1": ("HTTP/1.1", "wrk"), "rest-h2": ("HTTP/2", "h2load"), "grpc": ("gRPC", "ghz")}
LEVEL = 0.95


def u_counts(m: int, n: int) -> list[int]:
    """How many orderings of m values against n give each value of the Mann–Whitney U (0..mn)."""
    # f[i][j][u]: orderings of i and j values with U = u; built up one value at a time.
    f = [[[0] * (m * n + 1) for _ in range(n + 1)] for _ in range(m + 1)]
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                f[i][j][0] = 1
                continue
            for u in range(i * j + 1):
                # The largest value is one of the i (it beats all j) or one of the j.
                f[i][j][u] = (f[i - 1][j][u - j] if u >= j else 0) + f[i][j - 1][u]
    return f[m][n]


def rank_ratio(a: list[float], b: list[float]) -> tuple[float, float, float, float] | None:
    """a / b by rank: (median of all pairwise ratios, lo, hi, coverage of [lo, hi])."""
    if not a or not b or any(v <= 0 or not math.isfinite(v) for v in a + b):
        return None
    d = sorted(math.log(x) - math.log(y) for x in a for y in b)
    counts = u_counts(len(a), len(b))
    total = sum(counts)
    pairs = len(d)
    coverage = lambda k: 1 - 2 * sum(counts[:k]) / total  # noqa: E731
    k = 1
    while k < (pairs + 1) // 2 and coverage(k + 1) >= LEVEL:
        k += 1
    mid = d[pairs // 2] if pairs % 2 else (d[pairs // 2 - 1] + d[pairs // 2]) / 2
    return math.exp(mid), math.exp(d[k - 1]), math.exp(d[pairs - k]), coverage(k)


def from_suite(path: Path) -> dict[tuple[str, str], list[float]]:
    """(protocol, tool) -> client CPU-µs per call of every repetition of a tools run."""
    results = json.loads(path.read_text())
    out: dict[tuple[str, str], list[float]] = {}
    for cell in results["cells"]:
        pair = PAIRS.get(cell["experiment"])
        tool = (cell.get("params") or {}).get("client", "callbench")
        if not pair or tool not in ("callbench", pair[1]):
            continue
        values = [r["client_cpu_us_per_call"] for r in cell["runs"] if r.get("client_cpu_us_per_call")]
        out.setdefault((pair[0], tool), []).extend(values)
    return out


def from_bench(paths: list[Path]) -> dict[tuple[str, str], list[float]]:
    """(protocol, tool) -> client CPU-µs per call of every good run of engine.py (wait4 CPU / calls it reports);
    a later file's protocols replace an earlier file's."""
    out: dict[tuple[str, str], list[float]] = {}
    for path in paths:
        this: dict[tuple[str, str], list[float]] = {}
        for r in json.loads(path.read_text())["runs"]:
            if r.get("note") or r.get("ok", 0) <= 0:
                continue
            this.setdefault((r["protocol"], r["tool"]), []).append(r["cpu"] / r["ok"] * 1e6)
        protocols = {protocol for protocol, _ in this}
        out = {k: v for k, v in out.items() if k[0] not in protocols} | this
    return out


def fmt(r) -> str:
    if r is None:
        return "–"
    median, lo, hi, coverage = r
    note = "" if coverage >= LEVEL else f" (only a {coverage * 100:.0f}% interval)"
    return f"{median:.2f} [{lo:.2f} – {hi:.2f}]{note}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tools_results", type=Path, help="results.json of `callbench run suites/tools.toml`")
    p.add_argument("engine_json", type=Path, nargs="+", help="files of `python3 bench/engine.py --json FILE`")
    a = p.parse_args()
    for f in (a.tools_results, *a.engine_json):
        if not f.is_file():
            print(f"agreement: no file {f}", file=sys.stderr)
            return 2
    try:
        suite, bench = from_suite(a.tools_results), from_bench(a.engine_json)
    except (ValueError, KeyError, TypeError) as e:
        print(f"agreement: cannot read the inputs: {e!r}", file=sys.stderr)
        return 2
    print("| protocol | callbench / peer, client CPU per call | suites/tools.toml | bench/engine.py | agree |")
    print("|---|---|---:|---:|---|")
    disagree = 0
    for protocol, peer in PAIRS.values():
        s = rank_ratio(suite.get((protocol, "callbench"), []), suite.get((protocol, peer), []))
        b = rank_ratio(bench.get((protocol, "callbench"), []), bench.get((protocol, peer), []))
        if s is None or b is None:
            verdict = "not measured in both"
        elif s[1] <= b[2] and b[1] <= s[2]:
            verdict = "yes (the intervals overlap)"
        else:
            verdict = "no"
            disagree += 1
        n = f"{len(suite.get((protocol, 'callbench'), []))} / {len(bench.get((protocol, 'callbench'), []))} reps"
        print(f"| {protocol} | vs {peer} ({n}) | {fmt(s)} | {fmt(b)} | {verdict} |")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
