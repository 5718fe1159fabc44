//! The rust-tonic server's tests against its real binary: one module each for its calls, the
//! streaming records calls, limits, bad input, the standard services, the contract's vectors, TLS
//! and its process (one test binary: each links tonic's client again).

mod bad_input;
mod calls;
mod common;
mod limits;
mod process;
mod records;
mod standard;
mod tls;
mod vectors;
