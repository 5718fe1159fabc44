//! End-to-end: the forms of `callbench load`'s report — text, JSON (checked against
//! schemas/load.schema.json in every load_* test), CSV and the HDR distribution — `--out` and `-q`.

use crate::common;

use common::{load, num, start, TempDir};

/// The corrected max latency (µs) of the text summary's `Latency` line: `max 626 µs`, `max 1.23 ms`, `max 2.50 s`.
fn text_max_us(text: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with("Latency")).unwrap_or_else(|| panic!("no Latency line:\n{text}"));
    let after = line.split("  max ").nth(1).unwrap_or_else(|| panic!("no max in {line:?}"));
    let mut words = after.split_whitespace();
    let value: f64 = words.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad max in {line:?}"));
    match words.next() {
        Some("µs") => value,
        Some("ms") => value * 1e3,
        Some("s") => value * 1e6,
        other => panic!("unit {other:?} in {line:?}"),
    }
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= a.max(b) * tolerance
}

#[test]
fn text_is_the_default() {
    let actix = start("rust-actix", &[]);
    let run = load(&["-n", "50", "-c", "2", "--workload", "students", &format!("http://{}", actix.addr)]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    for label in [
        "Target",
        "Load",
        "Calls        50 ok, 0 failed",
        "Latency",
        "Connections  2 opened",
        "Bytes/call",
        "Client CPU",
    ] {
        assert!(run.stdout.contains(label), "no {label:?} in:\n{}", run.all());
    }
}

#[test]
fn csv_is_a_header_and_one_row() {
    let actix = start("rust-actix", &[]);
    let tonic = start("rust-tonic", &[]);
    let http = format!("http://{}", actix.addr);
    let grpc = format!("grpc://{}", tonic.addr);
    for (args, calls_ok, protocol, model) in [
        (vec!["-n", "50", "-c", "2", "--workload", "students", &http], Some(50), "http/1.1", "closed"),
        (vec!["-n", "60", "--workload", "auth", &grpc], Some(60), "grpc", "closed"),
        (vec!["-n", "70", "inproc:life"], Some(70), "inproc", "closed"),
        (vec!["--rate", "500", "-z", "500ms", "--workload", "students", &http], None, "http/1.1", "open"),
    ] {
        let run = load(&[&["-o", "csv"], &args[..]].concat());
        assert_eq!(run.code, Some(0), "{}", run.all());
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "a header and one row:\n{}", run.all());
        let header: Vec<&str> = lines[0].split(',').collect();
        let row: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(header.len(), row.len(), "{}", run.all());
        let field =
            |name: &str| row[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"))];
        match calls_ok {
            Some(n) => assert_eq!(field("calls_ok"), n.to_string()),
            None => {
                let ok: f64 = field("calls_ok").parse().unwrap();
                assert!(close(ok, 250.0, 0.05), "{}", run.all());
                assert_eq!(field("rate_requested"), "500.000");
            }
        }
        assert_eq!(field("calls_errors"), "0");
        assert_eq!(field("protocol"), protocol);
        assert_eq!(field("model"), model);
        assert_eq!(field("interrupted"), "false");
        assert!(field("latency_max_us").parse::<u64>().is_ok(), "{}", run.all());
    }
}

#[test]
fn hdr_is_the_percentile_distribution_and_agrees_with_the_summary() {
    let actix = start("rust-actix", &[]);
    let dir = TempDir::new("hdr");
    let target = format!("http://{}", actix.addr);
    let hdr_file = dir.str("latency.hdr");
    let run = load(&["-n", "500", "-c", "4", "-o", "hdr", "--out", &hdr_file, "--workload", "students", &target]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let hdr = std::fs::read_to_string(&hdr_file).expect("the hdr file");
    let mut lines = hdr.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.contains("Value") && header.contains("Percentile") && header.contains("TotalCount"), "{hdr}");
    let rows: Vec<Vec<f64>> = lines
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap_or_else(|_| panic!("bad line {l:?}"))).collect())
        .collect();
    assert!(rows.len() > 10, "{hdr}");
    assert!(rows.windows(2).all(|w| w[0][0] <= w[1][0] && w[0][1] <= w[1][1]), "values and percentiles ascend:\n{hdr}");
    let last = rows.last().unwrap();
    assert_eq!((last[1], last[2]), (1.0, 500.0), "the last line is the 100th percentile of all 500 calls:\n{hdr}");
    assert!(hdr.contains("#[Mean    =") && hdr.contains("#[Buckets ="), "{hdr}");
    let max_line = hdr.lines().find(|l| l.starts_with("#[Max")).unwrap_or_else(|| panic!("no #[Max footer:\n{hdr}"));
    assert!(max_line.contains("Total count    =          500"), "{max_line}");
    let hdr_max_ms: f64 = max_line.split('=').nth(1).and_then(|v| v.split(',').next()).unwrap().trim().parse().unwrap();
    assert!(close(hdr_max_ms * 1e3, text_max_us(&run.stdout), 0.01), "hdr max {hdr_max_ms} ms vs\n{}", run.stdout);
    assert!(close(last[0] * 1e3, hdr_max_ms * 1e3, 0.01), "the last value is the max:\n{hdr}");

    // The JSON of a run and its text summary agree the same way.
    let json_file = dir.str("report.json");
    let run = load(&["-n", "500", "-c", "4", "-o", "json", "--out", &json_file, "--workload", "students", &target]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    common::validate(&report);
    let json_max = num(&report, "/latency_us/max");
    assert!(close(json_max, text_max_us(&run.stdout), 0.01), "JSON max {json_max} µs vs\n{}", run.stdout);

    // Nothing measured: the distribution says so.
    let run = load(&["-n", "5", "-o", "hdr", "inproc:noop"]);
    assert!(run.stdout.contains("#[Max") || run.stdout.contains("#[No values"), "{}", run.all());
}

