//! A chunked body (after the head). Byte 0: the size of the pieces it arrives in (0 = whole);
//! then the body's bytes, repeats expanded (`fuzzing::expand`: a chunk of megabytes, a trailer
//! section past its cap).
#![no_main]
use callbench_engine::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [step, body @ ..] = data {
        fuzzing::chunked(
            &fuzzing::expand(body, fuzzing::most::CHUNKED),
            if *step == 0 { usize::MAX } else { *step as usize },
        );
    }
});
