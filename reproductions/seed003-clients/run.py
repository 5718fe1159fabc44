#!/usr/bin/env python3
"""Seed 003's runs made by the article's own clients: a fresh JVM per run, across its link, on a t2.small-like CPU.

The article timed runs of 1000 to 5000 sequential car + driver calls from a desktop to a t2.small EC2
instance ~200 miles away: a Spring WebFlux WebClient making blocking calls to Spring Boot, and a
grpc-java blocking stub, each run its own JVM. Here those clients (clients/seed003-java) call the
reference servers java-spring and java-grpc across `callbench serve --network rtt=…`, each server
first warmed by callbench's engine (the article's servers ran as long-lived jars).

Nothing is tuned. The round trip is derived from the article: its gRPC totals grow by a least-squares
slope of ~12.4 ms a call over N; the same clients and servers here, across a link with no added delay,
grow by a slope measured first; the round trip is the difference (REST's slopes give a check). The
CPU limits are a t2.small's: none (the credit model's balance never runs out over the article's run,
see `credit_model` in results.json), its 20% baseline with no burst (an instance with no credits), and
20% with the largest burst the kernel takes (one period's quota, cgroup cpu.max.burst; its absence is
recorded). The client JVM runs on either core, and pinned to one core in a control cell.

A run of N calls is the first N calls of a fresh JVM's run: each JVM makes the largest N, and its
running total is read at every N, as the article's separate runs of N would have measured it. The
same server then takes the same calls from callbench's engine, whose client is warm. The server's
CPU time (utime + stime of its processes) and its cgroup's throttling are read before and after each
timed run (server_cpu.py), so they count the timed calls only, not the warm-up.

    sudo reproductions/seed003-clients/run.py            # writes results.json and report.md here (~34 min)
    reproductions/seed003-clients/run.py --render        # report.md again from results.json (left as it is)
    reproductions/seed003-clients/run.py --check         # report.md is what results.json renders

Root is needed (network namespaces and the cgroups of the CPU limits).
"""

import argparse
import datetime
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import checkout, describe  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLIENT = ROOT / "clients/seed003-java"
JAR = CLIENT / "target/seed003-clients.jar"
READ = f"python3 {HERE / 'server_cpu.py'}"
# The article's runs (ms, the mean of 10), for N = 1000..5000.
ARTICLE = {"grpc": [14478, 25239, 37823, 53073, 62624], "rest": [16451, 30181, 43996, 58221, 71300]}
ARTICLE_RUNS_PER_N = 10
# The article's own table of growth per step, as printed (whole percents, rounded down).
ARTICLE_GROWTH_PRINTED = {"grpc": [74, 49, 40, 17], "rest": [83, 45, 32, 22]}
SERVERS = {"rest": "java-spring", "grpc": "java-grpc"}
# A delay only: the article gives no line rate, and a call's few hundred bytes hardly feel one.
LINK = "rtt={rtt_us}us"
# A t2.small (AWS's table of burstable instances): one vCPU, a 20% baseline, 12 credits earned an hour
# (one credit: a vCPU at 100% for a minute), 30 credits at launch; the kernel's CFS period.
T2_SMALL = {"baseline": 0.2, "credits_per_hour": 12, "launch_credits": 30, "period_ms": 100}
# The conditions, in the cells' order (gRPC then REST for each): the server's CPU limit, its burst
# (the largest the kernel takes: one period's quota), and whether the client JVM is pinned to a core.
CONDITIONS = [
    {"limit": None, "burst_ms": None, "pinned": False},
    {"limit": "20%", "burst_ms": None, "pinned": False},
    {"limit": "20%", "burst_ms": T2_SMALL["baseline"] * T2_SMALL["period_ms"], "pinned": False},
    {"limit": None, "burst_ms": None, "pinned": True},
]


def build():
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(CLIENT / "pom.xml"), "-DskipTests", "package"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def now():
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slope(totals_ms, marks):
    """Least-squares ms per call of totals against N: the marginal call, a fixed start cost apart."""
    mx, my = statistics.fmean(marks), statistics.fmean(totals_ms)
    return sum((x - mx) * (y - my) for x, y in zip(marks, totals_ms, strict=True)) / sum((x - mx) ** 2 for x in marks)


