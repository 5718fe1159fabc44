//! Compiles the contract in /proto once, in pure Rust (protox: no protoc needed),
//! into prost types, tonic services and a descriptor set for reflection and JSON.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not baked in when it compiles: a target directory shared by two
    // clones reuses the compiled script, and must not read the other clone's files.
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files: Vec<PathBuf> = ["auth", "students", "cars", "life", "echo", "records"]
        .iter()
        .map(|name| root.join(format!("callbench/v1/{name}.proto")))
        .collect();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("callbench_descriptor.bin"), prost::Message::encode_to_vec(&fds))?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
