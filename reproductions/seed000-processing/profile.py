#!/usr/bin/env python3
"""Where seed 000's processing time goes, per runtime: read, parse, search, hash, free, timed apart.

The suite (suites/seed000-processing.toml) times one whole iteration of each language's program in
processing/. This profile runs the same work split into its phases — read users.json, parse all of
it, find the user, SHA-512 hex, free the parsed users (the programs free them inside their timed
iteration, as a function returning does) — each phase timed by the runtime's own monotonic clock,
by a program per runtime in phases/ (Rust's is processing/rust/examples/phases.rs). Beside it, the
suite's own program (processing/NAME, as its processing.toml runs it) gives the whole iteration, so
the phases can be checked to add up to what the suite measures. Python runs twice: Debian's
(the suite's) and, when pyenv has it, 3.8, the article's version; the article's PHP 7.4 and
Node 14 are not installed here.

Every process is pinned to one CPU (taskset), 50 timed iterations after 20 untimed ones, as the
suite's warm cells; processes alternate between runtimes, round after round. Figures are the
median and p10–p90 over every timed iteration of every round.

    # about 40 seconds; writes profile.json and profile.md here
    reproductions/seed000-processing/profile.py
    reproductions/seed000-processing/profile.py --check [FILE...]   # profile.md (and FILE's block) match profile.json
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import checkout  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PHASES = ["read", "parse", "search", "hash", "free"]
USERS_SHA256 = "f05aecc030315eb68cf1d208d42bb96f787b020f19f1fbbb9c803191401dc05c"
USER_ID = 9999
PASSWORD = "callbench"


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


def python38():
    """pyenv's newest 3.8 (the article's Python), or None."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = sorted(
        glob.glob(str(root / "versions/3.8.*/bin/python3.8")), key=lambda p: [int(x) for x in re.findall(r"\d+", p)]
    )
    return found[-1] if found else None


def sh(argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def cargo_lock_version(name):
    return re.search(rf'name = "{name}"\nversion = "([^"]+)"', (ROOT / "Cargo.lock").read_text()).group(1)


def runtimes():
    """name → how to run its phases program and its suite program, and what it is made of."""
    phases = HERE / "phases"
    py38 = python38()
    out = {
        "node": {
            "label": "Node.js",
            "phases": ["node", str(phases / "phases.js")],
            "versions": lambda: {
                "runtime": sh(["node", "--version"]),
                "json": f"JSON.parse of V8 {sh(['node', '-p', 'process.versions.v8'])}",
                "sha512": f"crypto (OpenSSL {sh(['node', '-p', 'process.versions.openssl'])})",
            },
        },
        "php": {
            "label": "PHP",
            "phases": ["php", str(phases / "phases.php")],
            "versions": lambda: {
                "runtime": sh(["php", "--version"]).splitlines()[0],
                "json": "json_decode of the bundled json extension " + sh(["php", "-r", "echo phpversion('json');"]),
                "sha512": "hash() of the bundled hash extension",
                "opcache_cli": sh(["php", "-r", "echo (int) ini_get('opcache.enable_cli');"]),
            },
        },
        "python": {"label": "Python", "interpreter": "/usr/bin/python3"},
        "python3.8": {"label": "Python 3.8 (the article's)", "interpreter": py38, "program": "python"},
        "rust": {
            "label": "Rust",
            "phases": [str(target_dir() / "release/examples/phases")],
            "versions": lambda: {
                "runtime": sh(["rustc", "--version"]),
                "json": f"serde_json {cargo_lock_version('serde_json')}",
                "sha512": f"sha2 {cargo_lock_version('sha2')}, hex {cargo_lock_version('hex')}",
            },
        },
    }
    for name in ("python", "python3.8"):
        py = out[name]["interpreter"]
        if py is None:
            del out[name]
            continue
        out[name]["phases"] = [py, str(phases / "phases.py")]
        out[name]["versions"] = lambda py=py: {
            "runtime": sh([py, "--version"]),
            "json": "json "
            + sh(
                [
                    py,
                    "-c",
                    "import json, json.scanner as s; print(json.__version__, end=' ');"
                    "print('with its C scanner' if s.c_make_scanner else 'pure Python')",
                ]
            ),
            "sha512": "hashlib (" + sh([py, "-c", "import ssl; print(ssl.OPENSSL_VERSION)"]) + ")",
        }
    return out


def suite_program(name, spec, users, iterations, warmup):
    """The suite's own command for this runtime, from processing/NAME/processing.toml."""
    program = spec.get("program", name)
    folder = ROOT / "processing" / program
    manifest = tomllib.loads((folder / "processing.toml").read_text())
    values = {
        "dir": folder,
        "root": ROOT,
        "target": target_dir(),
        "users": users,
        "id": USER_ID,
        "password": PASSWORD,
        "iterations": iterations,
        "warmup": warmup,
    }
    argv = [re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), a) for a in manifest["run"]["command"]]
    if "interpreter" in spec:
        argv[0] = spec["interpreter"]
    return argv