#[test]
fn out_writes_the_file_and_prints_the_summary() {
    let tonic = start("rust-tonic", &[]);
    let dir = TempDir::new("out");
    let file = dir.str("report.json");
    let run =
        load(&["-n", "100", "-o", "json", "--out", &file, "--workload", "students", &format!("grpc://{}", tonic.addr)]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.contains("Latency") && run.stdout.contains("Calls        100 ok"), "{}", run.all());
    assert!(!run.stdout.contains('{'), "the JSON went to the file only:\n{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    common::validate(&report);
    common::assert_all_ok(&report, 100);
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "only the report, no partial file: {left:?}");

    // -q: nothing on stdout when writing to --out, nothing on stderr at all.
    let file = dir.str("quiet.csv");
    let run = load(&[
        "-q",
        "-n",
        "100",
        "-o",
        "csv",
        "--out",
        &file,
        "--workload",
        "students",
        &format!("grpc://{}", tonic.addr),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.is_empty() && run.stderr.is_empty(), "{}", run.all());
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
}

#[test]
fn a_failed_run_leaves_the_previous_result_in_out() {
    let dir = TempDir::new("out-kept");
    let file = dir.str("result.json");
    std::fs::write(&file, "the previous result\n").unwrap();
    // Port 9 (discard) is closed on loopback: the run fails before any call.
    let run = common::load_fails(&["-n", "5", "--out", &file, "http://127.0.0.1:9/"], "connect");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the previous result\n", "{}", run.all());
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "no partial file left: {left:?}");
}

#[test]
fn a_users_file_beside_out_survives_every_run() {
    let dir = TempDir::new("out-beside");
    let (file, theirs) = (dir.str("keep.json"), dir.path("keep.json.partial"));
    std::fs::write(&theirs, "the user's own\n").unwrap();
    let run = common::load_fails(&["-n", "5", "--out", &file, "http://127.0.0.1:9/"], "connect");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's own\n", "{}", run.all());
    let run = load(&["-q", "-n", "5", "-o", "json", "--out", &file, "inproc:noop"]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    common::validate(&serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap());
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's own\n", "{}", run.all());
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 2, "the report and the user's file, no temporary file: {left:?}");
}

#[test]
fn quiet_prints_nothing_on_stderr() {
    let actix = start("rust-actix", &[]);
    for args in [
        vec![
            "-q".to_string(),
            "-n".into(),
            "100".into(),
            "--workload".into(),
            "students".into(),
            format!("http://{}", actix.addr),
        ],
        vec![
            "-q".into(),
            "--rate".into(),
            "200".into(),
            "-z".into(),
            "500ms".into(),
            format!("http://{}/students", actix.addr),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = load(&args);
        assert_eq!(run.code, Some(0), "{}", run.all());
        assert!(run.stderr.is_empty(), "{}", run.all());
        assert!(run.stdout.contains("Latency"), "the summary is still printed without --out:\n{}", run.all());
    }
    // A run where every call fails is an error, -q or not: one line, exit 1, and the summary still printed.
    for quiet in [true, false] {
        let target = format!("http://{}/no/such/route", actix.addr);
        let run = load(&[&["-n", "20", &target][..], if quiet { &["-q"] } else { &[] }].concat());
        assert_eq!(run.code, Some(1), "{}", run.all());
        assert_eq!(
            run.stderr.trim(),
            "callbench: error: no call succeeded: every call failed: 20 (http_404 ×20)",
            "{}",
            run.all()
        );
        assert!(run.stdout.contains("Latency"), "{}", run.all());
    }
}

#[test]
fn every_call_failing_is_still_a_valid_report() {
    let tonic = start("rust-tonic", &[]);
    let run =
        load(&["-o", "json", "-n", "20", "--workload", "auth", "--user-id", "0", &format!("grpc://{}", tonic.addr)]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(run.stderr.contains("no call succeeded: every call failed: 20 (grpc_"), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()));
    common::validate(&report);
    assert_eq!(common::ok(&report), 0);
    assert_eq!(common::failed(&report), 20);
    assert_eq!(num(&report, "/throughput_per_s"), 0.0, "throughput counts successful calls: {report:#}");
}
