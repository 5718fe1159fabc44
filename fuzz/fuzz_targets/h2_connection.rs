//! Everything an HTTP/2 server sends after the client's preface (SETTINGS, HEADERS, DATA,
//! CONTINUATION, PING, GOAWAY, RST_STREAM, WINDOW_UPDATE...), while seven calls run on the
//! connection. Byte 0: the size of the pieces the bytes arrive in (0 = whole); then the bytes,
//! repeats expanded (`fuzzing::expand`: frames and header blocks at and past their 1 MiB caps,
//! DATA filling the 4 and 16 MiB windows, floods past the 16 MiB of frames held for a server).
#![no_main]
use callbench_engine::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [step, server @ ..] = data {
        let server = fuzzing::expand(server, fuzzing::most::H2).into_owned();
        fuzzing::h2_connection(server.into(), if *step == 0 { usize::MAX } else { *step as usize });
    }
});
