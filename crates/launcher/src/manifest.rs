//! `servers/<name>/server.toml`: how to build and start a reference server.
//! The harness finds servers by listing `servers/`; see servers/_template/.

use crate::error::{because, chain, LaunchError};
use crate::repo::Repo;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Rest,
    Grpc,
    /// Bytes back, no protocol: the floor (servers/raw-echo).
    Raw,
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protocol::Rest => "rest",
            Protocol::Grpc => "grpc",
            Protocol::Raw => "raw",
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub language: String,
    pub framework: String,
    pub protocol: Protocol,
    #[serde(default)]
    pub description: String,
    /// What a reader of this server's figures should know; every report that measures it shows it.
    #[serde(default)]
    pub note: String,
    /// false for a server this machine cannot run; `unsupported_reason` says why.
    #[serde(default = "yes")]
    pub supported: bool,
    #[serde(default)]
    pub unsupported_reason: String,
    #[serde(default)]
    pub build: Option<Command>,
    pub start: Command,
    #[serde(default)]
    pub versions: Versions,
    /// Bad-input vectors this server's framework answers otherwise and cannot be made to follow
    /// (`[[deviation]]`): verify reports them as declared deviations, not failures.
    #[serde(default, rename = "deviation")]
    pub deviations: Vec<Deviation>,
    /// How the server serves TLS (`[tls] args = ["--tls"]`, added to its start command); absent:
    /// it cannot, and its TLS cells say so.
    #[serde(default)]
    pub tls: Option<TlsSupport>,
    /// The folder that holds server.toml (set after loading).
    #[serde(skip)]
    pub dir: PathBuf,
    /// Where it starts (None: the repository's root): a user's server starts in its suite's folder.
    #[serde(skip)]
    pub cwd: Option<PathBuf>,
    /// A user's server that answers its suite's calls only (not callbench's contract): it is not
    /// verified with the contract's vectors, and is ready when it accepts a connection.
    #[serde(skip)]
    pub calls_only: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// The vector's name (`grpc-auth-content-type-json`).
    pub vector: String,
    /// Why the server cannot answer it as the contract says.
    pub reason: String,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// argv; `{port}`, `{workers}`, `{mode}`, `{users}`, `{host}`, `{root}`, `{target}`, `{dir}` are filled in.
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSupport {
    /// Arguments that make the server serve TLS (a fresh self-signed certificate, TLS 1.2 and 1.3,
    /// ALPN as its framework does it) instead of plaintext.
    pub args: Vec<String>,
    /// Whether these arguments also make it serve HTTP/3 (QUIC) on UDP at the same port (`+h3` cells).
    #[serde(default)]
    pub http3: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Versions {
    /// A command that prints the language runtime's version.
    #[serde(default)]
    pub runtime: Vec<String>,
    /// Packages whose versions are read from the workspace's Cargo.lock.
    #[serde(default)]
    pub cargo_lock: Vec<String>,
    /// `name -> command` printing that package's version (first line of its output); for the
    /// frameworks and libraries of servers not written in Rust. `{dir}`, `{target}`, `{root}` are filled in.
    #[serde(default)]
    pub packages: BTreeMap<String, Vec<String>>,
}

/// Values for the placeholders of a manifest command.
#[derive(Debug, Clone)]
pub struct Placeholders {
    pub host: String,
    pub port: u16,
    pub workers: usize,
    pub mode: String,
    pub users: PathBuf,
}

impl Manifest {
    pub fn load(path: &std::path::Path) -> Result<Manifest, LaunchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LaunchError::BadManifest(because(format!("cannot read {}", path.display()), &e)))?;
        let mut manifest: Manifest = toml::from_str(&text).map_err(|e| {
            LaunchError::BadManifest(because(format!("{} is not a valid manifest", path.display()), &e))
        })?;
        manifest.dir = path.parent().unwrap_or(std::path::Path::new(".")).to_path_buf();
        if manifest.start.command.is_empty() {
            return Err(LaunchError::BadManifest(format!("{}: start.command is empty", path.display())));
        }
        Ok(manifest)
    }

    /// The argv to start this server, placeholders filled in.
    pub fn start_argv(&self, repo: &Repo, values: &Placeholders) -> Vec<String> {
        self.start.command.iter().map(|arg| self.fill(repo, arg, Some(values))).collect()
    }

    /// The arguments that make it serve TLS, or why it cannot.
    pub fn tls_args(&self) -> Result<&[String], LaunchError> {
        match &self.tls {
            Some(t) => Ok(&t.args),
            None => {
                Err(LaunchError::NotOffered(format!("{} cannot serve TLS (its server.toml has no [tls])", self.name)))
            }
        }
    }

    /// Whether its TLS start also serves HTTP/3, or why not.
    pub fn http3(&self) -> Result<(), LaunchError> {
        match &self.tls {
            Some(t) if t.http3 => Ok(()),
            _ => Err(LaunchError::NotOffered(format!(
                "{} does not serve HTTP/3 (its server.toml's [tls] has no `http3 = true`)",
                self.name
            ))),
        }
    }

    pub fn build_argv(&self, repo: &Repo) -> Option<Vec<String>> {
        self.build.as_ref().map(|b| b.command.iter().map(|arg| self.fill(repo, arg, None)).collect())
    }

    pub fn fill(&self, repo: &Repo, arg: &str, values: Option<&Placeholders>) -> String {
        let mut out = fill_paths(repo, &self.dir, arg);
        if let Some(v) = values {
            out = out
                .replace("{host}", &v.host)
                .replace("{port}", &v.port.to_string())
                .replace("{workers}", &v.workers.to_string())
                .replace("{mode}", &v.mode)
                .replace("{users}", &v.users.to_string_lossy());
        }
        out
    }
}

