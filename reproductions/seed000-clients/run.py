#!/usr/bin/env python3
"""Seed 000's two calls made by the article's own clients across an emulated link, swept over the round
trip, and the two things beside the clients that could make REST's call cost more: a TLS-terminating front
end, and the REST client's connection behaviour.

The article timed one auth call to Cloud Run over TLS: REST 182 ms, gRPC 102 ms. Its gRPC call was made by
the tonic client it shows (clients/seed000-tonic), its REST call by a `.http` file (clients/seed000-rest
makes it as VS Code's REST Client 0.24.6 did; JetBrains' HTTP client reads the same syntax). The article
gives no round trip, so none is chosen: every cell runs at each RTT of the sweep (5, 10, 25, 40, 60 ms).
Each cell is one client process making its calls across `callbench serve --tls --dns --network rtt=R
--pcap` (a name server on the far side, so each lookup crosses the link as the article's did), the server
reading users.json per call as the article's did; `callbench phases` splits every call of the capture into
lookup, connect, handshake and call. The first call of each process is left out (it loads the client's
code; the article's clients were already running) and reported apart.

The cells (VARIANTS): the two clients as the article ran them, REST held to TLS 1.2; the REST client with a
kept connection or a new one per call, each with and without a `Connection: close` header; and both clients
behind nginx (nginx-front.sh, run by `serve --front` on the server side of the link), which terminates TLS
and passes each call in plaintext to the server, with a new upstream connection per call or kept ones.

    sudo reproductions/seed000-clients/run.py            # writes results.json and report.md here (~5 min)
    reproductions/seed000-clients/run.py --render        # report.md from results.json (results.json untouched)
    reproductions/seed000-clients/run.py --check FILE    # FILE's figures block and report.md match results.json

Root is needed (network namespaces), as for every emulated link.
"""

import argparse
import datetime
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import checkout, describe  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BODY = '{"password":"thisispassword"}'
RTTS_MS = [5, 10, 25, 40, 60]
# Calls per cell after the first: enough for a median steady against the calls' spread in the earlier sweep
# (bench/results/seed000-rtt-sweep-2026-12-06.md), few enough for a run of minutes; results.json records it.
CALLS = 40

# Both clients stop after --calls or --duration-ms (10 s unless given): given long enough for every call.
REST = (
    "exec node {root}/clients/seed000-rest/call.js \"$CALLBENCH_TARGET/auth/9999\" --body '{body}' --calls {calls} "
    "--duration-ms 300000"
)
GRPC = (
    'exec {target}/release/seed000-tonic "$CALLBENCH_TARGET" --ca "$CALLBENCH_CA_CERT" --domain localhost '
    "--calls {calls} --duration-ms 300000"
)

# name: (server, front end (nginx-front.sh's arguments) or None, what the cell is, the client command).
VARIANTS = {
    "rest": (
        "rust-actix",
        None,
        "the article's REST call: got 9.6.0 on Node 14's default agent, a new connection per call, Connection: close",
        REST,
    ),
    "grpc": ("rust-tonic", None, "the article's tonic client: a TLS channel connected per call, one call", GRPC),
    "rest-tls1.2": (
        "rust-actix",
        None,
        "the REST call held to TLS 1.2 (NODE_OPTIONS=--tls-max-v1.2)",
        "NODE_OPTIONS=--tls-max-v1.2 " + REST,
    ),
    "rest-no-close": (
        "rust-actix",
        None,
        "a new connection per call without Connection: close (Connection: keep-alive sent; the client closes)",
        REST + " --connection-header keep-alive",
    ),
    "rest-kept": (
        "rust-actix",
        None,
        "a kept connection (a keep-alive agent, as Node 20's default), no Connection: close",
        REST + " --agent keep-alive",
    ),
    "rest-kept-close": (
        "rust-actix",
        None,
        "a keep-alive agent sending Connection: close (the server closes after each answer)",
        REST + " --agent keep-alive --connection-header close",
    ),
    "rest-front": (
        "rust-actix",
        "rest close",
        "the REST call through nginx terminating TLS, a new HTTP/1.0 connection to the server per call",
        REST,
    ),
    "rest-front-kept": (
        "rust-actix",
        "rest keepalive",
        "the REST call through nginx terminating TLS, kept HTTP/1.1 connections to the server",
        REST,
    ),
    "grpc-front": (
        "rust-tonic",
        "grpc close",
        "the gRPC call through nginx terminating TLS (grpc_pass), a new HTTP/2 connection to the server per call",
        GRPC,
    ),
    "grpc-front-kept": (
        "rust-tonic",
        "grpc keepalive",
        "the gRPC call through nginx terminating TLS (grpc_pass), kept HTTP/2 connections to the server",
        GRPC,
    ),
}


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


