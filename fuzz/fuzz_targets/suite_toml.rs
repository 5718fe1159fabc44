//! A suite file as `callbench run` reads it: parsed and checked, an error or a suite, never a
//! panic; a suite that parses also plans its cells and their load specs without one.
#![no_main]
use callbench_runner::plan::Protocol;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(suite) = callbench_runner::suite::Suite::parse(text) else { return };
    let addr = "127.0.0.1:9".parse().ok();
    for e in &suite.experiments {
        for cell in callbench_runner::plan::cells(&suite, e).unwrap_or_default().iter().take(64) {
            for protocol in [Protocol::Rest, Protocol::Grpc, Protocol::Raw] {
                let _ = cell.load_spec(addr, protocol, Some(100.0));
            }
            let _ = cell.params(None);
        }
    }
});
