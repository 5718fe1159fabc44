//! NDJSON answers of a REST streaming method (`application/x-ndjson`, a line of JSON per message),
//! as `load --workload records-download` checks them (crates/load/src/preset.rs): the body as it
//! came. A body is accepted only as as many whole lines of JSON as the stream has messages, and a
//! check that accepted the reference answer before (it then takes a byte-equal one at once)
//! judges every other body as a fresh one does.
#![no_main]
use callbench_load::preset::{preset, Preset, PresetOptions};
use libfuzzer_sys::fuzz_target;
use prost_reflect::MethodDescriptor;
use std::sync::OnceLock;

const RECORDS: u32 = 3;

type Check = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

fn download() -> &'static (Preset, MethodDescriptor) {
    static DOWNLOAD: OnceLock<(Preset, MethodDescriptor)> = OnceLock::new();
    DOWNLOAD.get_or_init(|| {
        let download = preset("records-download", &PresetOptions { records: RECORDS, ..PresetOptions::default() });
        let download = download.expect("the records-download preset");
        let method = download.contract_method();
        (download, method)
    })
}

fn fresh() -> Check {
    let (download, method) = download();
    download.http_check(method).expect("a check of the contract's method")
}

/// A check that accepted the reference answer (the records as the workload makes them).
fn primed() -> &'static Check {
    static PRIMED: OnceLock<Check> = OnceLock::new();
    PRIMED.get_or_init(|| {
        let mut reference = Vec::new();
        for i in 0..RECORDS as usize {
            serde_json::to_writer(&mut reference, &callbench_workloads::records::downloaded(i)).unwrap();
            reference.push(b'\n');
        }
        let check = fresh();
        assert!(check(&reference), "the reference answer is accepted");
        check
    })
}

fuzz_target!(|body: &[u8]| {
    let accepted = fresh()(body);
    assert_eq!(primed()(body), accepted, "a check that accepted the reference answer judges alike");
    if accepted {
        assert!(body.ends_with(b"\n"), "accepted without its last newline");
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), RECORDS as usize, "accepted with another count of lines");
        assert!(lines.iter().all(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok()), "a line not JSON");
    }
});
