//! dynproto's tests: .proto files, protosets and server reflection against real servers and
//! misbehaving peers (one test binary: each links the reflection client again).

mod common;
mod protos;
mod protoset;
mod reflection;
