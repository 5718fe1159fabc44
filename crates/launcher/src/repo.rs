//! Where the callbench checkout is: servers, contract, build output.

use crate::error::LaunchError;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Repo {
    pub root: PathBuf,
}

impl Repo {
    /// `$CALLBENCH_ROOT`, else the nearest ancestor of the working directory or
    /// of the callbench executable that holds `servers/` and `contract/proto/callbench/`.
    pub fn locate() -> Result<Repo, LaunchError> {
        if let Some(root) = std::env::var_os("CALLBENCH_ROOT") {
            let root = PathBuf::from(root);
            if is_root(&root) {
                return Ok(Repo { root });
            }
            return Err(LaunchError::NoCheckout(format!(
                "CALLBENCH_ROOT={} is not a callbench checkout (no servers/ and contract/proto/callbench/)",
                root.display()
            )));
        }
        let starts = [std::env::current_dir().ok(), std::env::current_exe().ok()];
        for start in starts.into_iter().flatten() {
            if let Some(root) = start.ancestors().find(|dir| is_root(dir)) {
                return Ok(Repo { root: root.to_path_buf() });
            }
        }
        Err(LaunchError::NoCheckout(
            "cannot find the callbench checkout (its servers/ and suites/): run inside a clone of it or set CALLBENCH_ROOT"
                .into(),
        ))
    }

    /// The checkout, or outside one (a `callbench` installed with `cargo install`) a folder of
    /// callbench's own for what it writes: `$CALLBENCH_HOME`, else `$XDG_DATA_HOME/callbench`, else
    /// `~/.local/share/callbench`. It has no servers, suites or processing programs.
    pub fn locate_or_standalone() -> Result<Repo, LaunchError> {
        if std::env::var_os("CALLBENCH_ROOT").is_some() {
            return Repo::locate();
        }
        if let Ok(repo) = Repo::locate() {
            return Ok(repo);
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let root = var("CALLBENCH_HOME")
            .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("callbench")))
            .or_else(|| var("HOME").map(|h| h.join(".local/share/callbench")))
            .ok_or_else(|| {
                LaunchError::NoCheckout(
                    "no checkout and no HOME: set CALLBENCH_HOME to a folder callbench may write".into(),
                )
            })?;
        std::fs::create_dir_all(&root)
            .map_err(|e| LaunchError::Io(format!("cannot create {}: {e}", root.display())))?;
        Ok(Repo { root })
    }

    /// True inside a callbench checkout; false for the standalone folder of an installed `callbench`.
    pub fn is_checkout(&self) -> bool {
        is_root(&self.root)
    }

    pub fn servers_dir(&self) -> PathBuf {
        self.root.join("servers")
    }

    /// Cargo's target directory (honours `$CARGO_TARGET_DIR`).
    pub fn target_dir(&self) -> PathBuf {
        match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => self.root.join(dir),
            None => self.root.join("target"),
        }
    }

    /// The users file every server reads, written on first use (same bytes every time).
    pub fn users_file(&self) -> Result<PathBuf, LaunchError> {
        let path = self.target_dir().join("callbench").join("users.json");
        callbench_workloads::users::write_users_json(&path)
            .map_err(|e| LaunchError::Io(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}

fn is_root(dir: &Path) -> bool {
    dir.join("servers").is_dir() && dir.join("contract/proto/callbench").is_dir()
}
