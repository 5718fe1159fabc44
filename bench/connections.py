#!/usr/bin/env python3
"""Benchmark of what load tools cost as their connections grow: peak memory and client CPU per call of callbench,
wrk, h2load and oha on the same reference server, at 100, 1,000 and 10,000 HTTP/1.1 connections and at 100 HTTP/2
connections × 100 streams.

The server (rust-actix, pinned to one CPU, --workers 1) is driven by each tool in turn (pinned to another CPU),
every case and tool interleaved within each repetition. Peak RSS is GNU time's maximum resident set (%M) of the tool
(time forks a small process of its own, so no Python pages are counted); CPU is the tool's user + sys from wait4,
over the calls it reports as completed. Python 3.11 standard library only; only 127.0.0.1; every process is stopped
on the way out. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_procs import PROCS, ROOT, run_client, start_server, which  # noqa: E402
from engine_report import cpu_model, dated_result, fmt, git_commit, med, tool_versions  # noqa: E402
from engine_tools import parser  # noqa: E402

GNU_TIME = "/usr/bin/time"
# Each case: a name, the protocol, connections and streams per connection, and the peer memory is compared with.
CASES = [
    ("HTTP/1.1 × 100", "http1", 100, 1, "wrk"),
    ("HTTP/1.1 × 1,000", "http1", 1000, 1, "wrk"),
    ("HTTP/1.1 × 10,000", "http1", 10000, 1, "wrk"),
    ("HTTP/2 100 × 1", "http2", 100, 1, "h2load"),
    ("HTTP/2 100 × 100", "http2", 100, 100, "h2load"),
]
TOOLS = ["callbench", "wrk", "h2load", "oha"]


class Interrupted(Exception):
    pass


def _on_signal(signum, frame):
    raise Interrupted(f"signal {signum}")


def commands(tools: dict, url: str, proto: str, conns: int, streams: int, secs: int) -> dict:
    """Each tool's command line for one case (a tool that cannot speak the protocol is left out)."""
    s = str(secs)
    if proto == "http1":
        return {
            "callbench": [
                tools["callbench"],
                "load",
                "-c",
                str(conns),
                "-z",
                f"{s}s",
                "--threads",
                "1",
                "-o",
                "json",
                "-q",
                url,
            ],
            "wrk": [tools["wrk"], "-t1", f"-c{conns}", f"-d{s}s", url],
            "h2load": [tools["h2load"], "--h1", "-t", "1", "-c", str(conns), "-m", "1", "-D", s, url],
            "oha": [
                tools["oha"],
                "--worker-threads",
                "1",
                "-c",
                str(conns),
                "-z",
                f"{s}s",
                "--no-tui",
                "--output-format",
                "json",
                url,
            ],
        }
    return {
        "callbench": [
            tools["callbench"],
            "load",
            "--http2",
            "-c",
            str(conns * streams),
            "--connections",
            str(conns),
            "-z",
            f"{s}s",
            "--threads",
            "1",
            "-o",
            "json",
            "-q",
            url,
        ],
        "h2load": [tools["h2load"], "-t", "1", "-c", str(conns), "-m", str(streams), "-D", s, url],
        "oha": [
            tools["oha"],
            "--worker-threads",
            "1",
            "--http2",
            "-c",
            str(conns),
            "-p",
            str(streams),
            "-z",
            f"{s}s",
            "--no-tui",
            "--output-format",
            "json",
            url,
        ],
    }


@dataclass
class Measured:
    case: str
    tool: str
    rep: int
    ok: int = 0
    errors: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    rss_kib: int = 0
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def cpu_us_per_call(self):
        return self.cpu * 1e6 / self.ok if self.ok else float("nan")

    @property
    def throughput(self):
        return self.ok / self.seconds if self.seconds else float("nan")


