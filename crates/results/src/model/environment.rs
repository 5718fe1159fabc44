//! The reproducibility record: what ran, where, with what.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The reproducibility record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environment {
    pub callbench_version: String,
    pub git_commit: Option<String>,
    /// True when the working tree had uncommitted changes.
    pub git_dirty: Option<bool>,
    /// The exact command line.
    pub command_line: Vec<String>,
    pub cpu_model: String,
    /// Logical CPUs of the machine.
    pub cores: usize,
    pub kernel: String,
    /// `net.ipv4.tcp_congestion_control`, which the link's namespaces inherit (older files: empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tcp_congestion_control: String,
    /// How the load engine's io_uring posts completions on this kernel (its self-check's line),
    /// or why it cannot be used; whether a cell used it is its `io` (older files: empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub io_uring: String,
    pub os: String,
    /// CPUs the client (callbench's load engine) was pinned to.
    pub client_cpus: Vec<usize>,
    /// CPUs every server was pinned to.
    pub server_cpus: Vec<usize>,
    /// Tools and runtimes: `rustc`, `cargo`...
    pub tools: BTreeMap<String, String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
}
