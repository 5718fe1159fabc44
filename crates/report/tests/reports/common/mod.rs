//! Shared by the report tests: a realistic results.json built in code, headless Chromium, PNG
//! decoding and temporary folders.
#![allow(dead_code, unused_imports)] // each test file uses part of it

mod cells;
pub mod chromium;
mod fixture;
pub mod png;

pub use fixture::{fixture, CRASH, DISTURBED, DISTURBED_CELL, GOVERNOR_WARNING, NOT_MEASURED, SUITE_TEXT};
use std::path::PathBuf;

pub fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..")
}

/// A fresh, empty folder under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("callbench-report-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
