//! Versions of a server's runtime and packages, for the reproducibility record.

use crate::manifest::Manifest;
use crate::repo::Repo;
use std::collections::BTreeMap;
use std::process::Command;

/// `name -> version` for the manifest's runtime command and Cargo.lock packages.
pub fn server_versions(repo: &Repo, manifest: &Manifest) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some((program, args)) = manifest.versions.runtime.split_first() {
        if let Ok(o) = Command::new(program).args(args).current_dir(&repo.root).output() {
            let text = String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout }).to_string();
            if let Some(line) = text.lines().next() {
                out.insert("runtime".into(), line.trim().to_string());
            }
        }
    }
    if !manifest.versions.cargo_lock.is_empty() {
        let lock = std::fs::read_to_string(repo.root.join("Cargo.lock")).unwrap_or_default();
        for package in &manifest.versions.cargo_lock {
            if let Some(version) = cargo_lock_version(&lock, package) {
                out.insert(package.clone(), version);
            }
        }
    }
    out
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
