//! The fixture: five experiments (sequential, closed loop, rate, connections and payload-size
//! sweeps) over rust-actix, rust-axum, rust-tonic and in-process, with a crashed cell, a cell that
//! was not measured, a noisy cell, seed references with and without a cell, and the comparisons.

use super::cells::{cell, runs, CellSpec, Profile, REPETITIONS};
use callbench_results::analysis;
use callbench_results::model::*;
use std::collections::BTreeMap;

pub struct Server {
    pub name: &'static str,
    pub transport: &'static str,
    /// Sequential p50 on `auth`, µs.
    pub p50: f64,
    pub client_cpu: f64,
    pub server_cpu: Option<f64>,
    pub wire: (f64, f64),
}

pub const ACTIX: Server = Server {
    name: "rust-actix",
    transport: "rest-h1",
    p50: 45.0,
    client_cpu: 14.0,
    server_cpu: Some(18.0),
    wire: (182.0, 171.0),
};
pub const AXUM: Server = Server {
    name: "rust-axum",
    transport: "rest-h1",
    p50: 45.1,
    client_cpu: 14.2,
    server_cpu: Some(17.5),
    wire: (182.0, 160.0),
};
pub const TONIC: Server = Server {
    name: "rust-tonic",
    transport: "grpc",
    p50: 78.0,
    client_cpu: 22.0,
    server_cpu: Some(26.0),
    wire: (118.0, 96.0),
};
pub const INPROC: Server =
    Server { name: "inproc", transport: "inproc", p50: 0.9, client_cpu: 0.9, server_cpu: None, wire: (0.0, 0.0) };

fn ok_cell(
    experiment: &str,
    s: &Server,
    workload: &str,
    sweep: Option<(&str, f64)>,
    p: Profile,
    spread: f64,
    seed: u64,
) -> Cell {
    cell(CellSpec {
        experiment,
        server: s.name,
        transport: s.transport,
        workload,
        sweep,
        runs: runs(p, REPETITIONS, spread, seed),
        status: CellStatus::Ok,
        error: None,
    })
}

/// `s` with its latency multiplied by `latency` (queueing, bigger work) and its CPU by `work`.
fn profile(s: &Server, latency: f64, work: f64) -> Profile {
    Profile::new(s.p50 * latency, s.client_cpu * work, s.server_cpu.map(|c| c * work), s.wire)
}

pub const CRASH: &str = "server exited with signal 11 (SIGSEGV) during repetition 3 of 5; last output:\nthread 'tokio-runtime-worker' panicked at src/main.rs:88: <index out of bounds>";
pub const NOT_MEASURED: &str = "verify failed: 3 of 118 vectors (rest-auth-bad-json: expected 400, got 500)";

fn sequential(cells: &mut Vec<Cell>) {
    let mut seed = 1;
    for workload in ["auth", "students"] {
        let scale = if workload == "auth" { 1.0 } else { 2.4 };
        for s in [&ACTIX, &AXUM, &TONIC, &INPROC] {
            seed += 1;
            // rust-axum on students is the noisy cell: its repetitions scatter by ±35%.
            let spread = if s.name == "rust-axum" && workload == "students" { 0.35 } else { 0.025 };
            cells.push(ok_cell("sequential", s, workload, None, profile(s, scale, scale), spread, seed));
        }
    }
}

fn closed_loop(cells: &mut Vec<Cell>) {
    for (i, s) in [&ACTIX, &TONIC, &INPROC].into_iter().enumerate() {
        let mut p = profile(s, 2.4 * 22.0, 2.4);
        p.concurrency = 50.0;
        cells.push(ok_cell("closed-50", s, "students", None, p, 0.02, 100 + i as u64));
    }
    let mut crashed = profile(&AXUM, 2.4 * 22.0, 2.4);
    crashed.concurrency = 50.0;
    cells.push(cell(CellSpec {
        experiment: "closed-50",
        server: AXUM.name,
        transport: AXUM.transport,
        workload: "students",
        sweep: None,
        runs: runs(crashed, 2, 0.02, 110),
        status: CellStatus::ServerCrashed,
        error: Some(CRASH),
    }));
    cells.push(cell(CellSpec {
        experiment: "closed-50",
        server: "go-gin",
        transport: "rest-h1",
        workload: "students",
        sweep: None,
        runs: vec![],
        status: CellStatus::NotMeasured,
        error: Some(NOT_MEASURED),
    }));
}

pub const RATES: [f64; 5] = [2000.0, 5000.0, 10000.0, 15000.0, 19000.0];

fn rate_sweep(cells: &mut Vec<Cell>) {
    for (i, s) in [&ACTIX, &TONIC].into_iter().enumerate() {
        let capacity = 1e6 / (s.server_cpu.unwrap() * 2.4);
        for (j, rate) in RATES.into_iter().enumerate() {
            let load = (rate / capacity).min(0.97);
            let mut p = profile(s, 2.4 * (1.0 + 0.5 * load / (1.0 - load)), 2.4);
            p.rate = Some(rate);
            p.concurrency = 64.0;
            cells.push(ok_cell("rate-sweep", s, "students", Some(("rate", rate)), p, 0.03, 200 + (i * 10 + j) as u64));
        }
    }
}

