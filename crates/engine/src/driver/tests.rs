//! The driver on tokio's paused clock: virtual time, so every expectation is exact.

use super::*;
use crate::pacer::{Arrivals, Closed, Open};
use crate::rate::RateShape;
use crate::record::{Handshake, Outcome};
use crate::target::Connected;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// Answers after `latency(n)` for call n; connects after `connect_time`, or refuses if `refuse`.
struct Fake {
    latency: fn(u64) -> Duration,
    refuse: bool,
    connect_time: Duration,
    calls: AtomicU64,
}

impl Fake {
    fn new(latency: fn(u64) -> Duration) -> Self {
        Fake { latency, refuse: false, connect_time: Duration::ZERO, calls: AtomicU64::new(0) }
    }
}

impl Target for Fake {
    type Conn = ();
    async fn connect(&self, _slot: usize) -> Result<Connected<()>, ErrorKind> {
        tokio::time::sleep(self.connect_time).await;
        if self.refuse {
            Err(ErrorKind::Connect)
        } else {
            Ok(Connected::new((), Handshake::default()))
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
    assert_eq!((info.callers_never_connected, info.callers_answered, info.callers_connected_by), (0, 2, Some(MS(0))));
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
    (fake.refuse, fake.connect_time) = (true, MS(1)); // refused after a wait: both callers try
    let (info, r) = drive(fake, Closed, Load::new(2, Stop::after_calls(4))).await;
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|r| r.outcome == Outcome::Error(ErrorKind::Connect)));
    assert_eq!(info.connections_opened, 0);
    assert_eq!((info.callers_never_connected, info.callers_answered, info.callers_connected_by), (2, 0, None));
}

#[tokio::test(start_paused = true)]
async fn a_connect_the_call_timeout_ends_is_a_timed_out_connect() {
    let mut fake = Fake::new(|_| MS(1));
    fake.connect_time = MS(50);
    let mut load = Load::new(2, Stop::after_calls(4));
    load.timeout = Some(MS(20));
    let (info, r) = drive(fake, Closed, load).await;
    assert!(r.iter().all(|r| r.outcome == Outcome::Error(ErrorKind::Timeout)));
    assert_eq!((info.connect_failures.timed_out, info.callers_never_connected), (4, 2));
}

#[tokio::test(start_paused = true)]
async fn callers_beyond_the_opening_bound_connect_once_a_place_is_free() {
    // Connects of 10 ms: MAX_OPENING callers connect by 10 ms, the rest by 20 ms.
    let mut fake = Fake::new(|_| MS(1));
    fake.connect_time = MS(10);
    let callers = MAX_OPENING + 44;
    let (info, r) = drive(fake, Closed, Load::new(callers, Stop::after_calls(callers as u64))).await;
    assert_eq!((r.len(), info.connections_opened, info.callers_answered), (callers, callers as u64, callers as u64));
    assert_eq!(info.callers_connected_by, Some(MS(20)));
    assert_eq!(r.iter().filter(|r| r.start == MS(0)).count(), callers, "the wait for a place is inside the call");
}

