//! HTTP/1.1 answers as a server sends them: heads, Content-Length, chunked and until-close
//! bodies, gzip, pipelined answers. Byte 0: bit 0 = the request was HEAD, bit 1 = bodies are
//! kept for a check; byte 1: the size of the pieces the bytes arrive in (0 = whole); then the
//! server's bytes, repeats expanded (`fuzzing::expand`: kept bodies at and past their 16 MiB cap).
#![no_main]
use callbench_engine::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [flags, step, server @ ..] = data {
        let step = if *step == 0 { usize::MAX } else { *step as usize };
        fuzzing::http1_answers(&fuzzing::expand(server, fuzzing::most::KEPT), step, flags & 1 != 0, flags & 2 != 0);
    }
});
