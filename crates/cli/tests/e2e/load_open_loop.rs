//! End-to-end: open-loop `callbench load` — the requested rate is kept (uniform, Poisson, steps),
//! warm-up is left out, `--slo` searches, and a server that stalls shows in the corrected latency
//! but not in the uncorrected one (the coordinated-omission correction).
//!
//! The tests of this file run one at a time: each keeps a client core busy (precise timer), and
//! two at once on a small machine would measure each other.

use crate::common;

use common::{assert_all_ok, load_json, num, start};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn within(value: f64, expected: f64, tolerance: f64) -> bool {
    (value - expected).abs() <= expected * tolerance
}

#[test]
fn a_constant_rate_is_kept() {
    let _serial = one_at_a_time();
    let actix = start("rust-actix", &[]);
    let target = format!("http://{}", actix.addr);
    let report = load_json(&["--rate", "2000", "-z", "2s", "-c", "20", "--workload", "students", &target]);
    assert_eq!(report["settings"]["model"], "open");
    assert_eq!(report["settings"]["arrivals"], "uniform");
    assert_eq!(num(&report, "/settings/rate"), 2000.0);
    assert_eq!(num(&report, "/rate/requested"), 2000.0);
    let achieved = num(&report, "/rate/achieved");
    assert!(within(achieved, 2000.0, 0.05), "achieved {achieved}/s: {report:#}");
    assert!(within(common::ok(&report) as f64, 4000.0, 0.05), "{report:#}");
    assert_eq!(common::failed(&report), 0, "{report:#}");
    assert!(report["latency_uncorrected_us"].is_object());

    let poisson =
        load_json(&["--rate", "2000", "-z", "2s", "-c", "20", "--poisson", "--workload", "students", &target]);
    assert_eq!(poisson["settings"]["arrivals"], "poisson");
    assert_eq!(num(&poisson, "/rate/requested"), 2000.0);
    let achieved = num(&poisson, "/rate/achieved");
    assert!(within(achieved, 2000.0, 0.10), "Poisson achieved {achieved}/s: {poisson:#}");
    assert_eq!(common::failed(&poisson), 0, "{poisson:#}");
}

#[test]
fn a_rate_shape_is_reported_per_segment() {
    let _serial = one_at_a_time();
    let actix = start("rust-actix", &[]);
    let report = load_json(&[
        "--rate-shape",
        "500@1s,1000@1s",
        "-c",
        "20",
        "--workload",
        "students",
        &format!("http://{}", actix.addr),
    ]);
    assert_eq!(report["settings"]["rate_shape"], "500@1s,1000@1s");
    let segments = report["segments"].as_array().expect("segments");
    assert_eq!(segments.len(), 2, "{report:#}");
    for (segment, (rate, from, to)) in segments.iter().zip([(500.0, 0.0, 1.0), (1000.0, 1.0, 2.0)]) {
        assert_eq!(num(segment, "/requested_per_s"), rate, "{segment:#}");
        assert_eq!((num(segment, "/from_s"), num(segment, "/to_s")), (from, to), "{segment:#}");
        let achieved = num(segment, "/achieved_per_s");
        assert!(within(achieved, rate, 0.10), "segment at {rate}/s achieved {achieved}/s");
        assert!(within(num(segment, "/calls_ok"), rate, 0.10), "{segment:#}");
        assert_eq!(num(segment, "/calls_errors"), 0.0);
    }
    assert!(within(common::ok(&report) as f64, 1500.0, 0.10), "{report:#}");
}

#[test]
fn warm_up_is_left_out() {
    let _serial = one_at_a_time();
    let actix = start("rust-actix", &[]);
    let target = format!("http://{}", actix.addr);
    let open =
        load_json(&["--rate", "1000", "-z", "1s", "--warmup", "500ms", "-c", "10", "--workload", "students", &target]);
    assert_eq!(num(&open, "/settings/warmup_s"), 0.5);
    assert!(within(num(&open, "/duration_s"), 1.0, 0.05), "{open:#}");
    // 1000 measured, not the 1500 made.
    assert!(within(common::ok(&open) as f64, 1000.0, 0.05), "{open:#}");
    assert!(within(num(&open, "/rate/achieved"), 1000.0, 0.05), "{open:#}");

    let closed = load_json(&["-n", "100", "-c", "4", "--warmup", "300ms", "--workload", "students", &target]);
    assert_eq!(num(&closed, "/settings/warmup_s"), 0.3);
    assert_all_ok(&closed, 100);
}

