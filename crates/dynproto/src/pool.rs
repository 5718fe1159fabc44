//! A descriptor pool from loose file descriptors (a protoset, or what a
//! reflection server sent), completing the well-known types when missing:
//! protosets built without `--include_imports` and servers that do not serve
//! `google/protobuf/*.proto` are common.

use callbench_primitives::error_text::one_line;
use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::DescriptorPool;
use std::collections::{BTreeMap, HashSet};
use std::panic::AssertUnwindSafe;

/// Builds a pool from `files` (any order). `origin` names where they came from
/// in error messages ("protoset x.protoset", "reflection").
pub(crate) fn build_pool(files: Vec<FileDescriptorProto>, origin: &str) -> Result<DescriptorPool, String> {
    // Names in the messages come from the input, control characters and all.
    build(files, origin).map_err(|e| one_line(&e))
}

fn build(files: Vec<FileDescriptorProto>, origin: &str) -> Result<DescriptorPool, String> {
    let mut by_name: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
    for mut file in files {
        check_syntax(&mut file).map_err(|e| format!("{origin}: {e}"))?;
        by_name.entry(file.name().to_string()).or_insert(file);
    }
    if let Some((name, missing)) = complete(&mut by_name) {
        return Err(format!("{origin}: {name} imports {missing}, which is missing"));
    }
    // prost-reflect 0.16 validates descriptors, but some malformed ones reach an
    // indexing panic before the error (found by garbling protosets): the input
    // may come from any server, so a panic becomes an error here too.
    let built = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut pool = DescriptorPool::new();
        pool.add_file_descriptor_protos(by_name.into_values()).map(|()| pool)
    }));
    match built {
        Ok(Ok(pool)) => Ok(pool),
        Ok(Err(e)) => Err(format!("{origin}: invalid descriptors: {e:?}")),
        Err(_) => Err(format!("{origin}: invalid descriptors (rejected by prost-reflect)")),
    }
}

/// prost-reflect panics on a syntax it does not know (an indexing bug in its
/// error path), so check it first. An empty syntax is proto2, as protoc means it.
fn check_syntax(file: &mut FileDescriptorProto) -> Result<(), String> {
    match file.syntax.as_deref() {
        None | Some("proto2" | "proto3") => Ok(()),
        Some("") => {
            file.syntax = None;
            Ok(())
        }
        Some(other) => Err(format!("{} has syntax {other:?}: only proto2 and proto3 are supported", file.name())),
    }
}

/// Adds missing well-known files from prost-reflect's own copies; returns the
/// first (importer, import) pair that cannot be found at all.
fn complete(files: &mut BTreeMap<String, FileDescriptorProto>) -> Option<(String, String)> {
    let mut missing = missing_imports(files);
    while let Some((importer, import)) = missing.pop() {
        if files.contains_key(&import) {
            continue;
        }
        let Some(known) = well_known(&import) else {
            return Some((importer, import));
        };
        for dependency in &known.dependency {
            missing.push((import.clone(), dependency.clone()));
        }
        files.insert(import, known);
    }
    None
}

fn missing_imports(files: &BTreeMap<String, FileDescriptorProto>) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    let mut missing = Vec::new();
    for (name, file) in files {
        for dependency in &file.dependency {
            if !files.contains_key(dependency) && seen.insert(dependency.clone()) {
                missing.push((name.clone(), dependency.clone()));
            }
        }
    }
    missing.reverse(); // popped in file order, so the error names the first one
    missing
}

/// Whether prost-reflect carries its own copy of this file.
pub(crate) fn is_well_known(name: &str) -> bool {
    name.starts_with("google/protobuf/") && DescriptorPool::global().get_file_by_name(name).is_some()
}

/// A `google/protobuf/*.proto` file, as compiled into prost-reflect.
fn well_known(name: &str) -> Option<FileDescriptorProto> {
    if !name.starts_with("google/protobuf/") {
        return None;
    }
    DescriptorPool::global().get_file_by_name(name).map(|f| f.file_descriptor_proto().clone())
}
