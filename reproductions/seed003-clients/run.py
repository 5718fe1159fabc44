#!/usr/bin/env python3
"""Seed 003's runs made by the article's own clients: a fresh JVM per run, across its link, on a t2.small-like CPU.

The article timed runs of 1000 to 5000 sequential car + driver calls from a desktop to a t2.small EC2
instance ~200 miles away: a Spring WebFlux WebClient making blocking calls to Spring Boot, and a
grpc-java blocking stub, each run its own JVM. Here those clients (clients/seed003-java) call the
reference servers java-spring and java-grpc across `callbench serve --network rtt=14ms,…` (the link
of suites/seed003-network.toml), the server first warmed by callbench's engine (the article's servers
ran as long-lived jars), then held to a whole CPU or to a t2.small's 20% baseline (`--cpu-limit`).

A run of N calls is the first N calls of a fresh JVM's run: each JVM makes the largest N, and its
running total is read at every N, as the article's separate runs of N would have measured it. The
same server then takes the same calls from callbench's engine, whose client is warm, for the cost
of the JVM client's warm-up.

    sudo reproductions/seed003-clients/run.py            # writes results.json and report.md here (~16 min)
    reproductions/seed003-clients/run.py --render        # report.md again from results.json (left as it is)
    reproductions/seed003-clients/run.py --check         # report.md is what results.json renders

Root is needed (network namespaces and the cgroup of a CPU limit).
"""

import argparse
import datetime
import itertools
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import describe  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLIENT = ROOT / "clients/seed003-java"
JAR = CLIENT / "target/seed003-clients.jar"
# The article's runs (ms, the mean of 10), for N = 1000..5000.
ARTICLE = {"grpc": [14478, 25239, 37823, 53073, 62624], "rest": [16451, 30181, 43996, 58221, 71300]}
SERVERS = {"rest": "java-spring", "grpc": "java-grpc"}
LINK = "rtt={rtt}ms,bandwidth_down=100mbit,bandwidth_up=20mbit"


def build():
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(CLIENT / "pom.xml"), "-DskipTests", "package"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def serve(kind, limit, rtt, runs, calls, engine_calls, workdir):
    """One server across the link: warmed, then `runs` fresh client JVMs, then the engine."""
    out = workdir / f"{kind}-{limit or 'full'}"
    out.mkdir()
    load = f'{ROOT / "callbench"} load -q -o json --workload cars "$CALLBENCH_TARGET"'
    script = "set -e\n" + f"{load} -z 10s -c 16 > {out}/warm.json\n"
    for r in range(runs):
        script += f'taskset -c 0 java -jar {JAR} {kind} "$CALLBENCH_TARGET" {calls} {r + 1} > {out}/run-{r}.jsonl\n'
    script += f"taskset -c 0 {load} -n {engine_calls} -c 1 > {out}/engine.json\n"
    argv = [str(ROOT / "callbench"), "serve", SERVERS[kind], "--network", LINK.format(rtt=rtt)]
    if limit:
        argv += ["--cpu-limit", limit]
    argv += ["--", "sh", "-c", script]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        sys.exit(f"run.py: {' '.join(argv[:8])} … failed ({done.returncode}):\n{done.stderr[-3000:]}")
    measured_rtt = re.search(r"the link alone costs (\d+) µs", done.stderr)
    throttled = re.search(r"held \S+ back in (\d+) of (\d+) periods of 100 ms, ([\d.]+) ms in all", done.stderr)
    jvms = []
    for r in range(runs):
        lines = [json.loads(line) for line in (out / f"run-{r}.jsonl").read_text().splitlines() if line.strip()]
        summary = lines[-1]
        us = [line["us"] for line in lines[:-1]]
        if summary.get("failed") or len(us) != calls or not all(line["ok"] for line in lines[:-1]):
            sys.exit(f"run.py: {kind} run {r}: not {calls} successful calls ({summary})")
        jvms.append({"us": us, "jvm_to_first_call_ms": summary["jvm_to_first_call_ms"]})
    engine = json.loads((out / "engine.json").read_text())
    warm = json.loads((out / "warm.json").read_text())
    return jvms, engine, warm, measured_rtt, throttled


