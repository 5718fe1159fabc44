//! A call's messages as JSON, for a method found by callbench-dynproto: [`encode_request`] turns
//! grpcurl-style JSON into the protobuf bytes to send, [`decode_response`] and [`to_json`] read an
//! answer, and [`rest_twin`] is the REST call a method's `google.api.http` rule maps a request to.
//!
//! With `--template` or `--data-lines` these run for every call (each call's text is made into its
//! request), so this crate is compiled at full optimisation while callbench-dynproto, which only
//! finds the method before the calls, is not (Cargo.toml's profiles).

mod error;
mod http_rule;
mod json;

pub use error::TranscodeError;
pub use http_rule::{rest_twin, RestCall};
pub use json::{decode_response, encode_request, to_json};
