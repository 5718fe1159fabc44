#!/usr/bin/env bash
# Builds every processing program with its manifest's [build] command, then checks each one:
# the right SHA-512 hex for id 1 and id 9999, exit 2 for an unknown id (10001) and for bad
# arguments, and the output shape (`hash <hex>`, then one `ns <n>` per timed iteration).
# Prints `N passed, N failed` and exits non-zero on any failure.
#
# The Rust program has no [build] (the workspace build makes it): this script runs
# `cargo build --release --locked --workspace` for it, or with PROCESSING_CARGO_SCOPE
# (e.g. "-p processing-rust") instead of --workspace. CARGO_TARGET_DIR is honoured, as callbench does.
# Usage: processing/test.sh [NAME...]   (default: every processing/*/processing.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/go/bin:/usr/local/go/bin:$HOME/.cargo/bin:$PATH"
exec python3 - "$@" <<'PY'
import hashlib, os, subprocess, sys, tempfile, tomllib
from pathlib import Path

root = Path.cwd()
target = root / os.environ.get("CARGO_TARGET_DIR", "target")
names = sys.argv[1:] or sorted(p.parent.name for p in (root / "processing").glob("*/processing.toml"))
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {what}")
    else:
        failed += 1
        print(f"FAIL  {what}: {detail}")
    sys.stdout.flush()


def users_json():
    """The users.json of callbench (crates/workloads/src/users.rs): same bytes, checked by digest."""
    out = ["[\n"]
    for i in range(1, 10_001):
        h = hashlib.sha512(f"password-{i}".encode()).hexdigest()
        out.append('{"id":%d,"hash":"%s"}%s' % (i, h, ",\n" if i < 10_000 else "\n"))
    out.append("]\n")
    data = "".join(out).encode()
    assert hashlib.sha256(data).hexdigest() == "f05aecc030315eb68cf1d208d42bb96f787b020f19f1fbbb9c803191401dc05c"
    return data


def fill(arg, d, values=None):
    arg = arg.replace("{root}", str(root)).replace("{target}", str(target)).replace("{dir}", str(d))
    for key, value in (values or {}).items():
        arg = arg.replace("{%s}" % key, str(value))
    return arg


tmp = tempfile.TemporaryDirectory(prefix="callbench-processing-")
users = Path(tmp.name) / "users.json"
users.write_bytes(users_json())

# (id, password, expected exit code, expected hash); the second password checks UTF-8 bytes.
cases = [
    (1, "pässwörd ✓", 0, hashlib.sha512("pässwörd ✓".encode()).hexdigest()),
    (9999, "abc", 0, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    (10001, "abc", 2, None),
]

for name in names:
    d = root / "processing" / name
    try:
        manifest = tomllib.loads((d / "processing.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        check(False, f"{name}: manifest", e)
        continue
    check(manifest.get("name") == name, f"{name}: manifest name", manifest.get("name"))
    if "build" in manifest:
        build = [fill(a, d) for a in manifest["build"]["command"]]
    elif (d / "Cargo.toml").is_file():
        scope = os.environ.get("PROCESSING_CARGO_SCOPE", "--workspace").split()
        build = ["cargo", "build", "--release", "--locked", *scope]
    else:
        build = None
    if build:
        print(f"build {name}: {' '.join(build)}", flush=True)
        try:
            r = subprocess.run(build, cwd=root, stdin=subprocess.DEVNULL)
            ok, detail = r.returncode == 0, f"exit {r.returncode}"
        except OSError as e:
            ok, detail = False, str(e)
        check(ok, f"{name}: build", detail)
        if not ok:
            continue
    env = dict(os.environ, **{k: fill(v, d) for k, v in manifest["run"].get("env", {}).items()})

    def run(values):
        argv = [fill(a, d, values) for a in manifest["run"]["command"]]
        try:
            return subprocess.run(argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return subprocess.CompletedProcess(argv, -1, "", str(e))

    for user_id, password, code, expected in cases:
        what = f"{name}: id {user_id}"
        r = run({"users": users, "id": user_id, "password": password, "iterations": 3, "warmup": 1})
        err = r.stderr.strip().splitlines()[-1:] or [""]
        if r.returncode != code:
            check(False, what, f"exit {r.returncode}, expected {code}: {err[0]}")
        elif code != 0:
            check(err == [f"error user {user_id} not found"], what, f"stderr {r.stderr.strip()!r}")
        else:
            lines = r.stdout.splitlines()
            ns = lines[1:]
            ok = (lines[:1] == [f"hash {expected}"] and len(ns) == 3
                  and all(l.startswith("ns ") and l[3:].isdigit() and int(l[3:]) > 0 for l in ns))
            check(ok, what, f"stdout {r.stdout!r}")
    r = run({"users": users, "id": "x", "password": "abc", "iterations": 1, "warmup": 0})
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not r.stdout,
          f"{name}: bad arguments", f"exit {r.returncode}, stderr {r.stderr!r}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
