//! Records the PyO3 version locked in the workspace's Cargo.lock, for the results' versions.
fn main() {
    // At run time (a shared target directory reuses the compiled script for another clone).
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts");
    let lock = std::path::Path::new(&dir).join("../Cargo.lock");
    // Relative to the package: an absolute path would name this clone (see crates/contract/build.rs).
    println!("cargo:rerun-if-changed=../Cargo.lock");
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let version = text
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"pyo3\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CALLBENCH_PYO3_VERSION={version}");
}
