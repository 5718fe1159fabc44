//! `processing/<name>/processing.toml`: seed 000's work (read users.json, parse, find, SHA-512) as
//! a program in one language, and one timed run of it as a real process ([`crate::child`]).

use crate::error::{because, chain, LaunchError};
use crate::manifest::{Command as ManifestCommand, Versions};
use crate::repo::Repo;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramManifest {
    pub name: String,
    /// As the report prints it: `Node.js`, `C# (Mono)`.
    pub language: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub build: Option<ManifestCommand>,
    pub run: ManifestCommand,
    #[serde(default)]
    pub versions: Versions,
    #[serde(skip)]
    pub dir: PathBuf,
}

/// What one run is asked to do.
#[derive(Debug, Clone)]
pub struct RunArgs {
    pub users: PathBuf,
    pub id: i64,
    pub password: String,
    pub iterations: u64,
    pub warmup: u64,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct ProgramRun {
    /// The hash the program printed.
    pub hash: String,
    /// Each timed iteration, as the program timed it.
    pub iteration_ns: Vec<u64>,
    /// From spawn to exit, seen from outside.
    pub wall: Duration,
    /// User + system CPU of the process and its children.
    pub cpu: Duration,
    pub max_rss_kib: u64,
}

impl ProgramManifest {
    pub fn load(path: &Path) -> Result<ProgramManifest, LaunchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LaunchError::BadManifest(because(format!("cannot read {}", path.display()), &e)))?;
        let mut m: ProgramManifest = toml::from_str(&text).map_err(|e| {
            LaunchError::BadManifest(because(format!("{} is not a valid processing manifest", path.display()), &e))
        })?;
        m.dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        if m.run.command.is_empty() {
            return Err(LaunchError::BadManifest(format!("{}: run.command is empty", path.display())));
        }
        Ok(m)
    }

    pub fn fill(&self, repo: &Repo, arg: &str, args: Option<&RunArgs>) -> String {
        let mut out = crate::manifest::fill_paths(repo, &self.dir, arg);
        if let Some(a) = args {
            out = out
                .replace("{users}", &a.users.to_string_lossy())
                .replace("{id}", &a.id.to_string())
                .replace("{password}", &a.password)
                .replace("{iterations}", &a.iterations.to_string())
                .replace("{warmup}", &a.warmup.to_string());
        }
        out
    }

    pub fn build_argv(&self, repo: &Repo) -> Option<Vec<String>> {
        self.build.as_ref().map(|b| b.command.iter().map(|a| self.fill(repo, a, None)).collect())
    }

    /// Runs the program once, pinned to `cpus`; `cancel` kills it.
    pub fn run_once(
        &self,
        repo: &Repo,
        args: &RunArgs,
        cpus: &[usize],
        cancel: &AtomicBool,
    ) -> Result<ProgramRun, LaunchError> {
        let argv: Vec<String> = self.run.command.iter().map(|a| self.fill(repo, a, Some(args))).collect();
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).current_dir(&repo.root);
        for (key, value) in &self.run.env {
            command.env(key, self.fill(repo, value, Some(args)));
        }
        let done = crate::child::run_pinned(command, cpus, cancel)
            .map_err(|e| LaunchError::Start(because(format!("cannot start {} ({})", self.name, argv[0]), &e)))?;
        if done.cancelled {
            return Err(LaunchError::Interrupted("interrupted".into()));
        }
        if !done.succeeded() {
            return Err(LaunchError::Failed(format!("{} failed ({})", self.name, done.failure())));
        }
        let mut run = parse_output(&done.stdout)
            .map_err(|e| LaunchError::Failed(format!("{} printed an unexpected answer: {e}", self.name)))?;
        run.wall = done.wall;
        run.cpu = done.cpu;
        run.max_rss_kib = done.max_rss_kib;
        if run.iteration_ns.len() as u64 != args.iterations {
            return Err(LaunchError::Failed(format!(
                "{} timed {} iterations, {} were asked",
                self.name,
                run.iteration_ns.len(),
                args.iterations
            )));
        }
        Ok(run)
    }
}

/// `hash <hex>` then `ns <n>` per timed iteration.
fn parse_output(text: &str) -> Result<ProgramRun, String> {
    let mut hash = None;
    let mut iteration_ns = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.split_once(' ') {
            Some(("hash", h)) => hash = Some(h.trim().to_string()),
            Some(("ns", n)) => iteration_ns.push(n.trim().parse().map_err(|e| format!("bad line '{line}': {e}"))?),
            _ => return Err(format!("bad line '{line}'")),
        }
    }
    Ok(ProgramRun {
        hash: hash.ok_or("no 'hash' line")?,
        iteration_ns,
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        max_rss_kib: 0,
    })
}

/// Every program under `processing/`, by name.
pub fn discover(repo: &Repo) -> Result<Vec<ProgramManifest>, LaunchError> {
    let dir = repo.root.join("processing");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(out) };
    for entry in entries {
        let path = entry.map_err(|e| LaunchError::Io(chain(&e)))?.path().join("processing.toml");
        if path.is_file() {
            out.push(ProgramManifest::load(&path)?);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_a_hash_and_iteration_times() {
        let run = parse_output("hash abc\nns 10\nns 20\n").unwrap();
        assert_eq!((run.hash.as_str(), run.iteration_ns), ("abc", vec![10, 20]));
        assert!(parse_output("ns 10\n").is_err());
        assert!(parse_output("hash a\nns x\n").is_err());
        assert!(parse_output("hash a\nhello\n").is_err());
    }

    #[test]
    fn a_manifest_fills_its_placeholders() {
        let text = r#"
            name = "p"
            language = "P"
            [run]
            command = ["{dir}/p", "--users", "{users}", "--id", "{id}", "--iterations", "{iterations}"]
        "#;
        let mut m: ProgramManifest = toml::from_str(text).unwrap();
        m.dir = "/d".into();
        let repo = Repo { root: "/r".into() };
        let args = RunArgs { users: "/u".into(), id: 7, password: "x".into(), iterations: 3, warmup: 0 };
        let argv: Vec<String> = m.run.command.iter().map(|a| m.fill(&repo, a, Some(&args))).collect();
        assert_eq!(argv, ["/d/p", "--users", "/u", "--id", "7", "--iterations", "3"]);
    }
}
