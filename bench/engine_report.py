"""What bench/engine.py measured, summarised: medians per protocol and tool, callbench/peer ratios against
the targets, the terminal table and the Markdown report, and the machine and tool versions it records."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Targets for callbench's client CPU per call over the peer's, per protocol (issue 18).
# HTTP/3 has no issue's target: both clients ride quinn and h3, so the bar is the peer itself (no more CPU).
CPU_TARGETS = {"HTTP/1.1": 0.80, "HTTP/2": 0.85, "gRPC": 0.30, "HTTP/3": 1.00}
# callbench as the benchmark runs it: its default (epoll), and its sockets through io_uring.
CALLBENCH_VARIANTS = ("callbench", "callbench io_uring")
THROUGHPUT_TOLERANCE = 0.10  # ±10% when the server is the bottleneck
SERVER_BOUND_CPU = 0.90  # the server counts as the bottleneck at this share of its CPU or more
OPEN_LOOP_TOLERANCE = 0.01  # achieved within 1% of requested


def med(xs):
    xs = [x for x in xs if x == x]  # no NaN
    return statistics.median(xs) if xs else float("nan")


@dataclass
class Row:
    protocol: str
    tool: str
    runs: list

    @property
    def good(self):
        return [r for r in self.runs if not r.note and r.ok > 0]

    @property
    def throughput(self):
        return med([r.throughput for r in self.good])

    @property
    def cpu_us(self):
        return med([r.cpu_us_per_call for r in self.good])

    @property
    def rss_mb(self):
        """Median peak RSS of the tool's process (GNU time's %M), MB."""
        return med([r.extra["rss_kib"] / 1024 for r in self.good if r.extra.get("rss_kib")])

    @property
    def client_share(self):
        return med([r.cpu / r.wall for r in self.good if r.wall > 0])

    @property
    def server_share(self):
        return med([r.server_cpu for r in self.good])

    @property
    def foreign(self):
        return med([r.foreign for r in self.good])

    @property
    def errors(self):
        return sum(r.errors for r in self.runs)


def fmt(x, digits=0):
    if x is None or x != x:
        return "–"
    return f"{x:,.{digits}f}"


def ratio_lines(rows: list[Row]):
    """(protocol, callbench variant, peer, throughput ratio, server-bound?, throughput verdict, cpu ratio, cpu target,
    cpu verdict), for each variant measured."""
    by = {(r.protocol, r.tool): r for r in rows}
    out: list[tuple] = []
    pairs = [
        (protocol, variant, tool, peer)
        for (protocol, tool), peer in by.items()
        for variant in CALLBENCH_VARIANTS
        if not tool.startswith(("callbench", "floor"))
        and protocol in CPU_TARGETS
        and (variant == "callbench" or (protocol, variant) in by)
    ]
    for protocol, variant, tool, peer in pairs:
        cb = by.get((protocol, variant))
        if not cb or not cb.good or not peer.good:
            out.append((protocol, variant, tool, None, None, "n/a", None, CPU_TARGETS[protocol], "n/a"))
            continue
        tr = cb.throughput / peer.throughput
        # The throughput target applies when the server, not the client, limited both tools' runs.
        saturated = [x.tool for x in (cb, peer) if x.client_share >= SERVER_BOUND_CPU]
        bound = not saturated and min(cb.server_share, peer.server_share) >= SERVER_BOUND_CPU
        if bound:
            tv = "meets" if abs(tr - 1) <= THROUGHPUT_TOLERANCE else "misses"
        elif saturated:
            tv = f"n/a ({' and '.join(saturated)} client-bound)"
        else:
            tv = "n/a (server not saturated)"
        cr = cb.cpu_us / peer.cpu_us
        cv = "meets" if cr <= CPU_TARGETS[protocol] else "misses"
        out.append((protocol, variant, tool, tr, bound, tv, cr, CPU_TARGETS[protocol], cv))
    return out


def single_verdicts(single, targets):
    """'meets'/'misses' for one call at a time: (CPU ratio, its verdict, latency ratio, its verdict)."""
    (cpu, lat), (cpu_t, lat_t) = single, targets
    return cpu, "meets" if cpu <= cpu_t else "misses", lat, "meets" if lat <= lat_t else "misses"


def text_report(rows, ratios, open_loop, floors=(), single=None, single_targets=None) -> str:
    lines = [
        f"{'protocol':9} {'tool':20} {'calls/s':>10} {'CPU µs/call':>12} {'peak MB':>8} {'client CPU':>10} "
        f"{'server CPU':>10} {'others':>7} {'errors':>7} {'runs':>5}"
    ]
    for r in rows:
        lines.append(
            f"{r.protocol:9} {r.tool:20} {fmt(r.throughput):>10} {fmt(r.cpu_us, 2):>12} {fmt(r.rss_mb, 1):>8} "
            f"{fmt(r.client_share * 100, 0) + '%':>10} {fmt(r.server_share * 100, 0) + '%':>10} "
            f"{fmt(r.foreign * 100, 0) + '%':>7} {r.errors:>7} {len(r.good):>2}/{len(r.runs):<2}"
        )
    if ratios:
        lines.append("")
        lines.append("callbench / peer (medians):")
    for protocol, who, peer, tr, _bound, tv, cr, ct, cv in ratios:
        lines.append(
            f"  {protocol:9} {who:18} / {peer:7} throughput {fmt(tr, 2):>5} "
            f"(target 0.90–1.10 when server-bound: {tv}); "
            f"CPU/call {fmt(cr, 2):>5} (target ≤ {ct:.2f}: {cv})"
        )
    if floors:
        lines.append("")
        lines.append("over the floor (CPU per call ÷ callbench-floor's over epoll, same calls, same server):")
        for protocol, tool, x in floors:
            lines.append(f"  {protocol:9} {tool:12} {fmt(x, 2):>5}×")
    if single:
        cpu, cv, lat, lv = single_verdicts(single, single_targets)
        lines.append("")
        lines.append(
            f"one call at a time, callbench raw:// over the raw ping-pong: CPU/call {fmt(cpu, 2)} (target ≤ "
            f"{single_targets[0]:.1f}: {cv}); p50 latency {fmt(lat, 2)} (target ≤ {single_targets[1]:.1f}: {lv})"
        )
    if open_loop:
        lines.append("")
        lines.append(
            f"open loop ({open_loop['protocol']}, {open_loop['seconds']} s per rate; closed-loop maximum "
            f"{fmt(open_loop['max'])} calls/s; achieved rate measured at the server):"
        )
        lines.append(
            f"  {'rate':>11} {'requested/s':>12} {'callbench says':>15} {'measured/s':>11} {'error':>8} "
            f"{'late starts':>11} {'errors':>7}"
        )
        for o in open_loop["runs"]:
            label = "closed loop" if o["share"] is None else f"{o['share'] * 100:.0f}% of max"
            lines.append(
                f"  {label:>11} {fmt(o['requested']):>12} {fmt(o['achieved']):>15} {fmt(o['measured']):>11} "
                f"{fmt(o['error_pct'], 2) + '%':>8} "
                f"{o['late'] if o['late'] is not None else '–':>11} {o['errors']:>7}"
                + (f"  {o['note']}" if o.get("note") else "")
            )
    return "\n".join(lines)


def markdown_report(rows, ratios, open_loop, meta, floors=(), single=None, single_targets=None) -> str:
    md = [f"# callbench engine vs peers — {meta['date']}", ""]
    md.append(
        f"Machine: {meta['cpu']} ({meta['ncpu']} CPUs), {meta['kernel']}. callbench {meta['commit']}. "
        f"Client pinned to CPU {meta['client_cpu']}, server to CPU {meta['server_cpu']} (`--workers 1`). "
        f"{meta['reps']} interleaved repetitions of {meta['seconds']} s per tool; medians. Client CPU = user + sys "
        f"of the client process from `wait4`, divided by completed calls. Call: {meta['call']}."
    )
    md.append("")
    md.append("Tools: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".")
    md.append("")
    md.append(
        "| protocol | tool | calls/s | client CPU µs/call | peak RSS MB | client CPU | server CPU | others | errors |"
    )
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        md.append(
            f"| {r.protocol} | {r.tool} | {fmt(r.throughput)} | {fmt(r.cpu_us, 2)} | {fmt(r.rss_mb, 1)} | "
            f"{fmt(r.client_share * 100)}% | "
            f"{fmt(r.server_share * 100)}% | {fmt(r.foreign * 100)}% | {r.errors} |"
        )
    md.append("")
    md.append(
        "Client CPU and server CPU: the share of their one CPU each used; others: CPU used on those two CPUs by "
        "other processes meanwhile (noise; near 0% on a quiet machine). Peak RSS: the tool's maximum resident set "
        "(GNU time's %M)."
    )
    md.append("")
    md.append("Commands (PORT: the server's):")
    md.append("")
    for (protocol, tool), command in meta["commands"].items():
        md.append(f"- {protocol}, {tool}: `{command}`")
    if ratios:
        md.append("")
        md.append("| protocol | callbench / peer | throughput | target | CPU per call | target |")
        md.append("|---|---|---:|---|---:|---|")
    for protocol, who, peer, tr, _bound, tv, cr, ct, cv in ratios:
        md.append(
            f"| {protocol} | {who} / {peer} | {fmt(tr, 2)} | ±10% when server-bound: {tv} "
            f"| {fmt(cr, 2)} | ≤ {ct:.2f}: {cv} |"
        )
    if floors:
        md.append("")
        md.append(
            "Over the floor: each tool's client CPU per call divided by `callbench-floor`'s (bench/floor) over epoll, "
            "which makes the same calls against the same server with nothing on top — the request's bytes out, the "
            "answer's bytes counted in, no parsing, one clock read per wake-up — so the floor is what the kernel alone "
            "costs at that server's pace; `floor-uring` is the same over io_uring (one multishot receive per "
            "connection into provided buffers, SINGLE_ISSUER + DEFER_TASKRUN)."
        )
        md.append("")
        md.append("| protocol | tool | CPU per call over the floor |")
        md.append("|---|---|---:|")
        for protocol, tool, x in floors:
            md.append(f"| {protocol} | {tool} | {fmt(x, 2)}× |")
    if single:
        cpu, cv, lat, lv = single_verdicts(single, single_targets)
        md.append("")
        md.append(
            f"One call at a time (`-c 1`), `callbench load raw://` over `callbench-floor`'s ping-pong on the same "
            f"echo: client CPU per call {fmt(cpu, 2)}× (target ≤ {single_targets[0]:.1f}: {cv}), p50 latency "
            f"{fmt(lat, 2)}× (target ≤ {single_targets[1]:.1f}: {lv})."
        )
    if open_loop:
        md.append("")
        md.append(
            f"Open loop ({open_loop['protocol']}, `callbench load --rate R`, {open_loop['seconds']} s each; "
            f"closed-loop maximum {fmt(open_loop['max'])} calls/s). Measured from 20% to 90% of the run: "
            + (
                "the calls the server answered, by its own count (`CALLBENCH_ANSWERED_FILE`, exact to the call)"
                if open_loop.get("method") == "answered"
                else "the requests' bytes the server's connections received (kernel tcp_info via `ss`), over "
                "callbench's request bytes per call"
            )
            + "; the closed-loop row checks that against callbench's own throughput "
            "(over its whole window, ramp-up included). callbench's own achieved rate counts the calls "
            "intended in its window, late ones included. Error: measured vs requested (closed loop: vs "
            "callbench's throughput). Target: within 1% of the requested rate."
        )
        md.append("")
        md.append("| rate | requested/s | callbench's achieved/s | measured/s | error | late starts | errors |")
        md.append("|---|---:|---:|---:|---:|---:|---:|")
        for o in open_loop["runs"]:
            label = "closed loop (check)" if o["share"] is None else f"{o['share'] * 100:.0f}% of max"
            md.append(
                f"| {label} | {fmt(o['requested'])} | {fmt(o['achieved'])} | {fmt(o['measured'])} | "
                f"{fmt(o['error_pct'], 2)}% | {o['late'] if o['late'] is not None else '–'} | {o['errors']} |"
            )
    md.append("")
    md.append(f"Made by `python3 bench/engine.py {' '.join(meta['argv'])}`.")
    return "\n".join(md) + "\n"


def tool_versions(tools) -> dict:
    v = {}

    def cmd(argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip()
        except Exception:  # noqa: BLE001
            return ""

    if tools.get("wrk"):
        m = re.search(r"wrk (\S+)", cmd([tools["wrk"], "--version"]))
        v["wrk"] = m.group(1) if m else "?"
    if tools.get("h2load"):
        m = re.search(r"nghttp2/(\S+)", cmd([tools["h2load"], "--version"]))
        v["h2load"] = "nghttp2 " + (m.group(1) if m else "?")
    if tools.get("oha"):
        m = re.search(r"oha (\S+)", cmd([tools["oha"], "--version"]))
        v["oha"] = (m.group(1) if m else "?") + " (http3)"
    if tools.get("ghz"):
        m = re.search(r"mod\s+\S+\s+(v\S+)", cmd(["go", "version", "-m", tools["ghz"]])) if shutil.which("go") else None
        v["ghz"] = m.group(1) if m else cmd([tools["ghz"], "--version"]) or "?"
    return v


def dated_result(folder: Path, name: str) -> Path:
    """folder/NAME-DATE.md, or NAME-DATE-HHMM.md when a run of the same day (perhaps committed) is there already."""
    now = dt.datetime.now()
    out = folder / f"{name}-{now.date().isoformat()}.md"
    return out if not out.exists() else folder / f"{name}-{now.strftime('%Y-%m-%d-%H%M')}.md"


def git_commit() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return rev + (" (uncommitted changes)" if dirty else "")
    except Exception:  # noqa: BLE001
        return "?"


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"
