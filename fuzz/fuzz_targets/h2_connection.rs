//! Everything an HTTP/2 server sends after the client's preface (SETTINGS, HEADERS, DATA,
//! CONTINUATION, PING, GOAWAY, RST_STREAM, WINDOW_UPDATE...), while three calls run on the
//! connection. Byte 0: the size of the pieces the bytes arrive in (0 = whole); then the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [step, server @ ..] = data {
        callbench_engine::fuzzing::h2_connection(server, if *step == 0 { usize::MAX } else { *step as usize });
    }
});
