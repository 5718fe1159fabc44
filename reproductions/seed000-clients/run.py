#!/usr/bin/env python3
"""Seed 000's two calls made by the article's own clients across an emulated link, and why they differ.

The article timed one auth call to Cloud Run over TLS: REST 182 ms, gRPC 102 ms. Its gRPC call was made by
the tonic client it shows (clients/seed000-tonic), its REST call by a `.http` file in VS Code's REST Client
(clients/seed000-rest). Each client here makes its calls across `callbench serve --tls --dns --network
rtt=R --pcap` (a name server on the far side, so each lookup crosses the link as the article's did), with
the server reading users.json per call as the article's did; `callbench phases` splits every call of the
capture into lookup, connect, handshake and call. The first call of each client process is left out (it
loads the client's code; the article's clients were already running) and reported apart.

    sudo reproductions/seed000-clients/run.py            # writes results.json and report.md here (~2 min)
    reproductions/seed000-clients/run.py --check FILE    # FILE's figures block matches results.json

Root is needed (network namespaces), as for every emulated link.
"""

import argparse
import datetime
import json
import os
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
BODY = '{"password":"thisispassword"}'

# name, server, what the article's client was, the command (run with sh -c across the link).
CLIENTS = [
    (
        "rest (VS Code REST Client)",
        "rust-actix",
        "got 9.6.0 on Node 14's default agent: Connection: close, TLS 1.3 offered",
        "exec node {root}/clients/seed000-rest/call.js \"$CALLBENCH_TARGET/auth/9999\" --body '{body}' --calls {calls}",
    ),
    (
        "grpc (the article's tonic client)",
        "rust-tonic",
        "tonic channel with TLS connected inside the timed region, one call",
        'exec {target}/release/seed000-tonic "$CALLBENCH_TARGET" --ca "$CALLBENCH_CA_CERT" --domain localhost '
        "--calls {calls}",
    ),
    (
        "rest, TLS 1.2 (what-if)",
        "rust-actix",
        "the same REST client held to TLS 1.2 (NODE_OPTIONS=--tls-max-v1.2)",
        'NODE_OPTIONS=--tls-max-v1.2 exec node {root}/clients/seed000-rest/call.js "$CALLBENCH_TARGET/auth/9999" '
        "--body '{body}' --calls {calls}",
    ),
]


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


