#!/usr/bin/env python3
"""Benchmark of callbench's load engine against peer load generators on the same reference servers.

For each protocol the same server (pinned to one CPU, --workers 1) is driven in interleaved repetitions by
callbench and by a peer tool (pinned to another CPU):

    HTTP/1.1  callbench load            vs  wrk -t1 -cC
    HTTP/2    callbench load --http2    vs  h2load -c CONNS -m STREAMS (h2c)
    gRPC      callbench load grpc://    vs  ghz --insecure --proto ...
    HTTP/3    callbench load --http3    vs  oha --http-version 3 -c CONNS -p STREAMS (QUIC, TLS 1.3)

and by callbench-floor (bench/floor), the same calls with nothing on top, whose CPU per call each tool's is
divided by (bench/engine_floor.py).

Every client's CPU time (user + sys) is measured here with os.wait4's rusage, the same way for every tool; the
completed calls come from each tool's own output. Then an open-loop check: callbench --rate at 50/75/90% of the
closed-loop maximum, requested vs achieved rate.

Python 3.11 standard library only. Only 127.0.0.1; every process it starts is stopped (process groups, also on
Ctrl-C, SIGTERM or an error); every run is bounded in time. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_procs  # noqa: E402
from engine_floor import (  # noqa: E402
    FLOOR_TOOLS,
    ONE_AT_A_TIME_TARGETS,
    h2_commands,
    http_commands,
    one_at_a_time,
    over_floor,
    parse_floor,
    raw_commands,
)
from engine_procs import PROCS, ROOT, Run, Server, run_client, server_received_bytes, start_server, which  # noqa: E402
from engine_report import (  # noqa: E402
    OPEN_LOOP_TOLERANCE,
    Row,
    cpu_model,
    dated_result,
    fmt,
    git_commit,
    markdown_report,
    med,
    ratio_lines,
    text_report,
    tool_versions,
)
from engine_tools import parse_callbench, parser  # noqa: E402


class Interrupted(Exception):
    pass


def _on_sigterm(signum, frame):
    raise Interrupted(f"signal {signum}")


# ---------------------------------------------------------------------------------------------------------------
# Tools: command lines and parsers of their own output.


@dataclass
class Case:
    protocol: str
    server_bin: str
    peer: str | None
    commands: dict  # tool -> function(port, seconds) -> argv
    server_args: tuple = ()  # after the server's own --host/--port/--workers/--users

    def tools(self, use_cb: bool) -> list:
        """The tools run on this case, in the order of each repetition."""
        order = (["callbench"] if use_cb else []) + ([self.peer] if self.peer else [])
        order += [t for t in self.commands if t not in order and not t.startswith("callbench")]
        order += [t for t in self.commands if t not in order and t.startswith("callbench") and use_cb]
        return [t for t in order if t in self.commands]


def cases(a, tools) -> list[Case]:
    c = a.concurrency
    conns, streams = a.h2_connections, a.h2_streams
    proto = ROOT / "contract" / "proto" / "callbench" / "v1" / "students.proto"
    cb = tools.get("callbench")

    def cb_http1(port, secs):
        return [
            cb,
            "load",
            "-c",
            str(c),
            "-z",
            f"{secs}s",
            "--threads",
            "1",
            "-o",
            "json",
            "-q",
            f"http://127.0.0.1:{port}{a.path}",
        ]

    def cb_http2(port, secs):
        return [
            cb,
            "load",
            "--http2",
            "-c",
            str(conns * streams),
            "--connections",
            str(conns),
            "--streams",
            str(streams),
            "-z",
            f"{secs}s",
            "--threads",
            "1",
            "-o",
            "json",
            "-q",
            f"http://127.0.0.1:{port}{a.path}",
        ]

    def cb_grpc(port, secs):
        return [
            cb,
            "load",
            "-c",
            str(c),
            "--connections",
            str(a.grpc_connections),
            "-z",
            f"{secs}s",
            "--threads",
            "1",
            "--proto",
            str(proto),
            "-d",
            "{}",
            "-o",
            "json",
            "-q",
            f"grpc://127.0.0.1:{port}/callbench.v1.Students/List",
        ]

    # HTTP/3: the same connections and streams as HTTP/2, over QUIC to the server's self-signed certificate.
    def cb_http3(port, secs):
        argv = cb_http2(port, secs)
        argv[argv.index("--http2")] = "--http3"
        return argv[:2] + ["-k"] + argv[2:-1] + [f"https://127.0.0.1:{port}{a.path}"]

    def oha_http3(port, secs):
        return [
            tools["oha"],
            "--no-tui",
            "--output-format",
            "json",
            "--http-version",
            "3",
            "--insecure",
            # oha asks for gzip and br by default, and the server would compress every answer for it alone
            # (crates/peers runs oha the same way).
            "-H",
            "Accept-Encoding: identity",
            "-c",
            str(conns),
            "-p",
            str(streams),
            "-z",
            f"{secs}s",
            f"https://127.0.0.1:{port}{a.path}",
        ]

    out = [
        Case(
            "HTTP/1.1",
            a.rest_server,
            "wrk",
            {
                "callbench": cb_http1,
                "wrk": lambda port, secs: [
                    tools["wrk"],
                    "-t1",
                    f"-c{c}",
                    f"-d{secs}s",
                    f"http://127.0.0.1:{port}{a.path}",
                ],
            },
        ),
        Case(
            "HTTP/2",
            a.h2_server,
            "h2load",
            {
                "callbench": cb_http2,
                "h2load": lambda port, secs: [
                    tools["h2load"],
                    "-t",
                    "1",
                    "-c",
                    str(conns),
                    "-m",
                    str(streams),
                    "-D",
                    str(secs),
                    f"http://127.0.0.1:{port}{a.path}",
                ],
            },
        ),
        Case(
            "gRPC",
            a.grpc_server,
            "ghz",
            {
                "callbench": cb_grpc,
                "ghz": lambda port, secs: [
                    tools["ghz"],
                    "--insecure",
                    "--cpus",
                    "1",
                    "--proto",
                    str(proto),
                    "--call",
                    "callbench.v1.Students/List",
                    "-d",
                    "{}",
                    "-c",
                    str(c),
                    "--connections",
                    str(a.grpc_connections),
                    "-z",
                    f"{secs}s",
                    *([] if a.ghz_templates else ["--disable-template-functions", "--disable-template-data"]),
                    "--duration-stop",
                    "ignore",
                    "-O",
                    "json",
                    f"127.0.0.1:{port}",
                ],
            },
        ),
    ]
    h3 = {"callbench": cb_http3} | ({"oha": oha_http3} if tools.get("oha") else {})
    out.append(Case("HTTP/3", a.h3_server, "oha" if tools.get("oha") else None, h3, server_args=("--tls", "--http3")))
    floor = tools.get("callbench-floor")
    if floor:
        out[0].commands.update(http_commands(floor, a.path, c))
        out[1].commands.update(h2_commands(floor, f"--http2={a.path}", conns, conns * streams))
        out[2].commands.update(h2_commands(floor, "--grpc=/callbench.v1.Students/List", a.grpc_connections, c))
        out[3].commands.update(h2_commands(floor, f"--http3={a.path}", conns, conns * streams))
        out.append(Case("raw TCP", "raw-echo", None, raw_commands(floor, c, cb)))
    if cb and not a.no_uring:
        # The same callbench runs with its sockets through io_uring (`--io uring`), beside the default (epoll).
        for case in [k for k in out if k.protocol != "HTTP/3"]:  # QUIC's UDP socket is quinn's (epoll)
            for name in [t for t in case.commands if t.startswith("callbench") and t.split()[0] == "callbench"]:
                case.commands[name.replace("callbench", "callbench io_uring", 1)] = with_io_uring(case.commands[name])
    return [k for k in out if k.protocol in a.protocols]


def with_io_uring(command):
    def argv(port, secs):
        cmd = command(port, secs)
        return cmd[:2] + ["--io", "uring"] + cmd[2:]

    return argv


GNU_TIME = "/usr/bin/time"


def measure(tool: str, case: Case, server: Server, secs: int, rep: int, a, workdir: Path, callbench: str) -> Run:
    argv = case.commands[tool](server.port, secs)
    # The tool's peak RSS from GNU time (wait4's maxrss would count the Python process it was forked from).
    rss = workdir / "rss"
    rss.unlink(missing_ok=True)
    timed = os.access(GNU_TIME, os.X_OK)
    if timed:
        argv = [GNU_TIME, "-f", "%M", "-o", str(rss)] + argv
    c = run_client(argv, a.client_cpu, secs + a.grace, server, workdir, a.server_cpu)
    run = Run(tool, case.protocol, rep, cpu=c.cpu, wall=c.wall, status=c.code, foreign=c.foreign / c.wall)
    try:
        parsed = (parse_floor if tool.startswith(FLOOR_TOOLS) else parser(tool.split()[0], callbench))(c.out)
        run.ok, run.errors, run.seconds = parsed["ok"], parsed["errors"], parsed["seconds"]
        run.extra = {k: v for k, v in parsed.items() if k not in ("ok", "errors", "seconds")}
    except Exception as e:  # noqa: BLE001 - reported, the run counts as failed
        run.note = f"unparsable output ({e}); exit {c.code}; stderr: {c.err.strip()[-300:]!r}"
    try:
        run.extra["rss_kib"] = int(rss.read_text().split()[-1]) if timed else None
    except (OSError, ValueError, IndexError):
        run.extra["rss_kib"] = None
    if c.code != 0 and not run.note:
        run.note = f"exit {c.code}: {c.err.strip()[-300:]!r}"
    # The server's share over the tool's own window (its start-up and exit are outside it), at most one CPU.
    run.server_cpu = min(1.0, c.server_cpu / (run.seconds or c.wall))
    return run


# ---------------------------------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="interleaved repetitions per tool (default 5)")
    p.add_argument("--seconds", type=int, default=10, help="length of each run (default 10)")
    p.add_argument("--quick", action="store_true", help="2 repetitions of 3 s, open loop 3 s per rate")
    p.add_argument(
        "--protocols",
        default="http1,http2,grpc,http3,raw",
        help="any of http1,http2,grpc,http3,raw (default all; raw: callbench-floor's 64-byte echo)",
    )
    p.add_argument("--no-open-loop", action="store_true", help="skip the open-loop check")
    p.add_argument("--open-loop-protocol", default="http1", choices=["http1", "http2", "grpc"])
    p.add_argument("--open-loop-seconds", type=int, default=5)
    p.add_argument("--open-loop-shares", default="0.5,0.75,0.9")
    p.add_argument("-c", "--concurrency", type=int, default=50, help="calls in flight, HTTP/1.1 and gRPC (default 50)")
    p.add_argument("--h2-connections", type=int, default=5, help="HTTP/2 and HTTP/3 connections (default 5)")
    p.add_argument("--h2-streams", type=int, default=10, help="streams per HTTP/2 or HTTP/3 connection (default 10)")
    p.add_argument(
        "--ghz-templates",
        action="store_true",
        help="leave ghz's per-call template functions on, as ghz runs by default (and suites/tools.toml runs it)",
    )
    p.add_argument("--grpc-connections", type=int, default=1, help="gRPC connections (default 1, as ghz)")
    p.add_argument("--path", default="/students", help="REST path (default /students; gRPC calls Students/List)")
    p.add_argument("--rest-server", default="rust-actix")
    p.add_argument("--h2-server", default="rust-actix", help="a REST server that serves h2c (default rust-actix)")
    p.add_argument("--grpc-server", default="rust-tonic")
    p.add_argument("--h3-server", default="rust-axum", help="a REST server that serves HTTP/3 (default rust-axum)")
    p.add_argument("--client-cpu", default="0")
    p.add_argument("--server-cpu", default="1")
    p.add_argument("--grace", type=int, default=30, help="seconds a run may overrun before it is killed")
    p.add_argument("--no-build", action="store_true", help="use target/release as it is")
    p.add_argument("--no-callbench", action="store_true", help="peers only")
    p.add_argument("--no-uring", action="store_true", help="callbench over epoll only, not also with --io uring")
    p.add_argument("--markdown", action="store_true", help="print the Markdown to stdout instead of bench/results/")
    p.add_argument("--json", metavar="FILE", help="also write every run as JSON")
    a = p.parse_args(argv)
    if a.quick:
        a.reps, a.seconds, a.open_loop_seconds = 2, 3, 3
    names = {"http1": "HTTP/1.1", "http2": "HTTP/2", "grpc": "gRPC", "http3": "HTTP/3", "raw": "raw TCP"}
    try:
        a.protocols = [names[x.strip()] for x in a.protocols.split(",") if x.strip()]
        a.open_loop_protocol = names[a.open_loop_protocol]
        a.open_loop_shares = [float(x) for x in a.open_loop_shares.split(",")]
    except (KeyError, ValueError) as e:
        p.error(f"bad list: {e}")
    if a.reps < 1 or a.seconds < 1:
        p.error("--reps and --seconds must be at least 1")
    a.argv = argv
    return a


def main(argv=None) -> int:
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background (SIG_IGN)
    signal.signal(signal.SIGHUP, _on_sigterm)
    log = lambda *x: print(*x, file=sys.stderr, flush=True)  # noqa: E731

    if not which("taskset"):
        log("taskset (util-linux) is missing")
        return 2
    cpus = os.cpu_count()
    if cpus and cpus < 2 and a.client_cpu != a.server_cpu:
        log("fewer than 2 CPUs: pass --client-cpu and --server-cpu")
        return 2

    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    release = target / "release"
    if not a.no_build:
        log("building the workspace (cargo build --release --locked)...")
        built = subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--workspace"], cwd=ROOT)
        if built.returncode != 0:
            log("warning: the build failed; using the binaries already in target/release")

    tools = {t: which(t) for t in ("wrk", "h2load", "ghz")}
    if "HTTP/3" in a.protocols:
        tools["oha"] = which("oha")
        if tools["oha"] and not engine_procs.oha_speaks_http3(tools["oha"]):
            log("oha was built without HTTP/3 (cargo install --locked oha --features http3; scripts/setup does)")
            tools["oha"] = None
    cb = release / "callbench"
    tools["callbench"] = str(cb) if cb.exists() else None
    floor = release / "callbench-floor"
    tools["callbench-floor"] = str(floor) if floor.exists() else None
    if not tools["callbench-floor"]:
        log("note: target/release/callbench-floor is missing: no floor rows (build the workspace)")
    missing = [t for t, pth in tools.items() if not pth and t not in ("callbench", "callbench-floor")]
    if missing:
        log(f"missing peer tools: {', '.join(missing)} (run scripts/setup)")
        return 2
    use_cb = bool(not a.no_callbench and tools["callbench"] and engine_procs.callbench_load_works(tools["callbench"]))
    if not a.no_callbench and not use_cb:
        log("note: `callbench load` is not available in this build: peers only")
    callbench = tools["callbench"]
    if not callbench:
        log("target/release/callbench is missing (gen-users, and it reads the tools' outputs): build the workspace")
        return 2

    load1 = float(open("/proc/loadavg").read().split()[0])
    if load1 > 0.5:
        log(
            f"warning: load average {load1:.2f} before the benchmark: other processes will disturb it "
            "(see the 'others' column)"
        )
    all_cases = cases(a, tools)
    runs: list[Run] = []
    open_loop = None
    workdir = Path(tempfile.mkdtemp(prefix="callbench-bench-"))
    servers: list[Server] = []
    try:
        users = workdir / "users.json"
        subprocess.run([callbench, "gen-users", "-o", str(users)], check=True, timeout=60, stdout=subprocess.DEVNULL)
        for case in all_cases:
            binary = release / case.server_bin
            if not binary.exists():
                log(f"{case.protocol}: {binary} is missing, skipped")
                continue
            order = case.tools(use_cb)
            server = start_server(str(binary), case.server_bin, a.server_cpu, users, workdir, case.server_args)
            servers.append(server)
            log(
                f"{case.protocol}: {case.server_bin} on 127.0.0.1:{server.port} (CPU {a.server_cpu}); "
                f"{' / '.join(order)}, {a.reps} × {a.seconds} s each"
            )
            for tool in order:  # warm-up, not counted: also checks the command line and the parser
                w = measure(tool, case, server, 1, 0, a, workdir, callbench)
                if w.note:
                    log(f"  warm-up {tool}: {w.note}")
            for rep in range(1, a.reps + 1):
                for tool in order:
                    r = measure(tool, case, server, a.seconds, rep, a, workdir, callbench)
                    runs.append(r)
                    log(
                        f"  {rep}/{a.reps} {tool:9} {r.ok:>9} ok {r.errors:>5} err {fmt(r.throughput):>9}/s "
                        f"{fmt(r.cpu_us_per_call, 2):>7} µs/call  client {r.cpu / r.wall * 100:3.0f}%  "
                        f"server {r.server_cpu * 100:3.0f}%  others {r.foreign * 100:3.0f}%"
                        + (f"  ! {r.note}" if r.note else "")
                    )
            if use_cb and not a.no_open_loop and case.protocol == a.open_loop_protocol:
                open_loop = run_open_loop(a, case, server, runs, workdir, log)
            PROCS.stop(server.proc)
    except (KeyboardInterrupt, Interrupted) as e:
        log(f"interrupted ({str(e) or 'Ctrl-C'}): stopping everything")
        return 130
    finally:
        PROCS.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)

    rows = []
    for case in all_cases:
        for tool in case.tools(use_cb):
            rs = [r for r in runs if r.protocol == case.protocol and r.tool == tool]
            if rs:
                rows.append(Row(case.protocol, tool, rs))
    ratios = ratio_lines(rows) if use_cb else []
    floors = over_floor(rows)
    single = one_at_a_time(rows)
    print(text_report(rows, ratios, open_loop, floors, single, ONE_AT_A_TIME_TARGETS))

    commands = {}
    for case in all_cases:
        for tool, f in case.commands.items():
            if tool.split()[0] == "callbench" and not use_cb:
                continue
            argv = [Path(x).name if i == 0 else x for i, x in enumerate(f("PORT", a.seconds))]
            argv = [x.replace(str(ROOT) + "/", "") for x in argv]
            commands[(case.protocol, tool)] = "taskset -c " + a.client_cpu + " " + shlex.join(argv)
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
        "versions": tool_versions(tools),
        "commands": commands,
        "argv": a.argv,
        "call": f"REST `GET {a.path}` ({a.rest_server}; HTTP/2 h2c on {a.h2_server}; HTTP/3 on {a.h3_server}), gRPC "
        f"`callbench.v1.Students/List` ({a.grpc_server})",
    }
    md = markdown_report(rows, ratios, open_loop, meta, floors, single, ONE_AT_A_TIME_TARGETS)
    if a.markdown:
        print()
        print(md)
    else:
        out = dated_result(ROOT / "bench" / "results", "engine")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(md)
        log(f"wrote {out.relative_to(ROOT)}")
    if a.json:
        Path(a.json).write_text(
            json.dumps({"runs": [r.__dict__ for r in runs], "open_loop": open_loop}, indent=1, default=str)
        )
    bad = [r for r in runs if r.note]
    return 1 if bad else 0


def run_open_loop(a, case: Case, server: Server, runs, workdir, log):
    """Closed-loop maximum (the median of callbench's runs above), then --rate at the given shares of it.

    callbench's own `rate.achieved` counts the calls intended in its window, late ones included, so it equals the
    requested rate by construction. The achieved rate is therefore measured outside callbench, between 20% and 90%
    of the run: by the server's own count of the calls it answered (CALLBENCH_ANSWERED_FILE, read at both times:
    exact to the call, so the rate is good to the calls in flight over the span, 50 of some 10^5 here), or, for a
    server that keeps no count, by the bytes its connections received (kernel tcp_info, via ss) over callbench's
    request bytes per call (`wire_bytes_per_call.sent`; good to about 2%). A closed-loop run checks the method
    against callbench's own throughput first.
    """
    closed = [
        r.throughput for r in runs if r.protocol == case.protocol and r.tool == "callbench" and not r.note and r.ok
    ]
    if not closed:
        log("  open loop: no closed-loop callbench run to take the maximum from, skipped")
        return None
    top = med(closed)
    secs = a.open_loop_seconds
    base = case.commands["callbench"](server.port, secs)
    counted = server.answered_calls() is not None
    sampler = server.answered_calls if counted else (lambda: server_received_bytes(server.port))
    method = "answered" if counted else "bytes"
    out = {"protocol": case.protocol, "max": top, "seconds": secs, "runs": [], "method": method}
    for share in [None] + a.open_loop_shares:  # None: the closed-loop check of the measurement
        rate = None if share is None else round(top * share)
        argv = base if rate is None else base[:2] + ["--rate", str(rate)] + base[2:]
        c = run_client(
            argv,
            a.client_cpu,
            secs + a.grace,
            server,
            workdir,
            a.server_cpu,
            sample_at=(0.2 * secs, 0.9 * secs),
            sampler=sampler,
        )
        o = {
            "share": share,
            "requested": float("nan") if rate is None else float(rate),
            "measured": float("nan"),
            "error_pct": float("nan"),
            "achieved": float("nan"),
            "errors": 0,
            "late": None,
            "note": "",
        }
        try:
            p = parse_callbench(c.out)
            r = p["rate"] or {}
            o.update(
                errors=p["errors"],
                late=r.get("late_starts"),
                achieved=float(r["achieved"]) if r.get("achieved") is not None else p["ok"] / p["seconds"],
            )
            if len(c.samples) == 2 and (counted or p.get("wire_sent")):
                (ta, ba), (tb, bb) = c.samples
                o["measured"] = (bb - ba) / (1 if counted else p["wire_sent"]) / (tb - ta)
                # Closed loop: against callbench's own throughput (a check of the measurement, whole window).
                versus = o["achieved"] if rate is None else o["requested"]
                o["error_pct"] = (o["measured"] - versus) / versus * 100
                if rate is not None and abs(o["error_pct"]) > OPEN_LOOP_TOLERANCE * 100:
                    o["note"] = "outside 1%"
            else:
                o["note"] = "no measurement (the run ended early, or no wire_bytes_per_call.sent)"
        except Exception as e:  # noqa: BLE001
            o["note"] = f"unparsable ({e}); exit {c.code}: {c.err.strip()[-300:]!r}"
        out["runs"].append(o)
        what = "closed loop" if share is None else f"open loop {share * 100:.0f}%"
        log(
            f"  {what}: requested {fmt(o['requested'])}/s, callbench says {fmt(o['achieved'])}/s, measured at the "
            f"server {fmt(o['measured'])}/s ({fmt(o['error_pct'], 2)}%), late starts {o['late']}"
            + (f"  ! {o['note']}" if o["note"] else "")
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
