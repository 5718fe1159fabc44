//! A request's header blocks, encoded then decoded by the engine: each form gives the fields back.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[derive(Debug, arbitrary::Arbitrary)]
struct Request {
    method: String,
    https: bool,
    authority: String,
    path: String,
    headers: Vec<(String, String)>,
}

fuzz_target!(|r: Request| {
    callbench_engine::fuzzing::hpack_round_trip(&r.method, r.https, &r.authority, &r.path, &r.headers);
});
