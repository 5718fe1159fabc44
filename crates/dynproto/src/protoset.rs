//! Protoset files: a serialized `google.protobuf.FileDescriptorSet`, as
//! `protoc --descriptor_set_out` and `buf build -o` write them.

use crate::pool::build_pool;
use crate::DynprotoError;
use prost_reflect::DescriptorPool;
use std::path::Path;

/// Reads and decodes a protoset file.
pub fn load_protoset(path: &Path) -> Result<DescriptorPool, DynprotoError> {
    let bytes = std::fs::read(path)
        .map_err(|e| DynprotoError::Descriptors(format!("cannot read protoset {}: {e}", path.display())))?;
    decode_protoset(&bytes, &format!("protoset {}", path.display()))
}

/// Decodes protoset bytes; `origin` names them in error messages.
pub fn decode_protoset(bytes: &[u8], origin: &str) -> Result<DescriptorPool, DynprotoError> {
    decode(bytes, origin).map_err(DynprotoError::Descriptors)
}

fn decode(bytes: &[u8], origin: &str) -> Result<DescriptorPool, String> {
    use crate::editions::descriptors::{decode_file, decode_set};
    let encoded = decode_set(bytes)
        .map_err(|e| format!("{origin} is not a FileDescriptorSet (truncated or not a protoset?): {e}"))?;
    let files = encoded
        .iter()
        .map(|file| decode_file(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{origin}: {e}"))?;
    if files.is_empty() {
        return Err(format!("{origin} holds no file descriptors"));
    }
    build_pool(files, origin).map_err(|e| match e.ends_with("which is missing") {
        true => format!("{e} (build the protoset with --include_imports)"),
        false => e,
    })
}
