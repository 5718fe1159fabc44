"""Builds a Python reference server: its venv, and for gRPC servers the code generated from contract/proto/.

    python3 servers/_python-shared/build.py --name python-fastapi --root . --target target [--protos]

- `{target}/servers/<name>/venv`: made with `python3 -m venv`, then `pip install -r servers/<name>/requirements.txt`
  (every package pinned). Skipped when the requirements file and the Python version are those of the last build.
- a `callbench.pth` in the venv puts `servers/_python-shared`, `servers/<name>` and the generated code on sys.path,
  so `venv/bin/python -m <package>` runs the server from anywhere.
- `--protos`: `grpc_tools.protoc` (from the venv) compiles `contract/proto/callbench/v1/*.proto` into
  `{target}/servers/<name>/gen`; skipped when the .proto files and the requirements are unchanged.

A second run with nothing changed takes a fraction of a second: `callbench run` and `verify` build every time.
"""

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

STAMP = ".callbench-stamp"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the server's folder name under servers/")
    parser.add_argument("--root", required=True, type=Path, help="the repository root")
    parser.add_argument("--target", required=True, type=Path, help="the build output root ({target})")
    parser.add_argument("--protos", action="store_true", help="generate gRPC code from contract/proto/")
    args = parser.parse_args()

    root = args.root.resolve()
    server_dir = root / "servers" / args.name
    out = args.target.resolve() / "servers" / args.name
    requirements = server_dir / "requirements.txt"
    venv = out / "venv"
    gen = out / "gen"

    requirements_hash = digest([requirements.read_bytes(), sys.version.encode()])
    python = ensure_venv(venv, requirements, requirements_hash)
    paths = [root / "servers" / "_python-shared", server_dir] + ([gen] if args.protos else [])
    write_if_changed(site_packages(venv) / "callbench.pth", "".join(f"{p}\n" for p in paths))
    if args.protos:
        generate(python, root / "contract" / "proto", gen, requirements_hash)


def ensure_venv(venv: Path, requirements: Path, stamp: str) -> Path:
    """The venv's python, (re)installing the requirements when they changed."""
    python = venv / "bin" / "python"
    if python.exists() and read(venv / STAMP) == stamp:
        return python
    log(f"creating {venv} and installing {requirements}")
    run([sys.executable, "-m", "venv", "--clear", str(venv)])
    run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "-q",
            "-r",
            str(requirements),
        ]
    )
    (venv / STAMP).write_text(stamp)
    return python


def generate(python: Path, proto_root: Path, gen: Path, requirements_hash: str) -> None:
    """Compiles contract/proto/callbench/v1/*.proto into gen/ (callbench/v1/*_pb2.py, *_pb2_grpc.py)."""
    protos = sorted((proto_root / "callbench" / "v1").glob("*.proto"))
    stamp = digest([requirements_hash.encode()] + [p.name.encode() + p.read_bytes() for p in protos])
    if read(gen / STAMP) == stamp:
        return
    log(f"generating gRPC code in {gen}")
    staging = gen.with_name(gen.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    run(
        [
            str(python),
            "-m",
            "grpc_tools.protoc",
            f"-I{proto_root}",
            f"--python_out={staging}",
            f"--grpc_python_out={staging}",
            f"--pyi_out={staging}",
        ]
        + [str(p) for p in protos]
    )
    (staging / STAMP).write_text(stamp)
    # Swap in the new tree whole, so a failed run never leaves half of it.
    shutil.rmtree(gen, ignore_errors=True)
    staging.rename(gen)


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages"))
    if len(found) != 1:
        sys.exit(f"error: expected one site-packages folder in {venv}, found {found}")
    return found[0]


def digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def write_if_changed(path: Path, text: str) -> None:
    if read(path) != text:
        path.write_text(text)


def run(argv: list[str]) -> None:
    result = subprocess.run(argv)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(argv)} failed with exit code {result.returncode}")


def log(message: str) -> None:
    print(f"build: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
