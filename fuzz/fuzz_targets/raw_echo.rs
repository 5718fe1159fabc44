//! What an echo server sends back to the raw target's calls (`raw://`), read as a run reads it.
//! Bytes 0-1: the calls' message size less one (big-endian); byte 2: the size of the pieces the
//! bytes arrive in (0 = whole); then the server's bytes, repeats expanded (`fuzzing::expand`).
#![no_main]
use callbench_engine::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [high, low, step, server @ ..] = data {
        let size = usize::from(u16::from_be_bytes([*high, *low])) + 1;
        let step = if *step == 0 { usize::MAX } else { *step as usize };
        fuzzing::raw_echo(&fuzzing::expand(server, fuzzing::most::RAW), step, size);
    }
});
