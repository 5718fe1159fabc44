//! Compiles the contract in contract/proto once, in pure Rust (protox: no protoc needed),
//! into prost types, tonic services and a descriptor set for reflection and JSON.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not baked in when it compiles: a target directory shared by two
    // clones reuses the compiled script, and must not read the other clone's files.
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../contract/proto");
    let names = ["auth", "students", "cars", "life", "echo", "records"];
    let files: Vec<PathBuf> = names.iter().map(|name| root.join(format!("callbench/v1/{name}.proto"))).collect();
    // Relative to the package, as cargo reads them: an absolute path names this clone, so a target
    // directory kept across clones (.ci/run) would see "another" file and run the script again.
    for name in names {
        println!("cargo:rerun-if-changed=../../contract/proto/callbench/v1/{name}.proto");
    }
    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("callbench_descriptor.bin"), prost::Message::encode_to_vec(&fds))?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
