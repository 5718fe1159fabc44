//! The driver on tokio's paused clock: virtual time, so every expectation is exact.

use super::*;
use crate::pacer::{Arrivals, Closed, Open};
use crate::rate::RateShape;
use crate::record::Outcome;
use crate::target::Connected;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// Answers after `latency(n)` for call n; refuses to connect if `refuse`.
struct Fake {
    latency: fn(u64) -> Duration,
    refuse: bool,
    calls: AtomicU64,
}

impl Fake {
    fn new(latency: fn(u64) -> Duration) -> Self {
        Fake { latency, refuse: false, calls: AtomicU64::new(0) }
    }
}

impl Target for Fake {
    type Conn = ();
    async fn connect(&self, _slot: usize) -> Result<Connected<()>, ErrorKind> {
        if self.refuse {
            Err(ErrorKind::Connect)
        } else {
            Ok(Connected::new(()))
        }
    }
    async fn call(&self, _: &mut ()) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep((self.latency)(n)).await;
        Reply::ok(ByteCounts { sent: 1, received: 2 })
    }
}

async fn drive(target: Fake, pacer: impl Pacer + 'static, load: Load) -> (RunInfo, Vec<CallRecord>) {
    let (info, mut records) = run(target, pacer, load, Vec::new).await.unwrap();
    records.sort_by_key(|r| r.seq);
    (info, records)
}

#[tokio::test(start_paused = true)]
async fn closed_loop_keeps_c_calls_in_flight() {
    let (info, records) = drive(Fake::new(|_| MS(10)), Closed, Load::new(2, Stop::after_calls(10))).await;
    assert_eq!(records.len(), 10);
    assert_eq!(info.elapsed, MS(50));
    assert_eq!(info.connections_opened, 2);
    assert_eq!(info.requested_calls, None);
    assert!(records.iter().all(|r| r.intended == r.start && r.latency() == MS(10)));
    assert_eq!(records.iter().filter(|r| r.connect.is_some()).count(), 2);
}

#[tokio::test(start_paused = true)]
async fn open_loop_counts_a_stall_from_the_intended_start() {
    // 100/s, one slot; call 0 stalls 35 ms, so calls 1..3 (intended at 10, 20, 30 ms) start late.
    let pacer = Open::new(RateShape::constant(100.0).unwrap(), Arrivals::Uniform);
    let latency = |n| if n == 0 { MS(35) } else { MS(1) };
    let (info, r) = drive(Fake::new(latency), pacer, Load::new(1, Stop::after_calls(6))).await;
    assert_eq!(r.len(), 6);
    assert_eq!((r[1].intended, r[1].start, r[1].end), (MS(10), MS(35), MS(36)));
    assert_eq!((r[1].latency(), r[1].latency_uncorrected()), (MS(26), MS(1)));
    assert_eq!((r[3].latency(), r[3].start_delay()), (MS(8), MS(7)));
    assert_eq!((r[4].start, r[4].latency()), (MS(40), MS(1)));
    assert!(r.iter().all(|r| r.latency() >= r.latency_uncorrected()));
    assert_eq!(info.elapsed, MS(51));
}

#[tokio::test(start_paused = true)]
async fn open_loop_with_warmup_and_duration() {
    let pacer = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform);
    let load = Load::new(4, Stop::after(MS(200)).with_warmup(MS(100)));
    let (info, r) = drive(Fake::new(|_| MS(2)), pacer, load).await;
    assert_eq!(r.len(), 300);
    assert_eq!(r.iter().filter(|r| r.intended >= MS(100)).count(), 200);
    assert_eq!(info.window, MS(200));
    assert_eq!(info.requested_calls, Some(200.0));
    assert_eq!(r.last().unwrap().intended, MS(299));
}

#[tokio::test(start_paused = true)]
async fn a_finite_schedule_bounds_the_run() {
    let pacer = Open::new(RateShape::steps(&[(MS(100), 100.0), (MS(100), 200.0)]).unwrap(), Arrivals::Uniform);
    let (_, r) = drive(Fake::new(|_| MS(1)), pacer, Load::new(2, Stop::default())).await;
    assert_eq!(r.len(), 30);
}