def cell_name(variant, rtt_ms):
    """A cell's key in results.json: no space or slash, so a seed table pointer names it whole."""
    return f"{variant}@{rtt_ms}ms"


def run_one(variant, rtt_ms, calls, workdir):
    server, front, _, command = VARIANTS[variant]
    pcap = workdir / f"{variant}-{rtt_ms}.pcap"
    script = command.format(root=ROOT, target=target_dir(), body=BODY, calls=calls + 1)
    argv = [str(ROOT / "callbench"), "serve", server, "--no-build", "--tls", "--dns", "--mode", "per-request"]
    argv += ["--network", f"rtt={rtt_ms}ms", "--pcap", str(pcap)]
    if front:
        front_dir = workdir / f"front-{variant}-{rtt_ms}"
        argv += ["--front", f"sh {shlex.quote(str(HERE / 'nginx-front.sh'))} {front} {shlex.quote(str(front_dir))}"]
    argv += ["--", "sh", "-c", script]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"run.py: {' '.join(argv)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(lines) != calls + 1 or not all(line["ok"] for line in lines):
        sys.exit(f"run.py: {variant} at {rtt_ms} ms: expected {calls + 1} successful calls, got:\n{run.stdout[-2000:]}")
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


def summarise(variant, rtt_ms, lines, phases):
    server, front, what, _ = VARIANTS[variant]
    rtt_us = rtt_ms * 1000.0
    measured = lines[1:]
    ms = [line["us"] / 1000 for line in measured]
    every = phases["connections"]
    # The connections the measured calls opened (none after the first when a connection is kept) and
    # their exchanges: every exchange but the first call's.
    conns = every[1:]
    exchanges = [e for c in every for e in c["exchanges"]][1:]
    handshakes = [c["tls"]["handshake_us"] if c.get("tls") else None for c in conns]
    split_us = {
        "dns": median(c.get("dns_us") for c in conns),
        "tcp_connect": median(c.get("tcp_connect_us") for c in conns),
        "tls_handshake": median(handshakes),
        "call_first_byte": median(e["first_byte_us"] for e in exchanges),
    }

    def trips(us):
        return None if us is None else round(us / rtt_us, 2)

    return {
        "variant": variant,
        "what": what,
        "server": server,
        "front": f"nginx-front.sh {front}" if front else None,
        "rtt_ms": rtt_ms,
        "calls": len(measured),
        "first_call_ms": round(lines[0]["us"] / 1000, 1),
        "first_call_tls_rtt": trips((every[0].get("tls") or {}).get("handshake_us")),
        "ms": {
            "p50": round(median(ms), 1),
            "mean": round(statistics.mean(ms), 1),
            "min": round(min(ms), 1),
            "max": round(max(ms), 1),
        },
        "round_trips": round(median(ms) / rtt_ms, 2),
        "new_connections_per_call": round(len(conns) / len(measured), 2),
        "lookups_per_call": round(len(phases["lookups"]) / len(lines), 1),
        "tls_versions": sorted({c["tls"]["version"] for c in every if c.get("tls") and c["tls"]["version"]}),
        "ended_by": sorted({c["ended_by"] for c in every if c.get("ended_by")}),
        "phases_rtt": {k: trips(v) for k, v in split_us.items()},
        "phases_ms": {k: None if v is None else round(v / 1000, 2) for k, v in split_us.items()},
    }