def timed(out, name, command):
    """`command` between two readings of the server (its CPU, its cgroup's counters)."""
    return f"{READ} > {out}/{name}.before\n{command}\n{READ} > {out}/{name}.after\n"


def serve(kind, cond, rtt_us, runs, calls, engine_calls, workdir):
    """One server across the link: warmed, then `runs` fresh client JVMs, the engine, and 5 s idle."""
    label = f"{kind}-{cond['limit'] or 'full'}-{cond['burst_ms'] or 0}-{'pinned' if cond['pinned'] else 'free'}"
    out = workdir / f"{label}-{rtt_us}"
    out.mkdir()
    pin = "taskset -c 0 " if cond["pinned"] else ""
    load = f'{ROOT / "callbench"} load -q -o json --workload cars "$CALLBENCH_TARGET"'
    script = "set -e\n" + f"{load} -z 10s -c 16 > {out}/warm.json\n"
    for r in range(runs):
        jvm = f'{pin}java -jar {JAR} {kind} "$CALLBENCH_TARGET" {calls} {r + 1} > {out}/run-{r}.jsonl'
        script += timed(out, f"run-{r}", jvm)
    script += timed(out, "engine", f"{pin}{load} -n {engine_calls} -c 1 > {out}/engine.json")
    # The server's own background (timers, GC, the JIT's last compiles), with no calls: taken off the calls' CPU.
    script += timed(out, "idle", "sleep 5")
    argv = [str(ROOT / "callbench"), "serve", SERVERS[kind], "--network", LINK.format(rtt_us=rtt_us)]
    if cond["limit"]:
        argv += ["--cpu-limit", cond["limit"]]
    if cond["burst_ms"]:
        argv += ["--cpu-burst", f"{cond['burst_ms']:g}ms"]
    argv += ["--", "sh", "-c", script]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return None, done.stderr
    own = re.search(r"the link alone costs (\d+) µs", done.stderr)
    jvms = []
    for r in range(runs):
        lines = [json.loads(line) for line in (out / f"run-{r}.jsonl").read_text().splitlines() if line.strip()]
        summary = lines[-1]
        us = [line["us"] for line in lines[:-1]]
        if summary.get("failed") or len(us) != calls or not all(line["ok"] for line in lines[:-1]):
            sys.exit(f"run.py: {kind} run {r}: not {calls} successful calls ({summary})")
        jvms.append({"us": us, "jvm_to_first_call_ms": summary["jvm_to_first_call_ms"], **between(out, f"run-{r}")})
    return {
        "jvms": jvms,
        "engine": {**json.loads((out / "engine.json").read_text()), **between(out, "engine")},
        "idle": between(out, "idle"),
        "warm": json.loads((out / "warm.json").read_text()),
        "link_own_us": int(own.group(1)) if own else None,
    }, done.stderr


def between(out, name):
    """The server's CPU (ms) and its cgroup's counters over what ran between two readings."""
    a, b = (json.loads((out / f"{name}.{side}").read_text()) for side in ("before", "after"))
    # The scheduler's ns, unless the ticks say more than two ticks' worth went to threads that ended
    # (as crates/machine's process_group reads a server's CPU).
    tick_ms = 1000 / a["ticks_per_s"]
    ticks_ms = (b["cpu_ticks"] - a["cpu_ticks"]) * tick_ms
    sched_ms = (b["sched_ns"] - a["sched_ns"]) / 1e6
    got = {
        "server_cpu_ms": ticks_ms if ticks_ms > sched_ms + 2 * tick_ms else sched_ms,
        "wall_s": b["wall_s"] - a["wall_s"],
    }
    if a["cgroup"]:
        sa, sb = a["cgroup"]["stat"], b["cgroup"]["stat"]
        d = {k: sb[k] - sa[k] for k in sb if k in sa}
        v1 = "throttled_time" in d  # v1 counts nanoseconds, v2 microseconds
        got["cgroup"] = {
            "periods": d["nr_periods"],
            "throttled_periods": d["nr_throttled"],
            "throttled_ms": (d["throttled_time"] / 1e6) if v1 else d["throttled_usec"] / 1e3,
            "bursts": d.get("nr_bursts"),
            "burst_ms": (d["burst_time"] / 1e6 if v1 else d["burst_usec"] / 1e3) if "nr_bursts" in d else None,
            "burst_file": b["cgroup"]["burst_file"],
            "burst_us": b["cgroup"]["burst_us"],
        }
    return got