pub const CONNECTIONS: [f64; 5] = [1.0, 2.0, 5.0, 10.0, 50.0];

fn connections_sweep(cells: &mut Vec<Cell>) {
    for (i, s) in [&ACTIX, &TONIC].into_iter().enumerate() {
        for (j, connections) in CONNECTIONS.into_iter().enumerate() {
            // Few connections leave the server cores idle; more fill them.
            let mut p = profile(s, 2.4 * 22.0 * (1.0 + 1.5 / connections), 2.4);
            p.concurrency = 50.0;
            let sweep = Some(("connections", connections));
            cells.push(ok_cell("connections", s, "students", sweep, p, 0.02, 300 + (i * 10 + j) as u64));
        }
    }
}

pub const PAYLOADS: [f64; 5] = [10.0, 100.0, 1000.0, 10000.0, 100000.0];

fn payload_sweep(cells: &mut Vec<Cell>) {
    for (i, s) in [&ACTIX, &TONIC, &INPROC].into_iter().enumerate() {
        for (j, size) in PAYLOADS.into_iter().enumerate() {
            let mut p = profile(s, 1.0 + size / 4000.0, 1.0 + size / 4000.0);
            p.wire_sent = s.wire.0 + size * 1.01;
            p.wire_received = s.wire.1 + size * 1.01;
            let sweep = Some(("payload_size", size));
            cells.push(ok_cell("payload", s, "echo", sweep, p, 0.02, 400 + (i * 10 + j) as u64));
        }
    }
}

fn experiment(id: &str, title: &str, headline: &str, sweep: Option<&str>, references: Vec<Reference>) -> Experiment {
    Experiment {
        id: id.into(),
        title: title.into(),
        description: format!("{title}, over loopback, client and server pinned to one core each."),
        seeds: vec!["000".into(), "002".into()],
        sweep: sweep.map(String::from),
        headline: headline.into(),
        references,
        answer: None,
        skipped: None,
        cpus: None,
    }
}

fn reference(seed: &str, what: &str, article: &str, cell: Option<&str>, metric: Option<&str>) -> Reference {
    Reference {
        seed: seed.into(),
        what: what.into(),
        article: article.into(),
        cell: cell.map(String::from),
        metric: metric.map(String::from),
        note: "the article called Cloud Run over TLS; here loopback, no TLS".into(),
    }
}

fn server(name: &str, language: &str, framework: &str, protocol: &str, verify: Option<VerifyRecord>) -> ServerRecord {
    ServerRecord {
        name: name.into(),
        language: language.into(),
        framework: framework.into(),
        protocol: protocol.into(),
        versions: BTreeMap::from([
            ("rustc".to_string(), "1.95.0".to_string()),
            (framework.to_string(), "0.8.4".to_string()),
        ]),
        verify,
        failures: vec![],
        note: String::new(),
        endpoint: None,
    }
}

pub const SUITE_TEXT: &str =
    "name = \"fixture\"\nrepetitions = 5\n\n[[experiment]]\nid = \"sequential\"\nheadline = \"latency_p50_us\"\n";