def cell(kind, limit, rtt, marks, jvms, engine, warm, measured_rtt, throttled):
    totals = {n: [sum(j["us"][:n]) / 1000 for j in jvms] for n in marks}
    step = 1000
    per_block = [
        statistics.median(sum(j["us"][i : i + step]) / step / 1000 for j in jvms) for i in range(0, marks[-1], step)
    ]
    engine_mean_ms = engine["latency_us"]["mean"] / 1000
    return {
        "client": kind,
        "server": SERVERS[kind],
        "cpu_limit": limit or "none",
        "rtt_ms": rtt,
        "link_own_rtt_ms": round(int(measured_rtt.group(1)) / 1000, 2) if measured_rtt else None,
        "jvm_runs": len(jvms),
        "jvm_to_first_call_ms": statistics.median(j["jvm_to_first_call_ms"] for j in jvms),
        "first_call_ms": round(statistics.median(j["us"][0] for j in jvms) / 1000, 1),
        "total_ms": {str(n): round(statistics.median(v)) for n, v in totals.items()},
        "total_ms_runs": {str(n): [round(x) for x in v] for n, v in totals.items()},
        "mean_ms_per_1000": [round(x, 2) for x in per_block],
        "engine": {
            "calls": engine["calls"]["ok"],
            "mean_ms": round(engine_mean_ms, 2),
            "p50_ms": round(engine["latency_us"]["p50"] / 1000, 2),
        },
        "warm_calls_per_s": round(warm["throughput_per_s"]),
        "throttled": None
        if not throttled
        else {
            "periods": int(throttled.group(2)),
            "throttled_periods": int(throttled.group(1)),
            "throttled_ms": float(throttled.group(3)),
        },
    }


def growth(totals):
    """+74% … : how much longer each run is than the one before it."""
    return [round((b / a - 1) * 100) for a, b in itertools.pairwise(totals)]


def derive(results):
    """The figures read off the measured ones (seconds, growth per step): stored by a run, read by --render."""
    for c in results["cells"]:
        if "measured_rtt_ms" in c:  # the first run's name for the link's own cost, measured with no delay set
            c["link_own_rtt_ms"] = c.pop("measured_rtt_ms")
        totals = [c["total_ms"][str(n)] for n in results["marks"]]
        c["total_s"] = {str(n): round(t / 1000, 2) for n, t in zip(results["marks"], totals, strict=True)}
        c["growth_pct"] = growth(totals)
        blocks = c["mean_ms_per_1000"]
        # The first thousand calls' time beyond the same JVM's last thousand: its warm-up.
        c["first_1000_beyond_last_s"] = round(blocks[0] - blocks[-1], 2)
        # A warm JVM's call beyond the engine's on the same server and link: the client's own cost.
        c["last_1000_beyond_engine_ms"] = round(blocks[-1] - c["engine"]["mean_ms"], 2)
    return results


def machine():
    return describe()


def versions():
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    pom = (CLIENT / "pom.xml").read_text()

    def get(key):
        return re.search(f"<{key}>([^<]+)</{key}>", pom).group(1)

    return {"java": java, "spring-boot": get("spring-boot.version"), "grpc-java": get("grpc.version")}


