#!/usr/bin/env python3
"""A seed's suite run, committed: results.json, report.md and report.html of one `callbench run`.

    reproductions/suite.py run NAME [callbench run options]   # runs suites/NAME.toml, keeps its files in NAME/
    reproductions/suite.py check                              # every NAME/report.md is what its results.json renders

`run` writes the run into a scratch folder and copies the three files here, so a failed or
interrupted run leaves the committed ones as they were. `check` renders each folder's results.json
again with `callbench report` and compares it with the committed report.md: a figure edited in
one and not the other fails it. Suites with an emulated network need root.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEPT = ["results.json", "report.md", "report.html"]


def callbench(*args, **kw):
    return subprocess.run([str(ROOT / "callbench"), *args], cwd=ROOT, **kw)


def run(name, options):
    suite = ROOT / "suites" / f"{name}.toml"
    if not suite.is_file():
        sys.exit(f"suite.py: no suite {suite.relative_to(ROOT)}")
    with tempfile.TemporaryDirectory(prefix=f"callbench-{name}-") as scratch:
        out = Path(scratch) / "run"
        done = callbench("run", str(suite), "--out", str(out), *options)
        if not (out / "results.json").is_file():
            sys.exit(f"suite.py: callbench run wrote no results (exit {done.returncode})")
        if done.returncode != 0:
            print(
                f"suite.py: callbench run exited {done.returncode}: its cells are kept, read its report",
                file=sys.stderr,
            )
        dest = HERE / name
        dest.mkdir(exist_ok=True)
        for f in KEPT:
            shutil.copy(out / f, dest / f)
        print(f"suite.py: {', '.join(KEPT)} in {dest.relative_to(ROOT)}")
        return done.returncode


def folders():
    return sorted(
        p.parent
        for p in HERE.glob("*/results.json")
        if (p.parent / "report.md").is_file() and (p.parent / "report.html").is_file()
    )


def check():
    failed = []
    with tempfile.TemporaryDirectory(prefix="callbench-check-") as scratch:
        for folder in folders():
            out = Path(scratch) / folder.name
            out.mkdir()
            shutil.copy(folder / "results.json", out / "results.json")
            done = callbench("report", str(out), capture_output=True, text=True)
            if done.returncode != 0:
                failed.append(f"{folder.name}: callbench report failed: {done.stderr.strip()}")
                continue
            if (out / "report.md").read_text() != (folder / "report.md").read_text():
                failed.append(
                    f"{folder.name}/report.md differs from what its results.json renders "
                    f"(`./callbench report reproductions/{folder.name}` renders it again from the "
                    f"committed results; `reproductions/suite.py run {folder.name}` measures again)"
                )
    for f in failed:
        print(f"suite.py: {f}", file=sys.stderr)
    print(f"suite.py: {len(folders()) - len(failed)} of {len(folders())} suite reproductions agree with their results")
    return 1 if failed else 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["run"] and len(args) >= 2:
        return run(args[1], args[2:])
    if args == ["check"]:
        return check()
    sys.exit(__doc__.strip().splitlines()[2].strip() + "\n" + __doc__.strip().splitlines()[3].strip())


if __name__ == "__main__":
    sys.exit(main())
