//! The callbench contract, compiled once: protobuf types and tonic services
//! (`pb`), the descriptor set (for server reflection and dynamic JSON), the
//! REST mapping and its NDJSON streams, conversions to the workload types, and the shared test vectors.

pub mod convert;
pub mod grpc_status;
pub mod ndjson;
pub mod rest_json;
pub mod vectors;

use prost_reflect::DescriptorPool;
use std::sync::OnceLock;

#[allow(clippy::all)]
pub mod pb {
    tonic::include_proto!("callbench.v1");
}

/// The encoded `FileDescriptorSet` of every file in `contract/proto/`.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/callbench_descriptor.bin"));

/// The contract's descriptors, decoded once.
pub fn descriptor_pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("the built-in descriptor set decodes"))
}

/// The services of the contract, as `package.Service`.
pub fn service_names() -> Vec<String> {
    descriptor_pool().services().map(|s| s.full_name().to_string()).collect()
}
