//! The seed workloads as pure functions, shared by every Rust server, the
//! in-process path of the load engine and (later) the Python bindings.
//!
//! The types here are the REST JSON shapes of the contract in `contract/proto/`;
//! `callbench-contract` converts them to and from the protobuf messages.

pub mod auth;
pub mod cars;
pub mod echo;
pub mod error;
pub mod life;
pub mod limits;
pub mod records;
pub mod students;
pub mod users;

pub use error::{ErrorKind, WorkloadError};