def measure(case, tool, argv, rep, a, server, workdir, callbench: str) -> Measured:
    rss_file = workdir / "rss"
    rss_file.unlink(missing_ok=True)
    c = run_client(
        [GNU_TIME, "-f", "%M", "-o", str(rss_file)] + argv,
        a.client_cpu,
        a.seconds + a.grace,
        server,
        workdir,
        a.server_cpu,
    )
    m = Measured(case, tool, rep, cpu=c.cpu)
    try:
        m.rss_kib = int(rss_file.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        m.note = "no peak RSS from GNU time"
    try:
        parsed = parser(tool, callbench)(c.out)
        m.ok, m.errors, m.seconds = parsed["ok"], parsed["errors"], parsed["seconds"]
        if tool == "callbench":
            d = json.loads(c.out)
            m.extra = {
                k: d.get(k)
                for k in ("callers_answered", "callers_never_connected", "callers_connected_s", "connections_opened")
            }
    except Exception as e:  # noqa: BLE001 - reported; the run counts as failed
        m.note = f"unparsable output ({e}); exit {c.code}; stderr: {c.err.strip()[-300:]!r}"
    if c.code != 0 and not m.note:
        m.note = f"exit {c.code}: {c.err.strip()[-300:]!r}"
    return m


def summary_rows(runs):
    rows = []
    for case, _, _, _, peer in CASES:
        for tool in TOOLS:
            rs = [r for r in runs if r.case == case and r.tool == tool]
            good = [r for r in rs if not r.note and r.ok > 0]
            if not rs:
                continue
            rows.append(
                {
                    "case": case,
                    "tool": tool,
                    "peer": peer,
                    "runs": len(rs),
                    "good": len(good),
                    "rss_mb": med([r.rss_kib / 1024 for r in good]),
                    "cpu_us": med([r.cpu_us_per_call for r in good]),
                    "calls_s": med([r.throughput for r in good]),
                    "errors": sum(r.errors for r in rs),
                    "notes": sorted({r.note for r in rs if r.note}),
                    "answered": [r.extra.get("callers_answered") for r in good if r.extra],
                }
            )
    for row in rows:
        peer = next((p for p in rows if p["case"] == row["case"] and p["tool"] == row["peer"]), None)
        row["rss_ratio"] = row["rss_mb"] / peer["rss_mb"] if peer and peer["rss_mb"] == peer["rss_mb"] else float("nan")
        row["cpu_ratio"] = row["cpu_us"] / peer["cpu_us"] if peer and peer["cpu_us"] == peer["cpu_us"] else float("nan")
    return rows


def slope(rows, small_case, large_case, count):
    """(tool, KiB) of peak RSS per one more of `count` things between two cases, for each tool in both."""
    out = []
    for tool in TOOLS:
        at = {r["case"]: r["rss_mb"] for r in rows if r["tool"] == tool}
        small, large = at.get(small_case), at.get(large_case)
        if small is not None and large is not None and small == small and large == large:
            out.append((tool, (large - small) * 1024 / count))
    return out


def markdown(rows, meta) -> str:
    out = [
        f"# Connections benchmark, {meta['date']}",
        "",
        f"Machine: {meta['cpu']}, {meta['ncpu']} CPUs, {meta['kernel']}; commit {meta['commit']}; "
        f"client on CPU {meta['client_cpu']}, server on CPU {meta['server_cpu']}; {meta['reps']} interleaved "
        f"repetitions of {meta['seconds']} s per tool and case; tools: {meta['versions']}.",
        "",
        f"Server: {meta['server']} `--workers 1`, `GET {meta['path']}`. Medians; ratios are to the peer named in "
        "the case (wrk for HTTP/1.1, h2load for HTTP/2). Peak RSS: GNU time's %M; CPU per call: wait4's user + "
        "sys over the calls the tool reports completed.",
        "",
        "| case | tool | peak RSS MB | RSS ratio | client CPU µs/call | CPU ratio | calls/s | errors | note |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        note = "; ".join(r["notes"])[:160]
        if r["tool"] == "callbench" and r["answered"]:
            note = f"callers answered: {min(r['answered']):,} (fewest of the runs)" + ("; " + note if note else "")
        out.append(
            f"| {r['case']} | {r['tool']} | {fmt(r['rss_mb'], 1)} | {fmt(r['rss_ratio'], 2)} | "
            f"{fmt(r['cpu_us'], 2)} | {fmt(r['cpu_ratio'], 2)} | {fmt(r['calls_s'])} | {r['errors']:,} | {note} |"
        )
    per = lambda pairs: "; ".join(f"{tool} {kib:.1f} KiB" for tool, kib in pairs)  # noqa: E731
    out += [
        "",
        "What one more HTTP/1.1 connection costs each tool (its caller included), from the medians at 1,000 and "
        "10,000: " + per(slope(rows, "HTTP/1.1 × 1,000", "HTTP/1.1 × 10,000", 9000)) + ". What one more HTTP/2 "
        "stream in flight costs (its caller and its answer included), from 100 connections × 1 and × 100 streams: "
        + per(slope(rows, "HTTP/2 100 × 1", "HTTP/2 100 × 100", 9900))
        + ".",
    ]
    out += ["", "Commands (PORT is the server's; `taskset -c CLIENT_CPU /usr/bin/time -f %M` before each):", ""]
    out += [f"- {case} {tool}: `{cmd}`" for (case, tool), cmd in meta["commands"].items()]
    return "\n".join(out) + "\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3, help="interleaved repetitions (default 3)")
    p.add_argument("--seconds", type=int, default=5, help="length of each run (default 5)")
    p.add_argument("--quick", action="store_true", help="1 repetition of 3 s")
    p.add_argument("--server", default="rust-actix")
    p.add_argument("--path", default="/students")
    p.add_argument("--client-cpu", default="0")
    p.add_argument("--server-cpu", default="1")
    p.add_argument("--grace", type=int, default=30, help="seconds a run may overrun before it is killed")
    p.add_argument("--no-build", action="store_true", help="use target/release as it is")
    p.add_argument("--markdown", action="store_true", help="print the Markdown instead of writing bench/results/")
    a = p.parse_args(argv)
    if a.quick:
        a.reps, a.seconds = 1, 3
    if a.reps < 1 or a.seconds < 1:
        p.error("--reps and --seconds must be at least 1")
    return a


def main(argv=None) -> int:
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    log = lambda *x: print(*x, file=sys.stderr, flush=True)  # noqa: E731
    if not os.access(GNU_TIME, os.X_OK) or not which("taskset"):
        log("GNU time (/usr/bin/time, Debian package `time`) and taskset are needed: run scripts/setup")
        return 2
    # Every tool (and the server) inherits this: 10,000 connections need more than the usual 1,024 open files.
    most = max(c[2] for c in CASES) + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < most:
        log(f"the open-files hard limit is {hard}; {most} are needed: raise it (`ulimit -Hn {most}` as root)")
        return 2
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, most), hard))

    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    release = (target if target.is_absolute() else ROOT / target) / "release"
    if not a.no_build:
        log("building the workspace (cargo build --release --locked)...")
        if subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--workspace"], cwd=ROOT).returncode:
            log("warning: the build failed; using the binaries already in target/release")
    tools = {t: which(t) for t in ("wrk", "h2load", "oha")}
    tools["callbench"] = str(release / "callbench") if (release / "callbench").exists() else None
    missing = [t for t, path in tools.items() if not path]
    if missing:
        log(f"missing: {', '.join(missing)} (scripts/setup installs the peers; build the workspace for callbench)")
        return 2

    workdir = Path(tempfile.mkdtemp(prefix="callbench-connections-"))
    runs: list[Measured] = []
    shown = {}
    try:
        users = workdir / "users.json"
        callbench = tools["callbench"]
        assert callbench is not None  # in `missing` otherwise
        subprocess.run([callbench, "gen-users", "-o", str(users)], check=True, timeout=60, stdout=subprocess.DEVNULL)
        server = start_server(str(release / a.server), a.server, a.server_cpu, users, workdir)
        url = f"http://127.0.0.1:{server.port}{a.path}"
        log(f"{a.server} on 127.0.0.1:{server.port} (CPU {a.server_cpu}); {a.reps} × {a.seconds} s per tool and case")
        for rep in range(1, a.reps + 1):
            for case, proto, conns, streams, _ in CASES:
                for tool, argv in commands(tools, url, proto, conns, streams, a.seconds).items():
                    shown[(case, tool)] = shlex.join([Path(argv[0]).name] + argv[1:]).replace(str(server.port), "PORT")
                    m = measure(case, tool, argv, rep, a, server, workdir, callbench)
                    runs.append(m)
                    log(
                        f"  {rep}/{a.reps} {case:18} {tool:9} {m.ok:>9} ok {m.errors:>6} err "
                        f"{m.rss_kib / 1024:8.1f} MB {fmt(m.cpu_us_per_call, 2):>7} µs/call"
                        + (f"  ! {m.note}" if m.note else "")
                    )
    except (KeyboardInterrupt, Interrupted) as e:
        log(f"interrupted ({str(e) or 'Ctrl-C'}): stopping everything")
        return 130
    finally:
        PROCS.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)

    rows = summary_rows(runs)
    meta = {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu_model(),
        "ncpu": os.cpu_count(),
        "kernel": "Linux " + os.uname().release,
        "commit": git_commit(),
        "client_cpu": a.client_cpu,
        "server_cpu": a.server_cpu,
        "reps": a.reps,
        "seconds": a.seconds,
        "server": a.server,
        "path": a.path,
        "versions": ", ".join(f"{k} {v}" for k, v in {**tool_versions(tools), "oha": oha_version(tools)}.items()),
        "commands": shown,
    }
    md = markdown(rows, meta)
    if a.markdown:
        print(md)
    else:
        out = dated_result(ROOT / "bench" / "results", "connections")
        out.write_text(md)
        log(f"wrote {out.relative_to(ROOT)}")
        print(md)
    return 1 if any(r.note for r in runs) else 0


def oha_version(tools) -> str:
    try:
        return subprocess.run([tools["oha"], "--version"], capture_output=True, text=True, timeout=10).stdout.split()[
            -1
        ]
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main())