def run_one(server, command, rtt_ms, calls, workdir):
    pcap = workdir / f"{server}-{rtt_ms}.pcap"
    script = command.format(root=ROOT, target=target_dir(), body=BODY, calls=calls + 1)
    argv = [str(ROOT / "callbench"), "serve", server, "--tls", "--dns", "--mode", "per-request"]
    argv += ["--network", f"rtt={rtt_ms}ms", "--pcap", str(pcap), "--", "sh", "-c", script]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"run.py: {' '.join(argv)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(lines) != calls + 1 or not all(line["ok"] for line in lines):
        sys.exit(f"run.py: {server}: expected {calls + 1} successful calls, got:\n{run.stdout[-2000:]}")
    read = subprocess.run(
        [str(ROOT / "callbench"), "phases", str(pcap), "--rtt", f"{rtt_ms}ms", "-o", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return lines, json.loads(read.stdout)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(name, server, what, rtt_ms, lines, phases):
    rtt_us = rtt_ms * 1000.0
    measured = lines[1:]
    ms = [line["us"] / 1000 for line in measured]
    conns = phases["connections"][1:]

    def trips(us):
        return None if us is None else round(us / rtt_us, 2)

    handshakes = [c["tls"]["handshake_us"] if c.get("tls") else None for c in conns]
    return {
        "client": name,
        "server": server,
        "what": what,
        "rtt_ms": rtt_ms,
        "calls": len(measured),
        "first_call_ms": round(lines[0]["us"] / 1000, 1),
        "first_call_tls_rtt": trips((phases["connections"][0].get("tls") or {}).get("handshake_us")),
        "ms": {
            "p50": round(median(ms), 1),
            "mean": round(statistics.mean(ms), 1),
            "min": round(min(ms), 1),
            "max": round(max(ms), 1),
        },
        "round_trips": round(median(ms) / rtt_ms, 2),
        "connections": len(conns),
        "lookups_per_call": round(len(phases["lookups"]) / len(phases["connections"]), 1),
        "tls_versions": sorted({c["tls"]["version"] for c in conns if c.get("tls") and c["tls"]["version"]}),
        "ended_by": sorted({c["ended_by"] for c in conns if c.get("ended_by")}),
        "phases_rtt": {
            "dns": trips(median(c.get("dns_us") for c in conns)),
            "tcp_connect": trips(median(c.get("tcp_connect_us") for c in conns)),
            "tls_handshake": trips(median(handshakes)),
            "call_first_byte": trips(
                median(c["exchanges"][0]["first_byte_us"] if c["exchanges"] else None for c in conns)
            ),
        },
    }


def machine():
    return describe()


def versions():
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    lock = json.loads((ROOT / "clients/seed000-rest/package-lock.json").read_text())
    got = lock["packages"]["node_modules/got"]["version"]
    cargo_lock = (ROOT / "Cargo.lock").read_text()
    tonic = re.search(r'name = "tonic"\nversion = "([^"]+)"', cargo_lock).group(1)
    return {"node": node, "got": got, "tonic": tonic}


def figures(results):
    """The block the book quotes (docs/src/seeds.md): regenerated from results.json and compared by --check."""
    rows = [
        "| client (server) | RTT | one call, p50 | in round trips | lookup · connect · TLS · call (RTT each) |",
        "|---|---:|---:|---:|---|",
    ]
    for c in results["cells"]:
        p = c["phases_rtt"]
        split = " · ".join(
            f"{p[k]:.2f}" if p[k] is not None else "–"
            for k in ("dns", "tcp_connect", "tls_handshake", "call_first_byte")
        )
        tls = "/".join(c["tls_versions"])
        rows.append(
            f"| {c['client']} ({c['server']}, TLS {tls}) | {c['rtt_ms']} ms | {c['ms']['p50']} ms | "
            f"{c['round_trips']} | {split} |"
        )
    for rtt, ratio in results["rest_over_grpc"].items():
        rows.append(f"\nREST over gRPC at {rtt}: **{ratio}×** (the article: 182 / 102 ms = 1.78×).")
    return "\n".join(rows)


BLOCK = re.compile(r"<!-- figures: reproductions/seed000-clients/results.json -->\n(.*?)\n<!-- /figures -->", re.S)


def check(files):
    results = json.loads((HERE / "results.json").read_text())
    want = figures(results)
    bad = 0
    for f in files:
        text = Path(f).read_text()
        blocks = BLOCK.findall(text)
        if not blocks:
            print(f"{f}: no figures block of reproductions/seed000-clients/results.json")
            bad += 1
        for block in blocks:
            if block.strip() != want.strip():
                print(
                    f"{f}: the figures quoted from reproductions/seed000-clients/results.json differ from it; "
                    f"the block should read:\n{want}"
                )
                bad += 1
    report = (HERE / "report.md").read_text()
    if report != render_report(results):
        print("reproductions/seed000-clients/report.md is not what results.json renders (run.py --render)")
        bad += 1
    return 1 if bad else 0


def render_report(results):
    lines = [
        "# Seed 000's calls, made by the article's own clients",
        "",
        f"Run {results['date']} on {results['machine']}; node {results['versions']['node']}, got "
        f"{results['versions']['got']}, tonic {results['versions']['tonic']}. Regenerate: `{results['command']}`.",
        f"{results['calls']} calls per client process after its first (left out: it loads the client's code), "
        "servers reading users.json per call as the article's did, a name server across the link.",
        "",
        "<!-- figures: reproductions/seed000-clients/results.json -->",
        figures(results),
        "<!-- /figures -->",
        "",
        "The first call of each process (left out above), and its TLS handshake in round trips (a later call's may",
        "resume the first one's session: Node's agent keeps TLS sessions, so TLS 1.2's two round trips become one):",
        "",
        "| client | RTT | first call | its TLS handshake |",
        "|---|---:|---:|---:|",
        *[
            f"| {c['client']} | {c['rtt_ms']} ms | {c['first_call_ms']} ms | {c['first_call_tls_rtt']} RTT |"
            for c in results["cells"]
        ],
        "",
        "Each client's connections were closed by: "
        + ", ".join(
            f"{c['client']}: {'/'.join(c['ended_by'])}"
            for c in results["cells"]
            if c["rtt_ms"] == results["cells"][0]["rtt_ms"]
        )
        + ".",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rtt", type=int, action="append", help="RTT in ms (default 25 and 40)")
    ap.add_argument("--check", nargs="+", metavar="FILE", help="check FILE's figures block against results.json")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from results.json")
    a = ap.parse_args()
    if a.check:
        return check(a.check)
    if a.render:
        (HERE / "report.md").write_text(render_report(json.loads((HERE / "results.json").read_text())))
        return 0
    if a.calls < 1:
        sys.exit("run.py: --calls must be at least 1")
    rtts = a.rtt or [25, 40]
    subprocess.run(
        ["node", str(ROOT / "servers/_node-shared/build.js"), str(ROOT / "clients/seed000-rest")], check=True
    )
    cells = []
    with tempfile.TemporaryDirectory(prefix="callbench-seed000-") as tmp:
        for rtt in rtts:
            for name, server, what, command in CLIENTS:
                lines, phases = run_one(server, command, rtt, a.calls, Path(tmp))
                cells.append(summarise(name, server, what, rtt, lines, phases))
                print(f"{name} at {rtt} ms: p50 {cells[-1]['ms']['p50']} ms", file=sys.stderr)
    ratio = {}
    for rtt in rtts:
        by = {c["client"]: c for c in cells if c["rtt_ms"] == rtt}
        ratio[f"{rtt} ms"] = round(by[CLIENTS[0][0]]["ms"]["p50"] / by[CLIENTS[1][0]]["ms"]["p50"], 2)
    results = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "versions": versions(),
        "command": "sudo reproductions/seed000-clients/run.py"
        + "".join(f" --rtt {r}" for r in (a.rtt or []))
        + (f" --calls {a.calls}" if a.calls != 20 else ""),
        "calls": a.calls,
        "cells": cells,
        "rest_over_grpc": ratio,
    }
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "report.md").write_text(render_report(results))
    print(figures(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