/// `{root}`, `{target}` and `{dir}` of any manifest (servers, processing programs).
pub fn fill_paths(repo: &Repo, dir: &std::path::Path, arg: &str) -> String {
    arg.replace("{root}", &repo.root.to_string_lossy())
        .replace("{target}", &repo.target_dir().to_string_lossy())
        .replace("{dir}", &dir.to_string_lossy())
}

/// Every server under `servers/` (folders starting with `_` are templates), by name.
pub fn discover(repo: &Repo) -> Result<Vec<Manifest>, LaunchError> {
    let dir = repo.servers_dir();
    let mut manifests = Vec::new();
    if !repo.is_checkout() {
        return Ok(manifests); // an installed callbench: no reference servers
    }
    let entries =
        std::fs::read_dir(&dir).map_err(|e| LaunchError::Io(because(format!("cannot list {}", dir.display()), &e)))?;
    for entry in entries {
        let path = entry.map_err(|e| LaunchError::Io(chain(&e)))?.path();
        let hidden = path.file_name().and_then(|n| n.to_str()).is_none_or(|n| n.starts_with('_') || n.starts_with('.'));
        if !hidden && path.join("server.toml").is_file() {
            manifests.push(Manifest::load(&path.join("server.toml"))?);
        }
    }
    manifests.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(manifests)
}

/// The server called `name`, or an error listing the known ones.
pub fn find(repo: &Repo, name: &str) -> Result<Manifest, LaunchError> {
    let all = discover(repo)?;
    let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
    match all.iter().find(|m| m.name == name) {
        Some(m) => Ok(m.clone()),
        None => Err(LaunchError::NoSuchServer(format!("no server named '{name}' (known: {})", names.join(", ")))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_manifest_and_fills_placeholders() {
        let text = r#"
            name = "x"
            language = "rust"
            framework = "f"
            protocol = "grpc"
            [start]
            command = ["{target}/release/x", "--port", "{port}", "--users", "{users}"]
        "#;
        let m: Manifest = toml::from_str(text).unwrap();
        let repo = Repo { root: "/r".into() };
        let values = Placeholders {
            host: "127.0.0.1".into(),
            port: 9,
            workers: 1,
            mode: "preloaded".into(),
            users: "/u.json".into(),
        };
        let argv = m.start_argv(&repo, &values);
        assert!(argv[0].ends_with("/release/x"));
        assert_eq!(&argv[1..], ["--port", "9", "--users", "/u.json"]);
        assert!(m.supported);
    }

    #[test]
    fn rejects_unknown_keys() {
        let text = "name='x'\nlanguage='l'\nframework='f'\nprotocol='rest'\nspeed='fast'\n[start]\ncommand=['x']";
        assert!(toml::from_str::<Manifest>(text).is_err());
    }

    #[test]
    fn finds_the_repo_servers() {
        let repo = Repo {
            root: std::path::Path::new(
                &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
            )
            .join("../.."),
        };
        let names: Vec<String> = discover(&repo).unwrap().into_iter().map(|m| m.name).collect();
        for name in ["rust-actix", "rust-axum", "rust-tonic"] {
            assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
        }
        let unknown = find(&repo, "nope").unwrap_err();
        assert!(matches!(&unknown, LaunchError::NoSuchServer(m) if m.contains("rust-actix")), "{unknown:?}");
    }
}
