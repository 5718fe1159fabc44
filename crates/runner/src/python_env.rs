//! The Python that runs the callers of Python experiments (`kind = "python"`, seed 004): which
//! interpreter, the checkout's venv made when missing, and the versions of what it imports.
//! Their repetitions are in repetition/python.rs.

use callbench_launcher::repo::Repo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python that runs the callers: `$CALLBENCH_PYTHON`, else the checkout's venv
/// (`target/python-venv`, made by `scripts/test-python` or by `callbench run`), else `python3`.
pub fn interpreter(repo: &Repo) -> PathBuf {
    if let Some(p) = std::env::var_os("CALLBENCH_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = venv_python(repo);
    if venv.is_file() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

fn venv_python(repo: &Repo) -> PathBuf {
    repo.target_dir().join("python-venv/bin/python")
}

fn importable(python: &Path) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-c", "import callbench._native, requests, httpx, grpc"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("import failed").trim().to_string())
}

/// A Python with the callbench package: found, or (when `build`) installed into the checkout's venv
/// with `pip install ./python`, as a server's build command would build it.
pub(crate) fn prepare(repo: &Repo, build: bool) -> Result<PathBuf, String> {
    let python = interpreter(repo);
    let problem = match importable(&python) {
        Ok(()) => return Ok(python),
        Err(problem) => problem,
    };
    if !build || std::env::var_os("CALLBENCH_PYTHON").is_some() {
        return Err(format!(
            "Python experiments need the callbench package in {} ({problem}): run `pip install ./python` there, \
             set CALLBENCH_PYTHON to a Python that has it, or run without --no-build",
            python.display()
        ));
    }
    let venv = venv_python(repo);
    let steps: [(&str, Vec<String>); 2] = [
        ("python3", vec!["-m".into(), "venv".into(), repo.target_dir().join("python-venv").display().to_string()]),
        (
            venv.to_str().unwrap_or_default(),
            ["-m", "pip", "install", "-q", "--disable-pip-version-check", "./python"].map(String::from).to_vec(),
        ),
    ];
    for (program, args) in steps.iter().skip(usize::from(venv.is_file())) {
        eprintln!("callbench: installing the Python package: {program} {}", args.join(" "));
        let status = Command::new(program)
            .args(args)
            .current_dir(&repo.root)
            .status()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !status.success() {
            return Err(format!("installing the Python package failed ({status}): {program} {}", args.join(" ")));
        }
    }
    importable(&venv).map_err(|p| format!("the Python package was installed but does not import: {p}"))?;
    Ok(venv)
}

/// The Python's version and path, and those of the libraries the callers use.
pub fn versions(python: &Path) -> BTreeMap<String, String> {
    const SCRIPT: &str = "import json, platform, sys\nfrom importlib import metadata\nfrom callbench import _native\n\
        v = {'python': platform.python_version(), 'interpreter': sys.executable, 'pyo3': _native.PYO3_VERSION}\n\
        for p in ('requests', 'httpx', 'grpcio'):\n    v[p] = metadata.version(p)\nprint(json.dumps(v))";
    let out = Command::new(python).args(["-c", SCRIPT]).output();
    let mut versions: BTreeMap<String, String> = out
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or_default();
    versions.entry("interpreter".into()).or_insert_with(|| python.display().to_string());
    versions
}