#[tokio::test(start_paused = true)]
async fn a_ramp_of_callers_starts_caller_i_of_n_at_i_over_n_of_it() {
    let mut load = Load::new(4, Stop::after(MS(200)));
    load.ramp = MS(100);
    let (info, r) = drive(Fake::new(|_| MS(10)), Closed, load).await;
    let mut firsts: Vec<Duration> = r.iter().filter(|r| r.connect.is_some()).map(|r| r.start).collect();
    firsts.sort();
    assert_eq!(firsts, [MS(0), MS(25), MS(50), MS(75)]);
    assert_eq!(info.callers_connected_by, Some(MS(75)));
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
    assert!(info.cancelled && info.window >= MS(100) && info.window <= info.elapsed, "{info:?}");
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
        Ok(Connected::new((), Handshake::default()))
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

#[tokio::test(start_paused = true)]
async fn a_duration_bounded_open_loop_run_ends_near_its_planned_end() {
    // 1000/s for 100 ms on one slot whose calls take 10 ms: the server delivers 100/s. Calls start
    // until the planned end plus START_GRACE (110 ms): 11 of the 100 planned (at 0, 10, ... 100 ms);
    // the other 89 are counted as not started, and the run ends when the last call in flight does.
    let pacer = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform);
    let (info, r) = drive(Fake::new(|_| MS(10)), pacer, Load::new(1, Stop::after(MS(100)))).await;
    assert_eq!(START_GRACE, MS(10));
    assert_eq!((r.len(), info.not_started), (11, 89));
    assert_eq!(info.elapsed, MS(110), "the last call started at 100 ms");
    assert_eq!((info.window, info.requested_calls), (MS(100), Some(100.0)));
    assert!(r.iter().all(|r| r.start < MS(110)));
    // Bounded by a count instead, every planned call is made, however long it takes.
    let pacer = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform);
    let (info, r) = drive(Fake::new(|_| MS(10)), pacer, Load::new(1, Stop::after_calls(30))).await;
    assert_eq!((r.len(), info.not_started, info.elapsed), (30, 0, MS(300)));
}

#[tokio::test(start_paused = true)]
async fn calls_not_started_in_the_warm_up_are_not_counted() {
    // 100 ms of warm-up then 100 ms measured at 1000/s, calls of 50 ms on one slot: 3 start
    // (at 0, 50 and 100 ms), none after 210 ms; the window's 100 planned calls minus the one that
    // started in it (intended at 2 ms: the third call's) were not started.
    let pacer = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform);
    let load = Load::new(1, Stop::after(MS(100)).with_warmup(MS(100)));
    let (info, r) = drive(Fake::new(|_| MS(50)), pacer, load).await;
    assert_eq!(r.len(), 5, "{r:?}");
    let measured = r.iter().filter(|r| r.intended >= MS(100)).count() as u64;
    assert_eq!(measured + info.not_started, 100);
}

#[tokio::test(start_paused = true)]
async fn a_counted_run_ends_with_its_last_measured_call_not_a_warm_up_call_in_flight() {
    // Two callers, 5 ms of warm-up, 3 measured calls. Call 0 (caller 0's first, in the warm-up)
    // takes 10 s; caller 1 makes 1 ms calls, 3 after the warm-up (at 5, 6 and 7 ms).
    let latency = |n| if n == 0 { Duration::from_secs(10) } else { MS(1) };
    let load = Load::new(2, Stop::after_calls(3).with_warmup(MS(5)));
    let (info, r) = drive(Fake::new(latency), Closed, load).await;
    let measured: Vec<_> = r.iter().filter(|r| r.intended >= MS(5)).collect();
    assert_eq!(measured.len(), 3, "{r:?}");
    assert_eq!(info.elapsed, Duration::from_secs(10), "the run still waits for its calls");
    assert_eq!(info.window, MS(3), "the window is the measured calls' span: {info:?}");
    // Without a warm-up call outliving them, the window is still the whole run.
    let (info, _) = drive(Fake::new(|_| MS(1)), Closed, Load::new(2, Stop::after_calls(4).with_warmup(MS(2)))).await;
    assert_eq!((info.elapsed, info.window), (MS(4), MS(2)));
}

#[tokio::test(start_paused = true)]
async fn a_closed_loop_duration_run_is_unchanged() {
    let (info, r) = drive(Fake::new(|_| MS(10)), Closed, Load::new(2, Stop::after(MS(100)))).await;
    assert_eq!((r.len(), info.not_started, info.elapsed), (20, 0, MS(100)));
}

/// Answers `unprocessed` (connection dropped) to the attempts `refused` picks, counting over all
/// attempts; with `stale`, a connection goes stale after one call.
struct Flaky {
    refused: fn(u64) -> bool,
    stale: bool,
    attempts: AtomicU64,
}

impl Flaky {
    fn new(refused: fn(u64) -> bool) -> Self {
        Flaky { refused, stale: false, attempts: AtomicU64::new(0) }
    }
}

