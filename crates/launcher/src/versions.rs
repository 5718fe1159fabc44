//! Versions of a server's runtime and packages, for the reproducibility record.

use crate::manifest::{Manifest, Versions};
use crate::program::ProgramManifest;
use crate::repo::Repo;
use std::collections::BTreeMap;
use std::process::Command;

/// `name -> version` for the manifest's runtime command, package commands and Cargo.lock packages.
pub fn server_versions(repo: &Repo, manifest: &Manifest) -> BTreeMap<String, String> {
    versions_of(repo, &manifest.versions, |arg| manifest.fill(repo, arg, None))
}

/// `name -> version` for a processing program of `processing/`.
pub fn program_versions(repo: &Repo, program: &ProgramManifest) -> BTreeMap<String, String> {
    versions_of(repo, &program.versions, |arg| program.fill(repo, arg, None))
}

fn versions_of(repo: &Repo, versions: &Versions, fill: impl Fn(&str) -> String) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(line) = first_line_of(repo, &versions.runtime, &fill) {
        out.insert("runtime".into(), line);
    }
    for (package, argv) in &versions.packages {
        if let Some(line) = first_line_of(repo, argv, &fill) {
            out.insert(package.clone(), line);
        }
    }
    if !versions.cargo_lock.is_empty() {
        let lock = std::fs::read_to_string(repo.root.join("Cargo.lock")).unwrap_or_default();
        for package in &versions.cargo_lock {
            if let Some(version) = cargo_lock_version(&lock, package) {
                out.insert(package.clone(), version);
            }
        }
    }
    out
}

/// The first line a version command prints (stdout, else stderr: `java -version` writes there).
fn first_line_of(repo: &Repo, argv: &[String], fill: &impl Fn(&str) -> String) -> Option<String> {
    let argv: Vec<String> = argv.iter().map(|a| fill(a)).collect();
    let (program, args) = argv.split_first()?;
    let o = Command::new(program).args(args).current_dir(&repo.root).output().ok()?;
    let text = String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout }).to_string();
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// The version of `package` in a Cargo.lock (the highest, if several).
pub fn cargo_lock_version(lock: &str, package: &str) -> Option<String> {
    let wanted = format!("name = \"{package}\"");
    let mut best: Option<String> = None;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let version = lines.next()?.trim().strip_prefix("version = \"")?.trim_end_matches('"').to_string();
            if best.as_ref().is_none_or(|b| version_key(&version) > version_key(b)) {
                best = Some(version);
            }
        }
    }
    best
}

fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-', '+']).map(|p| p.parse().unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_highest_locked_version() {
        let lock =
            "[[package]]\nname = \"h2\"\nversion = \"0.3.26\"\n\n[[package]]\nname = \"h2\"\nversion = \"0.4.10\"\n";
        assert_eq!(super::cargo_lock_version(lock, "h2").as_deref(), Some("0.4.10"));
        assert_eq!(super::cargo_lock_version(lock, "tokio"), None);
    }
}