def users_json():
    """callbench's users.json (crates/workloads/src/users.rs), the same bytes, checked by digest."""
    lines = [f'{{"id":{i},"hash":"{hashlib.sha512(f"password-{i}".encode()).hexdigest()}"}}' for i in range(1, 10_001)]
    data = ("[\n" + ",\n".join(lines) + "\n]\n").encode()
    if hashlib.sha256(data).hexdigest() != USERS_SHA256:
        sys.exit("profile.py: users.json is not callbench's (digest differs)")
    return data


def pinned(cpu, argv):
    run = subprocess.run(["taskset", "-c", str(cpu), *argv], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"profile.py: {' '.join(argv)} failed ({run.returncode}): {run.stderr[-1000:]}")
    lines = run.stdout.split("\n")
    want = hashlib.sha512(PASSWORD.encode()).hexdigest()
    if lines[0] != f"hash {want}":
        sys.exit(f"profile.py: {' '.join(argv)} printed {lines[0]!r}, expected the hash of {PASSWORD!r}")
    return [line.split()[1:] for line in lines[1:] if line.strip()]


def steal_and_total(cpu):
    """The CPU's stolen and total jiffies so far (/proc/stat)."""
    for line in open("/proc/stat"):
        if line.startswith(f"cpu{cpu} "):
            ticks = [int(x) for x in line.split()[1:]]
            return ticks[7], sum(ticks)
    return 0, 0


def quantile(values, q):
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def ms(ns):
    """ns as ms to three significant figures (a number, as the seed table's pointers print it)."""
    x = ns / 1e6
    return float(f"{x:.3g}") if x else 0.0


def summary(values_ns):
    return {
        "median": ms(statistics.median(values_ns)),
        "p10": ms(quantile(values_ns, 0.1)),
        "p90": ms(quantile(values_ns, 0.9)),
    }


def machine():
    model = next((x.split(":", 1)[1].strip() for x in open("/proc/cpuinfo") if x.startswith("model name")), "")
    return {"cpu_model": model, "cores": os.cpu_count(), "kernel": platform.release()}


def suite_run():
    """The committed suite run's warm medians and machine, for the profile to stand beside."""
    results = json.loads((HERE / "results.json").read_text())
    warm = {}
    for cell in results["cells"]:
        if cell["id"].startswith("processing/auth/") and cell["id"].endswith("/start=warm"):
            warm[cell["id"].split("/")[2]] = ms(cell["summary"]["wall_us_per_call"]["median"] * 1000)
    env = results["environment"]
    return {"cpu_model": env["cpu_model"], "started_at": env["started_at"], "warm_ms": warm}