def net(span, idle_ms_per_s):
    """A span's server CPU (ms) less the idle background over its wall time."""
    return span["server_cpu_ms"] - idle_ms_per_s * span["wall_s"]


def summed(parts):
    """Counters of several timed spans added up."""
    keys = ("periods", "throttled_periods", "throttled_ms", "bursts", "burst_ms")
    return {k: None if any(p[k] is None for p in parts) else round(sum(p[k] for p in parts), 1) for k in keys}


def cell(kind, cond, rtt_us, marks, got):
    jvms, engine = got["jvms"], got["engine"]
    totals = {n: [sum(j["us"][:n]) / 1000 for j in jvms] for n in marks}
    step = 1000
    per_block = [
        statistics.median(sum(j["us"][i : i + step]) / step / 1000 for j in jvms) for i in range(0, marks[-1], step)
    ]
    calls = marks[-1]
    engine_calls = engine["calls"]["ok"]
    limited = "cgroup" in engine
    idle = got["idle"]["server_cpu_ms"] / got["idle"]["wall_s"]
    return {
        "client": kind,
        "server": SERVERS[kind],
        "cpu_limit": cond["limit"] or "none",
        "cpu_burst_ms": cond["burst_ms"],
        "client_pinned": cond["pinned"],
        "rtt_ms": rtt_us / 1000,
        "link_own_rtt_ms": round(got["link_own_us"] / 1000, 2) if got["link_own_us"] is not None else None,
        "jvm_runs": len(jvms),
        "jvm_to_first_call_ms": statistics.median(j["jvm_to_first_call_ms"] for j in jvms),
        "first_call_ms": round(statistics.median(j["us"][0] for j in jvms) / 1000, 1),
        "total_ms": {str(n): round(statistics.median(v)) for n, v in totals.items()},
        "total_ms_runs": {str(n): [round(x) for x in v] for n, v in totals.items()},
        "mean_ms_per_1000": [round(x, 2) for x in per_block],
        # The server's CPU over each JVM's whole run (its connection, its calls, its close), per call, less
        # its idle background over the same wall time.
        "server_cpu_ms_per_call_runs": [round(net(j, idle) / calls, 3) for j in jvms],
        "server_cpu_ms_per_call": round(statistics.median(net(j, idle) / calls for j in jvms), 3),
        "server_cpu_ms_per_call_gross": round(statistics.median(j["server_cpu_ms"] / calls for j in jvms), 3),
        "server_idle_cpu_ms_per_s": round(idle, 2),
        "engine": {
            "calls": engine_calls,
            "mean_ms": round(engine["latency_us"]["mean"] / 1000, 2),
            "p50_ms": round(engine["latency_us"]["p50"] / 1000, 2),
            "server_cpu_ms_per_call": round(net(engine, idle) / engine_calls, 3),
            "server_cpu_ms_per_call_gross": round(engine["server_cpu_ms"] / engine_calls, 3),
            "throttled": summed([engine["cgroup"]]) if limited else None,
        },
        "warm_calls_per_s": round(got["warm"]["throughput_per_s"]),
        # Over the JVMs' timed runs only (cpu.stat read before and after each), not the warm-up.
        "throttled": summed([j["cgroup"] for j in jvms]) if limited else None,
        "burst_file": engine["cgroup"]["burst_file"] if limited else None,
        "burst_us_set": engine["cgroup"]["burst_us"] if limited else None,
    }