def render_report(results):
    marks = results["marks"]
    lines = [
        "# Seed 003's runs, made by the article's own clients",
        "",
        f"Run {results['date']} on {results['machine']}; {results['versions']['java']}, Spring Boot "
        f"{results['versions']['spring-boot']} (WebClient), grpc-java {results['versions']['grpc-java']}. "
        f"Regenerate: `{results['command']}`.",
        f"Across an emulated link of {results['link']}; each server warmed by callbench's engine first, then "
        f"{results['runs']} fresh client JVMs of {marks[-1]} sequential calls each: a run of N is the first N calls "
        "of one (medians of the JVMs).",
        "",
        "| client (server) | CPU limit | " + " | ".join(f"{n} calls" for n in marks) + " | growth per step |",
        "|---|---|" + "---:|" * len(marks) + "---|",
    ]
    for kind in ("grpc", "rest"):
        art = ARTICLE[kind]
        lines.append(
            f"| the article: {kind} | t2.small | "
            + " | ".join(f"{t / 1000:.2f} s" for t in art)
            + " | "
            + ", ".join(f"+{g}%" for g in growth(art))
            + " |"
        )
    for c in results["cells"]:
        totals = [c["total_ms"][str(n)] for n in marks]
        lines.append(
            f"| {c['client']} ({c['server']}) | {c['cpu_limit']} | "
            + " | ".join(f"{t / 1000:.2f} s" for t in totals)
            + " | "
            + ", ".join(f"+{g}%" for g in growth(totals))
            + " |"
        )
    lines += [
        "",
        "Each JVM's mean call, by thousand, against callbench's engine on the same server and link (warm, "
        "one call at a time), the JVM's start to its first call, and how often the CPU limit held the server back:",
        "",
        "| client | CPU limit | mean ms per call: calls 1–1000, 1001–2000, … | engine's mean | JVM start → first call "
        "| first call | server held back |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for c in results["cells"]:
        t = c["throttled"]
        held = "–" if not t else f"{t['throttled_periods']} of {t['periods']} periods, {t['throttled_ms']:.0f} ms"
        lines.append(
            f"| {c['client']} | {c['cpu_limit']} | {', '.join(f'{x:.2f}' for x in c['mean_ms_per_1000'])} "
            f"| {c['engine']['mean_ms']:.2f} ms | {c['jvm_to_first_call_ms']} ms | {c['first_call_ms']} ms "
            f"| {held} |"
        )
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="fresh client JVMs per server and limit (default 3)")
    ap.add_argument("--calls", type=int, default=5000, help="calls per JVM, read at every 1000 (default 5000)")
    ap.add_argument("--rtt", type=int, default=14, help="the link's round trip in ms (default 14)")
    ap.add_argument("--limit", action="append", help="CPU limits to run besides none (default: 20%%)")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from results.json")
    ap.add_argument("--check", action="store_true", help="report.md is what results.json renders")
    a = ap.parse_args()
    if a.render or a.check:
        # The measured record is never written again: what is derived from it is derived in memory.
        results = derive(json.loads((HERE / "results.json").read_text()))
        if a.render:
            (HERE / "report.md").write_text(render_report(results))
            return 0
        if (HERE / "report.md").read_text() != render_report(results):
            print("reproductions/seed003-clients/report.md is not what results.json renders (run.py --render)")
            return 1
        return 0
    if a.runs < 1 or a.calls < 1000 or a.calls % 1000:
        sys.exit("run.py: --runs is at least 1 and --calls a multiple of 1000")
    limits = [None] + (a.limit or ["20%"])
    marks = list(range(1000, a.calls + 1, 1000))
    build()
    cells = []
    with tempfile.TemporaryDirectory(prefix="callbench-seed003-") as tmp:
        for limit in limits:
            for kind in ("grpc", "rest"):
                got = serve(kind, limit, a.rtt, a.runs, a.calls, 1000, Path(tmp))
                cells.append(cell(kind, limit, a.rtt, marks, *got))
                print(f"{kind}, CPU limit {limit or 'none'}: {cells[-1]['total_ms']}", file=sys.stderr)
    command = "sudo reproductions/seed003-clients/run.py"
    command += "".join(
        f" --{k} {v}" for k, v, d in (("runs", a.runs, 3), ("calls", a.calls, 5000), ("rtt", a.rtt, 14)) if v != d
    )
    command += "".join(f" --limit {limit}" for limit in (a.limit or []))
    results = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "versions": versions(),
        "command": command,
        "link": LINK.format(rtt=a.rtt),
        "runs": a.runs,
        "marks": marks,
        "article_ms": ARTICLE,
        "cells": cells,
    }
    derive(results)
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "report.md").write_text(render_report(results))
    print(render_report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
