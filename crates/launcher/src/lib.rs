//! The servers and programs callbench measures: finds the checkout and what `servers/` and
//! `processing/` hold (their manifests and versions), builds them, and starts and stops their
//! processes, never leaving one behind.

pub mod child;
pub mod cpu_limit;
pub mod error;
pub mod manifest;
pub mod process;
pub mod program;
pub mod repo;
pub mod versions;

pub use error::LaunchError;