def derive_rtt(runs, calls, marks, workdir):
    """The round trip the article's link added: its gRPC slope less this machine's across no delay."""
    probe = {}
    for kind in ("grpc", "rest"):
        got, err = serve(kind, CONDITIONS[0], 0, runs, calls, 1000, workdir)
        if got is None:
            sys.exit(f"run.py: the probe of {kind} across no delay failed:\n{err[-3000:]}")
        slopes = [slope([sum(j["us"][:n]) / 1000 for n in marks], marks) for j in got["jvms"]]
        probe[kind] = {
            "slope_ms_per_call_runs": [round(s, 3) for s in slopes],
            "slope_ms_per_call": statistics.median(slopes),
        }
        probe[kind]["article_slope_ms_per_call"] = slope(ARTICLE[kind], marks)
        probe[kind]["rtt_ms"] = probe[kind]["article_slope_ms_per_call"] - probe[kind]["slope_ms_per_call"]
        print(f"{kind} across no delay: {probe[kind]}", file=sys.stderr)
    for p in probe.values():
        for k in ("slope_ms_per_call", "article_slope_ms_per_call", "rtt_ms"):
            p[k] = round(p[k], 3)
    # gRPC's: one call on a kept HTTP/2 connection is one round trip, so its slope bounds the RTT.
    rtt_us = round(probe["grpc"]["rtt_ms"] * 10) * 100
    if rtt_us <= 0:
        sys.exit(f"run.py: the derived round trip is not above zero: {probe}")
    return rtt_us, probe


def credit_model(results):
    """What the article's whole run cost a t2.small in CPU credits, by the server CPU measured here."""
    calls = ARTICLE_RUNS_PER_N * sum(results["marks"])
    hours = ARTICLE_RUNS_PER_N * sum(sum(v) for v in ARTICLE.values()) / 3.6e6
    model = {
        **T2_SMALL,
        "article_calls_per_server": calls,
        "article_hours": round(hours, 2),
        "earned_credits": round(hours * T2_SMALL["credits_per_hour"], 1),
    }
    for c in results["cells"][:2]:
        # Credits a server spends beyond what it earns while it runs its share of the article's calls.
        model[f"{c['client']}_credits_used"] = round(c["server_cpu_ms_per_call"] * calls / 60000, 2)
    return model


def growth(totals):
    """+74% … : how much longer each run is than the one before it."""
    return [round((b / a - 1) * 100) for a, b in itertools.pairwise(totals)]


def label(c):
    """`20% + 20 ms burst, client pinned`: a cell's conditions in words."""
    limit = c["cpu_limit"] if c["cpu_limit"] != "none" else "no limit"
    if c.get("cpu_burst_ms"):
        limit += f" + {c['cpu_burst_ms']:g} ms burst"
    return limit + (", client pinned" if c.get("client_pinned") else "")


def split(grpc, rest):
    """REST's extra ms a call over the first 1000 calls, split by measured figures (identity: the first
    three add up to the gap; the engine's part splits into the servers' CPU and the rest)."""
    g, r = grpc["mean_ms_per_1000"], rest["mean_ms_per_1000"]
    gap = r[0] - g[0]
    parts = {
        "gap_ms": gap,
        "client_warmup_ms": (r[0] - r[-1]) - (g[0] - g[-1]),
        "warm_client_ms": (r[-1] - rest["engine"]["mean_ms"]) - (g[-1] - grpc["engine"]["mean_ms"]),
        "engine_ms": rest["engine"]["mean_ms"] - grpc["engine"]["mean_ms"],
        "server_cpu_ms": rest["engine"]["server_cpu_ms_per_call"] - grpc["engine"]["server_cpu_ms_per_call"],
        "server_cpu_jvm_ms": rest["server_cpu_ms_per_call"] - grpc["server_cpu_ms_per_call"],
    }
    parts["engine_beyond_server_cpu_ms"] = parts["engine_ms"] - parts["server_cpu_ms"]
    out = {"condition": label(grpc), **{k: round(v, 3) for k, v in parts.items()}}
    for k in ("client_warmup_ms", "warm_client_ms", "engine_ms", "server_cpu_ms", "engine_beyond_server_cpu_ms"):
        out[k.replace("_ms", "_pct")] = round(parts[k] / gap * 100) if gap else None
    out["clients_pct"] = round((parts["client_warmup_ms"] + parts["warm_client_ms"]) / gap * 100) if gap else None
    return out