/// The fixture.
pub fn fixture() -> Results {
    let mut cells = vec![];
    sequential(&mut cells);
    closed_loop(&mut cells);
    rate_sweep(&mut cells);
    connections_sweep(&mut cells);
    payload_sweep(&mut cells);
    let verified = || Some(VerifyRecord { passed: 118, failed: 0, failures: vec![], deviations: vec![] });
    let mut gin = server(
        "go-gin",
        "go",
        "gin",
        "rest",
        Some(VerifyRecord {
            passed: 115,
            failed: 3,
            failures: vec!["rest-auth-bad-json: expected 400, got 500".into()],
            deviations: vec![],
        }),
    );
    gin.failures.push("failed verify: not measured".into());
    let mut r = Results {
        schema: SCHEMA.into(),
        complete: true,
        interrupted: false,
        suite: SuiteRecord {
            name: "fixture".into(),
            description: "REST vs gRPC vs in-process calls, the fixture of the report tests.".into(),
            file: "suites/fixture.toml".into(),
            text: SUITE_TEXT.into(),
            repetitions: REPETITIONS,
            interval_floor: 0.0,
        },
        environment: Environment {
            callbench_version: "0.1.0".into(),
            git_commit: Some("3f2a9c1d0b7e4f5a6c8d9e0f1a2b3c4d5e6f7a8b".into()),
            git_dirty: Some(false),
            command_line: vec!["callbench".into(), "run".into(), "--suite".into(), "suites/fixture.toml".into()],
            cpu_model: "AMD EPYC 7B13".into(),
            cores: 2,
            kernel: "6.1.0-27-amd64".into(),
            tcp_congestion_control: "cubic".into(),
            io_uring: String::new(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            client_cpus: vec![0],
            server_cpus: vec![1],
            tools: BTreeMap::from([("rustc".to_string(), "rustc 1.95.0".to_string())]),
            started_at: "2026-11-22T07:00:00Z".into(),
            finished_at: Some("2026-11-22T07:02:31Z".into()),
        },
        servers: vec![
            server("rust-actix", "rust", "actix-web", "rest", verified()),
            server("rust-axum", "rust", "axum", "rest", verified()),
            server("rust-tonic", "rust", "tonic", "grpc", verified()),
            server("inproc", "rust", "callbench-workloads", "inproc", None),
            gin,
        ],
        experiments: vec![
            experiment(
                "sequential",
                "Sequential latency: one call at a time",
                "latency_p50_us",
                None,
                vec![
                    reference(
                        "000",
                        "auth over REST (actix-web), response time",
                        "182 ms",
                        Some("sequential/auth/rust-actix"),
                        Some("latency_p50_us"),
                    ),
                    // Relative to its experiment, as suites write them.
                    reference(
                        "000",
                        "auth over gRPC (tonic), response time",
                        "102 ms",
                        Some("auth/rust-tonic"),
                        Some("latency_p50_us"),
                    ),
                    reference("001", "Node.js REST vs gRPC, 1000 calls", "1.4 s vs 0.9 s", None, None),
                ],
            ),
            experiment(
                "closed-50",
                "Throughput with 50 calls in flight",
                "throughput_per_s",
                None,
                vec![
                    reference(
                        "002",
                        "students, gRPC (grpc-dotnet) with ghz, 50 concurrent",
                        "~45k rps",
                        Some("students/rust-tonic"),
                        Some("throughput_per_s"),
                    ),
                    reference(
                        "002",
                        "students, REST (gin) with ab",
                        "~20k rps",
                        Some("closed-50/students/go-gin"),
                        Some("throughput_per_s"),
                    ),
                ],
            ),
            experiment("rate-sweep", "Latency vs offered load", "latency_p99_us", Some("rate"), vec![]),
            experiment(
                "connections",
                "1 to 50 connections for 50 calls in flight",
                "throughput_per_s",
                Some("connections"),
                vec![],
            ),
            experiment("payload", "Echo payload size", "latency_p50_us", Some("payload_size"), vec![]),
        ],
        cells,
        comparisons: vec![],
        steadiness: None,
        seeds: vec![],
    };
    machine(&mut r);
    let ids: Vec<String> = r.experiments.iter().map(|e| e.id.clone()).collect();
    for id in ids {
        let comparisons = analysis::compare_experiment(&r, &id);
        r.comparisons.extend(comparisons);
    }
    r
}

pub const DISTURBED_CELL: &str = "sequential/auth/rust-tonic";
pub const DISTURBED: &str = "1 of 5 repetitions disturbed: 36% of the server CPUs used by other processes";
pub const GOVERNOR_WARNING: &str = "the cpufreq governor of CPU 1 is powersave, not performance";

/// What the steadiness probe and the interference readings of a run record: a quiet machine, one
/// warning, and one cell whose re-runs were disturbed too.
fn machine(r: &mut Results) {
    r.steadiness = Some(Steadiness {
        warnings: vec![GOVERNOR_WARNING.into()],
        cpus: vec![
            CpuSteadiness { cpu: 0, loop_ns: 812_400.0, spread: 0.031, busy_other: 0.002, governor: None },
            CpuSteadiness {
                cpu: 1,
                loop_ns: 809_900.0,
                spread: 0.024,
                busy_other: 0.0,
                governor: Some("powersave".into()),
            },
        ],
        loop_spread: 0.031,
        wakeup: Some(Wakeup { from: 0, to: 1, across_p50_us: 21.4, across_p90_us: 27.9, within_p50_us: 11.2 }),
        idle: Some(IdleHold { held: true, driver: Some("haltpoll".into()), why_not: None }),
    });
    for (i, run) in r.cells.iter_mut().flat_map(|c| c.runs.iter_mut()).enumerate() {
        run.interference = Some(Interference {
            client_cpus_other: 0.001 * (i % 3) as f64,
            server_cpus_other: 0.002 * (i % 2) as f64,
            steal: 0.0,
            cpu_mhz: Some(2450.0),
            server_voluntary_switches_per_call: run.server_cpu_us_per_call.map(|_| 1.0),
            server_involuntary_switches_per_call: run.server_cpu_us_per_call.map(|_| 0.01),
        });
        run.cpus_round_trip_ns = run.server_cpu_us_per_call.map(|_| [60.0, 61.0]);
    }
    let cell = r.cells.iter_mut().find(|c| c.id == DISTURBED_CELL).unwrap();
    cell.disturbed = Some(DISTURBED.into());
    cell.reruns = 2;
    let run = &mut cell.runs[2];
    run.disturbed = Some("36% of the server CPUs used by other processes".into());
    run.interference.as_mut().unwrap().server_cpus_other = 0.36;
}