#[tokio::test(start_paused = true)]
async fn unbounded_or_empty_loads_are_refused() {
    let fake = || Fake::new(|_| MS(1));
    assert!(run(fake(), Closed, Load::new(1, Stop::default()), Vec::new).await.is_err());
    let open = Open::new(RateShape::constant(10.0).unwrap(), Arrivals::Uniform);
    assert!(run(fake(), open, Load::new(1, Stop::default()), Vec::new).await.is_err());
    assert!(run(fake(), Closed, Load::new(0, Stop::after_calls(1)), Vec::new).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn timeouts_are_records_and_drop_the_connection() {
    let mut load = Load::new(1, Stop::after_calls(3));
    load.timeout = Some(MS(20));
    let (info, r) = drive(Fake::new(|_| MS(50)), Closed, load).await;
    assert!(r.iter().all(|r| r.outcome == Outcome::Error(ErrorKind::Timeout) && r.latency() == MS(20)));
    assert_eq!(info.connections_opened, 3);
}

#[tokio::test(start_paused = true)]
async fn refused_connections_are_connect_errors() {
    let mut fake = Fake::new(|_| MS(1));
    fake.refuse = true;
    let (info, r) = drive(fake, Closed, Load::new(2, Stop::after_calls(4))).await;
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|r| r.outcome == Outcome::Error(ErrorKind::Connect)));
    assert_eq!(info.connections_opened, 0);
}

#[tokio::test(start_paused = true)]
async fn new_connection_per_call() {
    let mut load = Load::new(2, Stop::after_calls(6));
    load.new_connection_per_call = true;
    let (info, r) = drive(Fake::new(|_| MS(1)), Closed, load).await;
    assert_eq!(info.connections_opened, 6);
    assert!(r.iter().all(|r| r.connect.is_some()));
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_new_calls() {
    let load = Load::new(1, Stop::after(Duration::from_secs(3600)));
    let cancel = load.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(MS(100)).await;
        cancel.store(true, Ordering::Relaxed);
    });
    let (info, r) = drive(Fake::new(|_| MS(10)), Closed, load).await;
    assert!((10..=11).contains(&r.len()), "{}", r.len());
    assert!(info.elapsed <= MS(110));
}

#[tokio::test(start_paused = true)]
async fn a_ramp_starts_calls_on_the_integral_of_its_rate() {
    // 0 → 200/s over 1 s: Λ(t) = 100 t², so call n is intended at √(n/100) s; 100 calls in all.
    let shape = RateShape::segments(vec![crate::rate::Segment { duration: MS(1000), from: 0.0, to: 200.0 }]).unwrap();
    let pacer = Open::new(shape, Arrivals::Uniform);
    let (info, r) = drive(Fake::new(|_| MS(1)), pacer, Load::new(4, Stop::default())).await;
    assert_eq!(r.len(), 100);
    for (n, call) in r.iter().enumerate() {
        let expected = (n as f64 / 100.0).sqrt();
        assert!((call.intended.as_secs_f64() - expected).abs() < 1e-6, "call {n}: {:?}", call.intended);
        assert!(call.start_delay() < MS(1), "a free slot starts on time (to the timer's 1 ms tick)");
    }
    assert_eq!(info.requested_calls, Some(100.0));
}

/// Counts 100 bytes out and 300 in per call, like a wire.
struct Wired(AtomicU64);

impl Target for Wired {
    type Conn = ();
    async fn connect(&self, _slot: usize) -> Result<Connected<()>, ErrorKind> {
        Ok(Connected::new(()))
    }
    async fn call(&self, _: &mut ()) -> Reply {
        tokio::time::sleep(MS(10)).await;
        self.0.fetch_add(1, Ordering::Relaxed);
        Reply::ok(ByteCounts::default())
    }
    fn wire(&self) -> WireTotals {
        let calls = self.0.load(Ordering::Relaxed);
        WireTotals { sent: 100 * calls, received: 300 * calls }
    }
}

#[tokio::test(start_paused = true)]
async fn wire_bytes_are_counted_after_the_warmup_only() {
    // One slot, 10 ms calls: 11 calls start in the 105 ms warm-up, 20 after it. The wire is read when
    // the warm-up ends, so the bytes of the warm-up call still in flight then count too (≤ one call).
    let load = Load::new(1, Stop::after(MS(200)).with_warmup(MS(105)));
    let (info, records) = run(Wired(AtomicU64::new(0)), Closed, load, Vec::new).await.unwrap();
    assert_eq!(records.len(), 31);
    assert!([2_000, 2_100].contains(&info.wire.sent), "{:?}", info.wire);
    assert_eq!(info.wire.received, 3 * info.wire.sent);
    assert_eq!(info.window, MS(200));
}