def measure(a):
    specs = runtimes()
    build = ["cargo", "build", "--release", "--locked", "-p", "processing-rust", "--bin", "processing-rust"]
    subprocess.run([*build, "--example", "phases"], cwd=ROOT, check=True)
    started = datetime.datetime.now(datetime.UTC)
    commit, dirty = checkout()
    samples = {name: {"phases": [], "whole": []} for name in specs}
    steal0 = steal_and_total(a.cpu)
    load = float(Path("/proc/loadavg").read_text().split()[0])  # runnable processes, the last minute
    with tempfile.TemporaryDirectory(prefix="callbench-profile-") as tmp:
        users = Path(tmp) / "users.json"
        users.write_bytes(users_json())
        opts = ["--users", str(users), "--id", str(USER_ID), "--password", PASSWORD]
        opts += ["--iterations", str(a.iterations), "--warmup", str(a.warmup)]
        for round_ in range(a.rounds):
            for name, spec in specs.items():
                samples[name]["phases"] += pinned(a.cpu, [*spec["phases"], *opts])
                samples[name]["whole"] += pinned(a.cpu, suite_program(name, spec, users, a.iterations, a.warmup))
            print(f"round {round_ + 1}/{a.rounds} done", file=sys.stderr)
    steal1 = steal_and_total(a.cpu)
    finished = datetime.datetime.now(datetime.UTC)
    out = {}
    for name, spec in specs.items():
        rows = samples[name]["phases"]
        phases = {}
        for i, phase in enumerate(PHASES):
            column = [int(r[i]) for r in rows if r[i] != "-"]
            phases[phase] = summary(column) if column else None
        sums = [sum(int(x) for x in r if x != "-") for r in rows]
        whole = [int(r[0]) for r in samples[name]["whole"]]
        versions = spec["versions"]()
        out[name] = {
            "label": spec["label"],
            # "PHP 8.2.36", "Python 3.11.2", "rustc 1.95.0"; Node prints "v20.20.2".
            "version": re.sub(r"^v(?=\d)", "Node.js ", " ".join(versions["runtime"].split()[:2])),
            "versions": versions,
            "iterations": len(rows),
            "phases_ms": phases,
            "phases_sum_ms": summary(sums),
            "suite_program_ms": summary(whole),
            "parse_share_pct": round(100 * statistics.median(int(r[1]) for r in rows) / statistics.median(sums)),
        }
    stolen = steal1[0] - steal0[0]
    total = max(1, steal1[1] - steal0[1])
    return {
        "environment": {
            "git_commit": commit,
            "git_dirty": dirty,
            "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "finished_at": finished.strftime("%Y-%m-%dT%H:%M:%SZ"),
            **machine(),
            "cpu": a.cpu,
            "steal_pct": round(100 * stolen / total, 1),
            "loadavg_at_start": load,
            "command": "reproductions/seed000-processing/profile.py"
            + (f" --rounds {a.rounds}" if a.rounds != 10 else ""),
        },
        "users_json": {"users": 10_000, "bytes": len(users_json()), "sha256": USERS_SHA256},
        "rounds": a.rounds,
        "iterations_per_process": a.iterations,
        "warmup_per_process": a.warmup,
        "runtimes": out,
        "suite_run": suite_run(),
    }


def cell(s):
    return "–" if s is None else f"{s['median']} ({s['p10']}–{s['p90']})"


def figures(p):
    """The phase table (profile.md, and the book's block checked by --check FILE)."""
    rows = [
        "| runtime | " + " | ".join(PHASES) + " | phases' sum | suite's program | parse's share |",
        "|---|" + "---:|" * (len(PHASES) + 3),
    ]
    for r in p["runtimes"].values():
        phases = " | ".join(cell(r["phases_ms"][x]) for x in PHASES)
        rows.append(
            f"| {r['version']} | {phases} | {cell(r['phases_sum_ms'])} | "
            f"{cell(r['suite_program_ms'])} | {r['parse_share_pct']}% |"
        )
    return "\n".join(rows)