def derive(results):
    """The figures read off the measured ones (seconds, growth per step, the gap's split): stored by a
    run, recomputed in memory by --render and --check."""
    for c in results["cells"]:
        totals = [c["total_ms"][str(n)] for n in results["marks"]]
        c["total_s"] = {str(n): round(t / 1000, 2) for n, t in zip(results["marks"], totals, strict=True)}
        c["growth_pct"] = growth(totals)
        blocks = c["mean_ms_per_1000"]
        # The first thousand calls' time beyond the same JVM's last thousand: its warm-up.
        c["first_1000_beyond_last_s"] = round(blocks[0] - blocks[-1], 2)
        # A warm JVM's call beyond the engine's on the same server and link: the client's own cost.
        c["last_1000_beyond_engine_ms"] = round(blocks[-1] - c["engine"]["mean_ms"], 2)
    cells = results["cells"]
    results["gaps"] = [split(cells[i], cells[i + 1]) for i in range(0, len(cells) - 1, 2)]
    results["credit_model"] = credit_model(results)
    return results


def versions():
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    pom = (CLIENT / "pom.xml").read_text()

    def get(key):
        return re.search(f"<{key}>([^<]+)</{key}>", pom).group(1)

    return {"java": java, "spring-boot": get("spring-boot.version"), "grpc-java": get("grpc.version")}


def held(t):
    if not t:
        return "–"
    text = f"{t['throttled_periods']} of {t['periods']} periods, {t['throttled_ms']:.0f} ms"
    if t.get("bursts"):
        text += f"; burst in {t['bursts']} ({t['burst_ms']:.0f} ms)"
    return text


