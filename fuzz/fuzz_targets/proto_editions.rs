//! `.proto` files written with `edition = "2023";`, as `--proto` lowers them to proto2 or proto3
//! before protox compiles them: an error with its place or a text with the same lines, never a
//! panic.
#![no_main]
use callbench_dynproto::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let _ = fuzzing::edition_file(source);
});
