//! The engine end to end on the in-process echo, in real time (bounds are loose: test machines are noisy).

use callbench_engine::inproc::{InProc, Workload};
use callbench_engine::{run, Arrivals, CallRecord, Closed, Load, Open, Pacer, RateShape, RunInfo, Sink, Stats, Stop};
use std::time::Duration;

async fn drive(pacer: impl Pacer + 'static, load: Load) -> (RunInfo, Vec<CallRecord>) {
    let target = InProc::new(Workload::echo_of_size(1000)).unwrap();
    run(target, pacer, load, Vec::new).await.unwrap()
}

fn stats(stop: Stop, records: &[CallRecord]) -> Stats {
    let mut stats = Stats::new(stop, Duration::from_millis(5));
    records.iter().for_each(|r| stats.add(r));
    stats
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_loop_echo_c4_2000_calls() {
    let stop = Stop::after_calls(2000);
    let (info, records) = drive(Closed, Load::new(4, stop)).await;
    assert_eq!(records.len(), 2000);
    let mut seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    seqs.sort_unstable();
    assert!(seqs.iter().enumerate().all(|(i, &s)| s == i as u64));
    assert!(records.iter().all(|r| r.intended == r.start && r.end >= r.start));
    let summary = stats(stop, &records).summary(&info);
    assert_eq!((summary.calls.ok, summary.calls.errors), (2000, 0));
    assert!(summary.throughput_per_s > 0.0 && summary.rate.is_none());
    assert!(summary.payload_bytes_per_call.sent > 900.0 && summary.wire_bytes_per_call.sent == 0.0);
    assert!(summary.client_cpu_us_per_call > 0.0);
    assert_eq!(info.connections_opened, 0, "an in-process call opens no connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_echo_2000_per_s_for_half_a_second() {
    let stop = Stop::after(Duration::from_millis(500));
    let pacer = Open::new(RateShape::constant(2000.0).unwrap(), Arrivals::Uniform);
    let (info, records) = drive(pacer, Load::new(4, stop)).await;
    assert_eq!(records.len(), 1000);
    assert!(records.iter().all(|r| r.latency() >= r.latency_uncorrected()));
    assert!(records.iter().all(|r| r.start >= r.intended));
    let summary = stats(stop, &records).summary(&info);
    assert_eq!(summary.calls.ok, 1000);
    let rate = summary.rate.unwrap();
    let (requested, achieved) = (rate.requested, rate.achieved);
    assert!((requested - 2000.0).abs() < 1e-6, "{requested}");
    assert!((achieved / requested - 1.0).abs() < 0.10, "requested {requested}, achieved {achieved}");
    assert!(summary.latency_us.unwrap().p50 >= summary.latency_uncorrected_us.unwrap().p50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poisson_open_loop_runs_near_its_rate() {
    let stop = Stop::after(Duration::from_millis(500));
    let pacer = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Poisson { seed: 3 });
    let (info, records) = drive(pacer, Load::new(2, stop)).await;
    assert!((400..=600).contains(&records.len()), "{}", records.len());
    assert!(info.window <= Duration::from_millis(500));
}