def render_report(results):
    marks = results["marks"]
    env = results["environment"]
    d = results["rtt_derivation"]
    cm = results["credit_model"]
    cheapest = min((t / n, n) for t, n in zip(ARTICLE["grpc"], marks, strict=True))
    lines = [
        "# Seed 003's runs, made by the article's own clients",
        "",
        f"Run {env['started_at']} to {env['finished_at']} at commit {env['git_commit'][:12]} (clean: "
        f"{'no' if env['git_dirty'] else 'yes'}) on {env['machine']}; {results['versions']['java']}, Spring Boot "
        f"{results['versions']['spring-boot']} (WebClient), grpc-java {results['versions']['grpc-java']}. "
        f"Regenerate: `{results['command']}`.",
        "",
        f"**The round trip, derived**: the article's totals grow {d['grpc']['article_slope_ms_per_call']:.2f} ms "
        f"a call (gRPC; REST {d['rest']['article_slope_ms_per_call']:.2f}), the least-squares slope over its five N; "
        f"the same clients and servers here across a link with no added delay grow {d['grpc']['slope_ms_per_call']:.2f}"
        f" ms (REST {d['rest']['slope_ms_per_call']:.2f}). The difference is the round trip the article's link added: "
        f"{d['grpc']['rtt_ms']:.2f} ms from gRPC's (REST's gives {d['rest']['rtt_ms']:.2f} ms), run as "
        f"{results['link']}. The article's cheapest mean call, {cheapest[0]:.2f} ms (gRPC, {cheapest[1]} calls), "
        "bounds it from above (a call costs at least one round trip). The derivation assumes the article's machines "
        "spent on a call what these do.",
        "",
        f"**The CPU limits**: a t2.small earns {cm['credits_per_hour']} credits an hour ({cm['baseline']:.0%} of its "
        f"vCPU) and starts with {cm['launch_credits']}; one credit is its vCPU at 100% for a minute. The article's run "
        f"({cm['article_calls_per_server']:,} calls a server over {cm['article_hours']} h, earning "
        f"{cm['earned_credits']} credits) took {cm['rest_credits_used']} credits of server CPU for REST and "
        f"{cm['grpc_credits_used']} for gRPC at the CPU per call measured here (unlimited cells): "
        + (
            "less than the launch credits alone, so the balance never ran out and the credit model's t2.small is "
            "the unlimited cell. "
            if max(cm["rest_credits_used"], cm["grpc_credits_used"]) < cm["launch_credits"]
            else "more than the launch credits, so a t2.small could have run out. "
        )
        + f"The kernel's burst ({results['burst_check']}) holds at most one period's quota, not a balance of "
        "minutes: the 20% cells with no burst (an instance out of credits) and with the largest burst the kernel "
        "takes are the limits below it.",
        "",
        f"Each server warmed by callbench's engine first, then fresh client JVMs of {marks[-1]} sequential calls "
        "each: a run of N is the first N calls of one (medians of the JVMs).",
        "",
        "| client (server) | conditions | JVMs | " + " | ".join(f"{n} calls" for n in marks) + " | growth per step |",
        "|---|---|---:|" + "---:|" * len(marks) + "---|",
    ]
    for kind in ("grpc", "rest"):
        art = ARTICLE[kind]
        lines.append(
            f"| the article: {kind} | t2.small | {ARTICLE_RUNS_PER_N} | "
            + " | ".join(f"{t / 1000:.2f} s" for t in art)
            + " | "
            + ", ".join(f"+{g}%" for g in growth(art))
            + " |"
        )
    for c in results["cells"]:
        totals = [c["total_ms"][str(n)] for n in marks]
        lines.append(
            f"| {c['client']} ({c['server']}) | {label(c)} | {c['jvm_runs']} | "
            + " | ".join(f"{t / 1000:.2f} s" for t in totals)
            + " | "
            + ", ".join(f"+{g}%" for g in growth(totals))
            + " |"
        )
    lines += [
        "",
        "The article's growth per step above is computed from its totals, rounded. Its own table prints "
        + "; ".join(f"{kind} " + ", ".join(f"+{g}%" for g in ARTICLE_GROWTH_PRINTED[kind]) for kind in ("grpc", "rest"))
        + ", which its totals give to a tenth as "
        + "; ".join(
            f"{kind} " + ", ".join(f"+{(b / a - 1) * 100:.1f}%" for a, b in itertools.pairwise(ARTICLE[kind]))
            for kind in ("grpc", "rest")
        )
        + ": the article rounds down.",
        "",
        "Each JVM's mean call, by thousand, against callbench's engine on the same server and link (warm, one call "
        "at a time); the server's CPU per call (utime + stime, read before and after each timed run: the JVMs' runs, "
        "the engine's) and how often its limit held it back over the JVMs' timed runs only:",
        "",
        "| client | conditions | mean ms per call: calls 1–1000, 1001–2000, … | engine's mean | server CPU a call: "
        "JVM, engine | server held back (JVM runs) | JVM start → first call | first call |",
        "|---|---|---|---:|---:|---|---:|---:|",
    ]
    for c in results["cells"]:
        lines.append(
            f"| {c['client']} | {label(c)} | {', '.join(f'{x:.2f}' for x in c['mean_ms_per_1000'])} "
            f"| {c['engine']['mean_ms']:.2f} ms | {c['server_cpu_ms_per_call']:.3f}, "
            f"{c['engine']['server_cpu_ms_per_call']:.3f} ms | {held(c['throttled'])} "
            f"| {c['jvm_to_first_call_ms']} ms | {c['first_call_ms']} ms |"
        )
    lines += [
        "",
        "REST's extra time a call over the first 1000 calls, split by measured figures: the JVM clients' warm-up "
        "(first 1000 less last 1000), the warm clients' own cost (last 1000 less the engine's call), and the engine's "
        "difference on the same servers, of which the servers' measured CPU:",
        "",
        "| conditions | gap | client warm-up | warm client | engine's difference | of it, server CPU | "
        "server CPU under the JVMs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for g in results["gaps"]:
        lines.append(
            f"| {g['condition']} | {g['gap_ms']:.2f} ms | {g['client_warmup_ms']:.2f} ms ({g['client_warmup_pct']}%) "
            f"| {g['warm_client_ms']:.2f} ms ({g['warm_client_pct']}%) | {g['engine_ms']:.2f} ms ({g['engine_pct']}%) "
            f"| {g['server_cpu_ms']:.3f} ms ({g['server_cpu_pct']}%) | {g['server_cpu_jvm_ms']:.3f} ms |"
        )
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="fresh client JVMs per server and condition (default 3)")
    ap.add_argument("--pinned-runs", type=int, default=2, help="the same for the pinned-client control (default 2)")
    ap.add_argument("--probe-runs", type=int, default=2, help="JVMs per server across no delay (default 2)")
    ap.add_argument("--calls", type=int, default=5000, help="calls per JVM, read at every 1000 (default 5000)")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from results.json")
    ap.add_argument("--check", action="store_true", help="report.md is what results.json renders")
    a = ap.parse_args()
    if a.render or a.check:
        # The measured record is never written again: what is derived from it is derived in memory.
        results = derive(json.loads((HERE / "results.json").read_text()))
        if a.render:
            (HERE / "report.md").write_text(render_report(results))
            return 0
        for kind, printed in ARTICLE_GROWTH_PRINTED.items():
            if [int((b / a - 1) * 100) for a, b in itertools.pairwise(ARTICLE[kind])] != printed:
                print(f"run.py: the article's {kind} totals, rounded down, are not its printed growth {printed}")
                return 1
        if (HERE / "report.md").read_text() != render_report(results):
            print("reproductions/seed003-clients/report.md is not what results.json renders (run.py --render)")
            return 1
        return 0
    if min(a.runs, a.pinned_runs, a.probe_runs) < 1 or a.calls < 2000 or a.calls % 1000:
        sys.exit("run.py: runs are at least 1, and --calls a multiple of 1000 from 2000 (the article's: 5000)")
    started, started_wall = now(), time.monotonic()
    commit, dirty = checkout()
    marks = list(range(1000, a.calls + 1, 1000))
    build()
    cells = []
    with tempfile.TemporaryDirectory(prefix="callbench-seed003-") as tmp:
        rtt_us, probe = derive_rtt(a.probe_runs, a.calls, marks, Path(tmp))
        burst_note = None
        for cond in CONDITIONS:
            runs = a.pinned_runs if cond["pinned"] else a.runs
            got = {}
            for kind in ("grpc", "rest"):
                got[kind], err = serve(kind, cond, rtt_us, runs, a.calls, 1000, Path(tmp))
                if got[kind] is None:
                    if cond["burst_ms"] and "has no cpu" in err:
                        burst_note = err.strip().splitlines()[-1]
                        break
                    sys.exit(f"run.py: {kind} under {cond} failed:\n{err[-3000:]}")
            if any(g is None for g in got.values()):
                print(f"run.py: no burst on this kernel, its cells left out: {burst_note}", file=sys.stderr)
                continue
            for kind in ("grpc", "rest"):
                cells.append(cell(kind, cond, rtt_us, marks, got[kind]))
                print(f"{kind}, {label(cells[-1])}: {cells[-1]['total_ms']}", file=sys.stderr)
    burst_cells = [c for c in cells if c["cpu_burst_ms"]]
    if burst_cells:
        c = burst_cells[0]
        check = f"{c['burst_file']} present on Linux {os.uname().release}, set to {c['burst_us_set']} µs"
    else:
        check = f"no burst file on Linux {os.uname().release}: {burst_note}"
    command = "sudo reproductions/seed003-clients/run.py"
    command += "".join(
        f" --{k} {v}"
        for k, v, d in (
            ("runs", a.runs, 3),
            ("pinned-runs", a.pinned_runs, 2),
            ("probe-runs", a.probe_runs, 2),
            ("calls", a.calls, 5000),
        )
        if v != d
    )
    results = {
        "environment": {
            "git_commit": commit,
            "git_dirty": dirty,
            "started_at": started,
            "finished_at": now(),
            "wall_s": round(time.monotonic() - started_wall),
            "machine": describe(),
            "cores": os.cpu_count(),
        },
        "versions": versions(),
        "command": command,
        "link": LINK.format(rtt_us=rtt_us),
        "rtt_derivation": probe,
        "burst_check": check,
        # Counts from the noise of the last run: JVM-to-JVM spread of a 5000-call total ≤ 0.8% unlimited
        # (2–3 JVMs suffice), 8–13% under 20% (3, the most the half-hour budget allows).
        "counts": {
            "runs": a.runs,
            "pinned_runs": a.pinned_runs,
            "probe_runs": a.probe_runs,
            "calls": a.calls,
            "why": "JVM-to-JVM spread of a run's total: a few % with no limit (2–3 JVMs), 6–21% under 20% (3, the "
            "most a half-hour run allows); the pinned control and the probe 2 each",
        },
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