def render(p):
    env = p["environment"]
    suite = p["suite_run"]
    lines = [
        "# Seed 000's processing time, phase by phase",
        "",
        f"Run {env['started_at']} – {env['finished_at']} on {env['cpu_model']} ({env['cores']} CPUs, kernel "
        f"{env['kernel']}), every process pinned to CPU {env['cpu']}; the hypervisor stole {env['steal_pct']}% of "
        f"it meanwhile (load average {env['loadavg_at_start']} at the start). Commit {env['git_commit']}"
        f"{' (with uncommitted changes)' if env['git_dirty'] else ''}. "
        f"Regenerate: `{env['command']}`.",
        "",
        f"users.json: {p['users_json']['users']:,} users, {p['users_json']['bytes']:,} bytes (callbench's, SHA-256 "
        f"{p['users_json']['sha256'][:12]}…). Each runtime: {p['rounds']} processes of {p['iterations_per_process']} "
        f"timed iterations after {p['warmup_per_process']} untimed ones, processes alternating between runtimes. "
        "Milliseconds per iteration, median (p10–p90) over every timed iteration; *suite's program* is the whole "
        "iteration of processing/NAME as the suite runs it, in processes of its own beside the phases'.",
        "",
        "<!-- figures: reproductions/seed000-processing/profile.json -->",
        figures(p),
        "<!-- /figures -->",
        "",
        "Node has no free phase: V8 collects the parsed users later, inside whichever phase its collector runs.",
        "",
        "The work against the article's code: the same steps in each language — the file read and all of it parsed "
        "on every call, the same search (PHP's array_search over array_column, Python's next(filter(...)), Node's "
        "Array.find, Rust's iter().position) and the SHA-512 hex of the password (PHP's hash() gives what the "
        "article's bin2hex(mhash(...)) gives). The article does not give its user.json, only its shape (10,000 "
        "users `{id, hash}`): callbench's hash is a 128-digit SHA-512 hex, so the size above is a guess at the "
        "article's, and parsing, most of the time of every runtime but Node, grows with it. The suite's timed "
        "iteration includes freeing the parsed users (the free phase), as a function returning does; the article's "
        "snippets do not show "
        "where its timer stopped. Not installed here: the article's PHP 7.4 and Node 14, and .NET (the suite's C# "
        "runs on Mono with Newtonsoft.Json, which is not a .NET 6 figure).",
        "",
        "| runtime | JSON | SHA-512 |",
        "|---|---|---|",
        *[f"| {r['label']} | {r['versions']['json']} | {r['versions']['sha512']} |" for r in p["runtimes"].values()],
        "",
        f"The suite's committed run (results.json here, started {suite['started_at']}) ran on {suite['cpu_model']}; "
        "its warm medians: " + ", ".join(f"{name} {v} ms" for name, v in suite["warm_ms"].items()) + ".",
        "",
    ]
    return "\n".join(lines)


BLOCK = re.compile(r"<!-- figures: reproductions/seed000-processing/profile.json -->\n(.*?)\n<!-- /figures -->", re.S)


def check(files):
    profile = json.loads((HERE / "profile.json").read_text())
    bad = 0
    if (HERE / "profile.md").read_text() != render(profile):
        print("reproductions/seed000-processing/profile.md is not what profile.json renders (profile.py --render)")
        bad += 1
    want = figures(profile)
    for f in files:
        blocks = BLOCK.findall(Path(f).read_text())
        if not blocks:
            print(f"{f}: no figures block of reproductions/seed000-processing/profile.json")
            bad += 1
        for block in blocks:
            if block.strip() != want.strip():
                print(
                    f"{f}: the block quoted from reproductions/seed000-processing/profile.json differs; it should read:"
                )
                print(want)
                bad += 1
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10, help="processes per runtime (default 10)")
    ap.add_argument("--iterations", type=int, default=50, help="timed iterations per process (default 50)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed iterations first (default 20)")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU every process is pinned to (default 1)")
    ap.add_argument(
        "--check", nargs="*", metavar="FILE", help="check profile.md, and FILE's block, against profile.json"
    )
    ap.add_argument("--render", action="store_true", help="write profile.md from profile.json")
    a = ap.parse_args()
    if a.check is not None:
        return check(a.check)
    if a.render:
        (HERE / "profile.md").write_text(render(json.loads((HERE / "profile.json").read_text())))
        return 0
    if min(a.rounds, a.iterations) < 1 or a.warmup < 0:
        sys.exit("profile.py: --rounds and --iterations must be at least 1, --warmup at least 0")
    profile = measure(a)
    (HERE / "profile.json").write_text(json.dumps(profile, indent=2) + "\n")
    (HERE / "profile.md").write_text(render(profile))
    print(figures(profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