def now():
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def versions():
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    lock = json.loads((ROOT / "clients/seed000-rest/package-lock.json").read_text())
    got = lock["packages"]["node_modules/got"]["version"]
    cargo_lock = (ROOT / "Cargo.lock").read_text()
    tonic = re.search(r'name = "tonic"\nversion = "([^"]+)"', cargo_lock).group(1)
    nginx = subprocess.run(["/usr/sbin/nginx", "-v"], capture_output=True, text=True).stderr.strip()
    openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    return {
        "node": node,
        "got": got,
        "tonic": tonic,
        "nginx": nginx.removeprefix("nginx version: "),
        "openssl": openssl.split(" (")[0],
    }


def p50(results, variant, rtt):
    return results["cells"][cell_name(variant, rtt)]["ms"]["p50"]


def at(results, variant, rtt):
    """`106.0 (4.24)`: the median call in ms and in round trips of the link."""
    c = results["cells"][cell_name(variant, rtt)]
    return f"{c['ms']['p50']} ({c['round_trips']:.2f})"


def figures(results):
    """The block the book quotes (docs/src/seeds.md): regenerated from results.json and compared by --check."""
    rtts = results["rtts_ms"]
    rows = [
        "The article's two clients (median call in ms, in round trips of the link in brackets):",
        "",
        "| RTT | REST | gRPC | REST / gRPC | REST held to TLS 1.2 |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rtts:
        ratio = p50(results, "rest", r) / p50(results, "grpc", r)
        rows.append(
            f"| {r} ms | {at(results, 'rest', r)} | {at(results, 'grpc', r)} | {ratio:.2f}× | "
            f"{at(results, 'rest-tls1.2', r)} |"
        )
    rows += [
        "",
        "The REST client's connection behaviour (new connections a call in brackets after the round trips):",
        "",
        "| RTT | new connection, Connection: close (the article's) | new connection, no close | kept connection "
        "| kept agent, Connection: close |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rtts:
        cells = []
        for v in ("rest", "rest-no-close", "rest-kept", "rest-kept-close"):
            c = results["cells"][cell_name(v, r)]
            cells.append(f"{c['ms']['p50']} ({c['round_trips']:.2f}; {c['new_connections_per_call']:g})")
        rows.append(f"| {r} ms | " + " | ".join(cells) + " |")
    rows += [
        "",
        "Behind nginx terminating TLS on the server side, a new upstream connection per call or kept ones "
        "(what the front end adds to the call without it, in ms, in brackets):",
        "",
        "| RTT | REST | REST, upstream kept | gRPC | gRPC, upstream kept | REST / gRPC | REST / gRPC, upstream kept |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rtts:
        cells = []
        for v, base in (
            ("rest-front", "rest"),
            ("rest-front-kept", "rest"),
            ("grpc-front", "grpc"),
            ("grpc-front-kept", "grpc"),
        ):
            cells.append(f"{p50(results, v, r)} ({p50(results, v, r) - p50(results, base, r):+.1f})")
        for a, b in (("rest-front", "grpc-front"), ("rest-front-kept", "grpc-front-kept")):
            cells.append(f"{p50(results, a, r) / p50(results, b, r):.2f}×")
        rows.append(f"| {r} ms | " + " | ".join(cells) + " |")
    ratios = [p50(results, "rest", r) / p50(results, "grpc", r) for r in rtts]
    rows += [
        "",
        f"REST / gRPC over the sweep: **{min(ratios):.2f}–{max(ratios):.2f}×** (the article: 182 / 102 ms = 1.78×); "
        "each ratio is the quotient of the two medians beside it.",
    ]
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


def wall_time(env):
    start, end = (datetime.datetime.strptime(env[k], "%Y-%m-%dT%H:%M:%SZ") for k in ("started_at", "finished_at"))
    seconds = int((end - start).total_seconds())
    return f"{seconds // 60} min {seconds % 60} s"


def render_report(results):
    env, v = results["environment"], results["versions"]
    phase_rows = []
    for name, c in results["cells"].items():
        split = " · ".join(
            "–" if c["phases_rtt"][k] is None else f"{c['phases_rtt'][k]:.2f}"
            for k in ("dns", "tcp_connect", "tls_handshake", "call_first_byte")
        )
        phase_rows.append(
            f"| {name} | {c['ms']['p50']} ({c['ms']['min']}–{c['ms']['max']}) | {c['round_trips']:.2f} | {split} | "
            f"{c['new_connections_per_call']:g} | {c['lookups_per_call']:g} | {'/'.join(c['tls_versions'])} | "
            f"{'/'.join(c['ended_by'])} | {c['first_call_ms']} ({c['first_call_tls_rtt']}) |"
        )
    lines = [
        "# Seed 000's calls, made by the article's own clients, across 5 to 60 ms",
        "",
        f"Run {env['started_at']} to {env['finished_at']} ({wall_time(env)}) from commit {env['git_commit']} "
        f"(clean: {str(not env['git_dirty']).lower()}) on {env['machine']}; node {v['node']}, got {v['got']}, "
        f"tonic {v['tonic']}, nginx {v['nginx']}, {v['openssl']}. Regenerate: `{results['command']}`.",
        f"{results['calls']} calls per cell after the first (left out: it loads the client's code), each cell one "
        "client process across `callbench serve --tls --dns --network rtt=R --pcap`, the servers reading users.json "
        "per call as the article's did, a name server across the link. The cells:",
        "",
        *[f"- `{name}`: {what} ({server})" for name, (server, _, what, _) in VARIANTS.items()],
        "",
        "<!-- figures: reproductions/seed000-clients/results.json -->",
        figures(results),
        "<!-- /figures -->",
        "",
        "Every cell from its packets: the median call in ms (fastest–slowest), in round trips of the link, its "
        "phases in round trips (the medians over the measured calls' new connections: lookup · TCP connect · TLS "
        "· request to the answer's first byte; – when the calls opened none), new connections and lookups (A "
        "and AAAA) a call, the TLS version, which end closed the connections, and the first call (left out) "
        "with its TLS handshake in round trips (a later call's may resume the first one's session):",
        "",
        "| cell | call, ms | RTTs | lookup · connect · TLS · request | new conns | lookups | TLS | closed by "
        "| first call (TLS) |",
        "|---|---:|---:|---|---:|---:|---|---|---:|",
        *phase_rows,
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=CALLS, help=f"calls per cell after the first (default {CALLS})")
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
    started = now()
    commit, dirty = checkout()
    subprocess.run([str(ROOT / "callbench"), "--version"], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(
        ["node", str(ROOT / "servers/_node-shared/build.js"), str(ROOT / "clients/seed000-rest")], check=True
    )
    cells = {}
    with tempfile.TemporaryDirectory(prefix="callbench-seed000-") as tmp:
        for rtt in RTTS_MS:
            for variant in VARIANTS:
                lines, phases = run_one(variant, rtt, a.calls, Path(tmp))
                cell = summarise(variant, rtt, lines, phases)
                cells[cell_name(variant, rtt)] = cell
                print(f"{variant} at {rtt} ms: p50 {cell['ms']['p50']} ms", file=sys.stderr)
    results = {
        "environment": {
            "git_commit": commit,
            "git_dirty": dirty,
            "started_at": started,
            "finished_at": now(),
            "machine": describe(),
            "command_line": sys.argv,
        },
        "versions": versions(),
        "command": "sudo reproductions/seed000-clients/run.py" + (f" --calls {a.calls}" if a.calls != CALLS else ""),
        "calls": a.calls,
        "rtts_ms": RTTS_MS,
        "cells": cells,
    }
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "report.md").write_text(render_report(results))
    print(figures(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
