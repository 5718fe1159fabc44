//! HPACK header blocks a server sends on one connection, each as [length byte, block].
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| callbench_engine::fuzzing::hpack_decode(data));