#[test]
fn an_slo_search_finds_a_rate() {
    let _serial = one_at_a_time();
    let actix = start("rust-actix", &[]);
    let report = load_json(&[
        "--slo",
        "p99<50ms",
        "-z",
        "1s",
        "-c",
        "10",
        "--workload",
        "students",
        &format!("http://{}", actix.addr),
    ]);
    let search = &report["search"];
    assert_eq!(search["objective"], "p99<50ms");
    assert!(num(search, "/closed_loop_max_per_s") > 0.0, "{report:#}");
    let best = num(search, "/best_rate");
    assert!(best > 0.0, "{report:#}");
    let trials = search["trials"].as_array().expect("trials");
    assert!(!trials.is_empty() && trials.len() <= 7, "{report:#}");
    assert!(trials.iter().any(|t| t["passed"] == true && num(t, "/rate") == best), "{report:#}");
    // The report is the best trial's run.
    assert_eq!(report["settings"]["model"], "open");
    assert_eq!(num(&report, "/settings/rate"), best);
}

/// An HTTP/1.1 server that answers `ok` to each request on a kept-alive connection, but holds
/// request number `stall_at` (1-based, over all connections) for `stall`.
struct StallingServer {
    addr: String,
    requests: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StallingServer {
    fn start(stall_at: usize, stall: Duration) -> StallingServer {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
        let addr = listener.local_addr().expect("local addr").to_string();
        let requests = Arc::new(AtomicUsize::new(0));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let counter = requests.clone();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                loop {
                    let accepted = tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => accepted,
                    };
                    let Ok((mut stream, _)) = accepted else { continue };
                    let counter = counter.clone();
                    tokio::spawn(async move {
                        let mut pending = Vec::new();
                        let mut buf = [0u8; 4096];
                        loop {
                            let n = match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            pending.extend_from_slice(&buf[..n]);
                            // Requests without a body: each ends with an empty line.
                            while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                                pending.drain(..end + 4);
                                if counter.fetch_add(1, Ordering::SeqCst) + 1 == stall_at {
                                    tokio::time::sleep(stall).await;
                                }
                                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                                if stream.write_all(reply).await.is_err() {
                                    return;
                                }
                            }
                        }
                    });
                }
            });
        });
        StallingServer { addr, requests, stop: Some(stop), thread: Some(thread) }
    }
}

impl Drop for StallingServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_stall_shows_in_the_corrected_latency_only() {
    let _serial = one_at_a_time();
    let server = StallingServer::start(200, Duration::from_millis(400));
    // One connection: the calls due during the stall wait behind it, as they would in any client
    // that does not correct for coordinated omission.
    let report = load_json(&["--rate", "500", "-z", "2s", "-c", "1", &format!("http://{}/", server.addr)]);
    assert!(server.requests.load(Ordering::SeqCst) >= 200, "the stall happened");
    assert_eq!(common::failed(&report), 0, "{report:#}");
    assert!(within(common::ok(&report) as f64, 1000.0, 0.05), "{report:#}");
    let corrected = |p: &str| num(&report, &format!("/latency_us/{p}"));
    let uncorrected = |p: &str| num(&report, &format!("/latency_uncorrected_us/{p}"));
    // The calls due during the 400 ms waited up to 400 ms: about 200 of the 1000.
    assert!(corrected("max") >= 380_000.0, "corrected max: {report:#}");
    assert!(corrected("p99") >= 250_000.0, "corrected p99: {report:#}");
    assert!(corrected("p90") >= 50_000.0, "corrected p90: {report:#}");
    // Counted from their actual start, only the stalled call itself was slow.
    assert!(uncorrected("max") >= 380_000.0, "the stalled call: {report:#}");
    assert!(uncorrected("p99") < 50_000.0, "uncorrected p99: {report:#}");
    assert!(num(&report, "/rate/late_starts") >= 100.0, "{report:#}");
}

/// With a warm-up, each segment's figures must still be its own: a segment at 200/s cannot have
/// achieved 600/s. (Whether the warm-up comes before the shape or eats its start is the engine's
/// choice; either way a segment's calls are the ones started at its rate.)
#[test]
fn segments_after_a_warm_up_hold_their_own_calls() {
    let _serial = one_at_a_time();
    let actix = start("rust-actix", &[]);
    let report = load_json(&[
        "--rate-shape",
        "200@1s,1000@1s",
        "--warmup",
        "500ms",
        "-c",
        "20",
        "--workload",
        "students",
        &format!("http://{}", actix.addr),
    ]);
    let segments = report["segments"].as_array().expect("segments");
    assert_eq!(segments.len(), 2, "{report:#}");
    let mut total = 0.0;
    for segment in segments {
        let (requested, achieved) = (num(segment, "/requested_per_s"), num(segment, "/achieved_per_s"));
        if num(segment, "/calls_ok") > 0.0 {
            assert!(within(achieved, requested, 0.10), "segment at {requested}/s achieved {achieved}/s: {report:#}");
        }
        total += num(segment, "/calls_ok");
    }
    assert_eq!(total, common::ok(&report) as f64, "every measured call is in one segment: {report:#}");
}
