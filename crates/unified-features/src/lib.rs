//! No code: this crate's Cargo.toml names the dependency features every build of the workspace
//! resolves, so the release build, the test build and maturin's build of the Python package compile
//! each crate once (see the comment there and scripts/check-features).
