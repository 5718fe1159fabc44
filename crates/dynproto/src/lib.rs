//! Calls any gRPC method (unary or streaming) without generated code.
//!
//! The load engine names a method (`package.Service/Method`) and where its
//! schema comes from ([`Source`]): `.proto` files compiled at run time, a
//! protoset file, or the server's own reflection service. [`resolve`] gives
//! back its [`MethodDescriptor`]; callbench-transcode makes its messages from JSON and reads its
//! answers. Every error is a [`DynprotoError`]: its kind, and one line of text for the CLI to
//! print.

mod editions;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod google_api;
mod h2c;
mod lookup;
mod pool;
mod protos;
mod protoset;
mod reflection;
mod reflection_budget;
mod reflection_pb;
pub mod strict;
mod wire;

use std::path::PathBuf;

pub use error::DynprotoError;
pub use h2c::connect_h2c;
pub use lookup::{find_method, grpc_path, is_server_streaming, split_method_name};
pub use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
pub use protos::load_protos;
pub use protoset::{decode_protoset, load_protoset};
pub use reflection::{reflect, ReflectionConn, ReflectionVersion};

/// Where a method's schema comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `.proto` files, compiled at run time; imports are looked up in
    /// `import_paths` (the current directory when empty), and the well-known
    /// `google/protobuf/*.proto` always resolve.
    Protos { files: Vec<PathBuf>, import_paths: Vec<PathBuf> },
    /// A serialized `google.protobuf.FileDescriptorSet` (`protoc
    /// --descriptor_set_out --include_imports`, `buf build -o x.protoset`).
    Protoset(PathBuf),
    /// The server's reflection service (v1, else v1alpha).
    Reflection,
}

/// The descriptor of `method_name` (`package.Service/Method` or
/// `package.Service.Method`).
/// `reflection` is the connection to ask when `source` is [`Source::Reflection`]
/// (ignored otherwise).
pub async fn resolve(
    source: &Source,
    method_name: &str,
    reflection: Option<ReflectionConn>,
) -> Result<MethodDescriptor, DynprotoError> {
    let pool = match source {
        Source::Protos { files, import_paths } => load_protos(files, import_paths)?,
        Source::Protoset(path) => load_protoset(path)?,
        Source::Reflection => {
            let conn = reflection
                .ok_or_else(|| DynprotoError::Connect("reflection needs a connection to the server".into()))?;
            let (service, _) = split_method_name(method_name)?;
            reflect(conn, service).await?
        }
    };
    find_method(&pool, method_name)
}
