//! A chunked body (after the head). Byte 0: the size of the pieces it arrives in (0 = whole);
//! then the body's bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [step, body @ ..] = data {
        callbench_engine::fuzzing::chunked(body, if *step == 0 { usize::MAX } else { *step as usize });
    }
});