impl Target for Flaky {
    /// Calls made on the connection.
    type Conn = u64;
    async fn connect(&self, _slot: usize) -> Result<Connected<u64>, ErrorKind> {
        tokio::time::sleep(MS(1)).await;
        Ok(Connected::new(0, Handshake::default()))
    }
    async fn call(&self, conn: &mut u64) -> Reply {
        *conn += 1;
        let n = self.attempts.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(MS(2)).await;
        if (self.refused)(n) {
            Reply::unprocessed(ByteCounts::default(), false)
        } else {
            Reply::ok(ByteCounts::default())
        }
    }
    fn reusable(&self, conn: &mut u64) -> bool {
        !self.stale || *conn == 0
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_the_server_did_not_process_is_sent_again_from_its_first_intended_start() {
    // 100/s on one slot; the first attempt of call 1 (intended at 10 ms) is refused: sent again on
    // a new connection, one record, its latency from 10 ms (2 ms refused, 1 ms connect, 2 ms call).
    let pacer = Open::new(RateShape::constant(100.0).unwrap(), Arrivals::Uniform);
    let (info, r) = run(Flaky::new(|n| n == 1), pacer, Load::new(1, Stop::after_calls(3)), Vec::new).await.unwrap();
    let mut r = r;
    r.sort_by_key(|r| r.seq);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|r| r.outcome.is_ok()), "{r:?}");
    assert_eq!((r[1].intended, r[1].latency()), (MS(10), MS(5)));
    assert_eq!(r[1].connect.map(|c| c.total), Some(MS(1)));
    assert_eq!((info.retries, info.connections_opened), (1, 2));
}

#[tokio::test(start_paused = true)]
async fn retries_are_bounded() {
    // Never processed: each call is sent 1 + MAX_RETRIES times, then recorded as an io error.
    let (info, r) = run(Flaky::new(|_| true), Closed, Load::new(1, Stop::after_calls(2)), Vec::new).await.unwrap();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|r| r.outcome == Outcome::Error(ErrorKind::Io)), "{r:?}");
    assert_eq!(info.retries, 2 * u64::from(MAX_RETRIES));
    assert_eq!(info.connections_opened, 2 * (1 + u64::from(MAX_RETRIES)));
}

#[tokio::test(start_paused = true)]
async fn a_connection_closed_since_the_last_call_is_replaced_before_calling() {
    let mut flaky = Flaky::new(|_| false);
    flaky.stale = true;
    let (info, r) = run(flaky, Closed, Load::new(1, Stop::after_calls(4)), Vec::new).await.unwrap();
    assert!(r.iter().all(|r| r.outcome.is_ok() && r.connect.is_some()), "{r:?}");
    assert_eq!((info.connections_opened, info.retries), (4, 0), "nothing was sent again");
}

/// Never waits: each call holds the thread 10 ms, as an in-process workload does; the wire counts
/// its calls.
struct Busy(AtomicU64);

impl Target for Busy {
    type Conn = ();
    async fn connect(&self, _slot: usize) -> Result<Connected<()>, ErrorKind> {
        Ok(Connected::new((), Handshake::default()))
    }
    async fn call(&self, _: &mut ()) -> Reply {
        std::thread::sleep(MS(10));
        self.0.fetch_add(1, Ordering::Relaxed);
        Reply::ok(ByteCounts::default())
    }
    fn wire(&self) -> WireTotals {
        WireTotals { sent: 100 * self.0.load(Ordering::Relaxed), received: 0 }
    }
}

#[tokio::test]
async fn a_target_that_never_waits_has_its_window_read_at_its_first_measured_call() {
    // Real time: the calls block the runtime's one thread, so the task that reads the window's
    // counters when the warm-up ends cannot run until the run is over. The first measured call
    // reads them instead: the window holds the 10 measured calls' bytes, however many warm-up
    // calls came first (it held none before).
    let load = Load::new(1, Stop::after_calls(10).with_warmup(MS(25)));
    let (info, _) = run(Busy(AtomicU64::new(0)), Closed, load, Vec::new).await.unwrap();
    assert_eq!(info.wire.sent, 1000, "{:?}", info.wire);
}
