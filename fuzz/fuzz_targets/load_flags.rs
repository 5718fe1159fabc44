//! `callbench load`'s flags: the arguments (split at NUL bytes) parsed as the CLI parses them.
//! A spec that parses and validates is written back as flags and must parse to itself; each
//! argument also goes through every small parser of its own (durations, rates, shapes, targets...).
#![no_main]
use callbench_load::parse;
use callbench_load::spec::LoadSpec;
use libfuzzer_sys::fuzz_target;

#[derive(clap::Parser)]
struct Flags {
    #[command(flatten)]
    spec: LoadSpec,
}

fn parse_flags(args: impl IntoIterator<Item = String>) -> Result<LoadSpec, clap::Error> {
    <Flags as clap::Parser>::try_parse_from(std::iter::once("load".to_string()).chain(args)).map(|f| f.spec)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let args: Vec<String> = text.split('\0').map(String::from).collect();
    for arg in &args {
        let _ = parse::duration(arg);
        let _ = parse::rate(arg);
        let _ = parse::rate_shape(arg);
        let _ = parse::objective(arg);
        let _ = parse::header(arg);
        let _ = parse::target(arg);
    }
    let Ok(spec) = parse_flags(args) else { return };
    if spec.validate().is_err() {
        return;
    }
    let _ = (spec.split(50, "-c"), spec.stop(), spec.arrivals(), spec.planned_length(), spec.timeout());
    let flags = spec.to_flags();
    let back = parse_flags(flags.clone()).unwrap_or_else(|e| panic!("{flags:?} do not parse back: {e}"));
    assert_eq!(format!("{back:?}"), format!("{spec:?}"), "written as {flags:?}");
});
