//! The one driver loop, for every load model: closed or open loop, steps, ramps, warm-up and limits
//! are data (a pacer, a stop, a concurrency), never another loop.

mod shards;

use crate::clock::Clock;
use crate::guard::Deadlines;
use crate::net::failures::ConnectFailures;
use crate::pacer::{Next, Pacer};
use crate::record::{ByteCounts, CallRecord, Connect, ErrorKind, StreamCounts};
use crate::sink::Sink;
use crate::stop::{Admission, Stop};
use crate::target::{QuicCounts, Reply, Target, WireTotals};
use crate::EngineError;
use shards::Shards;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How hard and how long to drive a target; the pacer says when.
#[derive(Debug, Clone)]
pub struct Load {
    /// Calls in flight at most (`-c`); each slot holds one connection (or a handle on a shared one).
    pub concurrency: usize,
    pub stop: Stop,
    /// A call (connect included) taking longer is abandoned and recorded as `Timeout`.
    pub timeout: Option<Duration>,
    /// Open a new connection for every call (what ab does without -k).
    pub new_connection_per_call: bool,
    /// Set it to end the run early (Ctrl-C): calls in flight finish, no new call starts.
    pub cancel: Arc<AtomicBool>,
    /// Calls finished so far (warm-up included), for progress displays.
    pub progress: Arc<AtomicU64>,
    /// Start open-loop calls within microseconds of their intended time, at the cost of a busy
    /// client thread (see [`Clock::start_precise`]); otherwise up to about 1 ms late.
    pub precise_timer: bool,
    /// The callers start over this span (caller i of N at i/N of it) instead of all at once: their
    /// first connections are spread over it too.
    pub ramp: Duration,
    /// Called where the client's own counters are read: at the run's start, where the measured
    /// window starts (end of warm-up) and at the end, so outside counters (a server's CPU time)
    /// cover exactly the same span.
    pub edges: Option<EdgeHook>,
}

/// Where [`Load::edges`] is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    RunStart,
    WindowStart,
    End,
}

/// A callback at each [`Edge`] of a run.
#[derive(Clone)]
pub struct EdgeHook(pub Arc<dyn Fn(Edge) + Send + Sync>);

impl std::fmt::Debug for EdgeHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EdgeHook")
    }
}

impl Load {
    pub fn new(concurrency: usize, stop: Stop) -> Self {
        Load {
            concurrency,
            stop,
            timeout: None,
            new_connection_per_call: false,
            cancel: Arc::default(),
            progress: Arc::default(),
            precise_timer: false,
            ramp: Duration::ZERO,
            edges: None,
        }
    }
}

/// What the run itself knew, beside the records.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// From the run's start to the end of its last call.
    pub elapsed: Duration,
    /// The measured window: from the end of warm-up to the deadline (or the end, if sooner; for a
    /// cancelled run, when its workers saw the cancel, not when its calls in flight ended).
    pub window: Duration,
    /// Calls the pacer intended in the window (None in closed loop).
    pub requested_calls: Option<f64>,
    /// Connections opened during the whole run (warm-up included).
    pub connections_opened: u64,
    /// Callers that tried to connect and never had a connection in the whole run.
    pub callers_never_connected: u64,
    /// Callers that had at least one call answered successfully (warm-up included).
    pub callers_answered: u64,
    /// From the run's start until the last caller that got a connection had its first.
    pub callers_connected_by: Option<Duration>,
    /// Why connections failed to open during the whole run (the driver's call timeout included,
    /// when it ended a connect).
    pub connect_failures: ConnectFailures,
    /// Connections the server ended gracefully (HTTP/2 GOAWAY) during the whole run.
    pub goaways: u64,
    /// Calls sent again because the server had not processed them (after a GOAWAY, or refused):
    /// each is recorded once, its latency from its first intended start.
    pub retries: u64,
    /// Open loop with a planned end: calls the schedule intended in the measured window that
    /// could not start by then (see [`START_GRACE`]). They are not made, so no record holds them.
    pub not_started: u64,
    /// Bytes on the wire from the end of warm-up to the end of the run.
    pub wire: WireTotals,
    /// QUIC targets: their loss recovery's counts over the same window.
    pub quic: Option<QuicCounts>,
    /// This process's CPU time from the end of warm-up to the end of the run.
    pub client_cpu: Duration,
    /// Whether the run was cancelled before its end.
    pub cancelled: bool,
    /// What the server said of the first call that failed with words ([`Target::first_failure`]).
    pub first_failure: Option<String>,
}

/// How long after its planned end (`-z`, or the end of a rate shape) an open-loop run still starts
/// the calls it intended before that end. A client this far behind did not keep the rate: the calls
/// it has not started by then are counted as not started rather than made, so the run ends near its
/// planned end instead of lasting as long as the server needs to work through the backlog (a 6 s
/// run at 200/s against a server of 22/s would last about 54 s: 1,200 calls at 22/s). Calls in
/// flight then still finish.
pub const START_GRACE: Duration = Duration::from_millis(10);

/// Callers opening their first connection at once, at most: ten thousand connects are not ten
/// thousand sockets and SYNs in one burst. (A connect completes once the server's kernel queued the
/// connection, not when the server took it: what spreads the connects over time, for a server whose
/// accept queue would overflow, is a ramp, `Load::ramp`.)
pub const MAX_OPENING: usize = 256;

struct Schedule<P> {
    pacer: P,
    admission: Admission,
    warmup: Duration,
    /// No call starts at or after this (open loop with a planned end: that end plus START_GRACE).
    start_by: Option<Duration>,
    seq: u64,
    over: bool,
    not_started: u64,
}

impl<P: Pacer> Schedule<P> {
    /// The next call's number and intended start (None: as soon as possible), or None when the run is over.
    fn take(&mut self, now: Duration) -> Option<(u64, Option<Duration>)> {
        if self.over {
            return None;
        }
        let intended = match self.pacer.next() {
            Next::Free => None,
            Next::At(t) if self.start_by.is_some_and(|by| now >= by) => {
                self.over = true;
                self.count_not_started(t);
                return None;
            }
            Next::At(t) => Some(t),
            Next::End => {
                self.over = true;
                return None;
            }
        };
        if !self.admission.admit(intended.unwrap_or(now)) {
            self.over = true;
            return None;
        }
        self.seq += 1;
        Some((self.seq - 1, intended))
    }

    /// Counts the window's calls from the one intended at `first` to the end of the schedule: the
    /// ones it would have admitted, had the client kept up.
    fn count_not_started(&mut self, first: Duration) {
        let mut next = Next::At(first);
        while let Next::At(t) = next {
            if !self.admission.admit(t) {
                break;
            }
            self.not_started += u64::from(t >= self.warmup);
            next = self.pacer.next();
        }
    }
}

struct Shared<T, P> {
    target: T,
    schedule: Mutex<Schedule<P>>,
    clock: Clock,
    load: Load,
    connections: AtomicU64,
    retries: AtomicU64,
    /// Callers' first connects in progress at once (see [`MAX_OPENING`]).
    opening: tokio::sync::Semaphore,
    never_connected: AtomicU64,
    answered: AtomicU64,
    /// When the latest caller's first connection opened (ns from the start).
    connected_by: AtomicU64,
    /// Connects the call timeout ended.
    connects_timed_out: AtomicU64,
    /// When a worker first saw the cancel (ns from the start; u64::MAX: not cancelled).
    cancel_seen: AtomicU64,
    /// When the latest measured call ended (ns from the start; 0: none yet), kept only in a run
    /// bounded by a count of calls: its window ends there, not when warm-up calls still in flight
    /// then end.
    last_measured_end: AtomicU64,
    /// The counters at the start of the measured window, once read (see [`Shared::window_starts`]).
    window: OnceLock<Mark>,
    /// The calls' timeout, one watch over all callers (`load.timeout`).
    deadlines: Option<Deadlines>,
}

impl<T: Target, P> Shared<T, P> {
    /// Reads the window's counters before the first call at or after the warm-up's end, unless the
    /// task that reads them at that instant already has: a target that never waits (in-process)
    /// keeps that task from running until the run ends, which read a window of nothing.
    /// `at` (the call's start) is read only while the window is not open: not on every call.
    fn window_starts(&self, at: impl FnOnce() -> Duration) {
        if self.window.get().is_none() && !self.load.stop.warmup.is_zero() && !self.load.stop.in_warmup(at()) {
            self.window.get_or_init(|| Mark::now(&self.target, &self.load, Edge::WindowStart));
        }
    }
}

/// Counters read at the start of the measured window.
#[derive(Clone, Copy)]
struct Mark {
    wire: WireTotals,
    quic: Option<QuicCounts>,
    cpu: Duration,
}

impl Mark {
    fn now(target: &impl Target, load: &Load, edge: Edge) -> Mark {
        if let Some(hook) = &load.edges {
            (hook.0)(edge);
        }
        Mark { wire: target.wire(), quic: target.quic(), cpu: crate::cpu::process_cpu() }
    }
}

/// Drives `target` as `pacer` and `load` say; the workers record their calls into one sink from
/// `new_sink` per runtime thread ([`shards`]), and the merged sink is returned with what the run knew.
/// Errors only on a load that is unbounded or has no concurrency ([`EngineError::Settings`]), or a
/// worker that panics ([`EngineError::Run`]); failed calls are records, not errors.
pub async fn run<T: Target, P: Pacer + 'static, S: Sink>(
    target: T,
    pacer: P,
    load: Load,
    new_sink: impl Fn() -> S,
) -> Result<(RunInfo, S), EngineError> {
    if load.concurrency == 0 {
        return Err(EngineError::Settings("concurrency must be at least 1".into()));
    }
    if !load.stop.is_bounded() && !pacer.ends() {
        let why = "a run must be bounded by a number of calls, a duration or a finite rate schedule";
        return Err(EngineError::Settings(why.into()));
    }
    let warmup = load.stop.warmup;
    let start_by = load.stop.deadline().into_iter().chain(pacer.end()).min().map(|end| end + START_GRACE);
    let schedule =
        Schedule { pacer, admission: Admission::new(load.stop), warmup, start_by, seq: 0, over: false, not_started: 0 };
    // Made before the clock starts: a run's window is not spent allocating.
    let sinks = Arc::new(Shards::new(shards::per_thread(load.concurrency), new_sink));
    let clock = if load.precise_timer { Clock::start_precise() } else { Clock::start() };
    let deadlines = load.timeout.map(|limit| Deadlines::new(limit, load.concurrency));
    let shared = Arc::new(Shared {
        target,
        schedule: Mutex::new(schedule),
        clock,
        load,
        connections: AtomicU64::default(),
        retries: AtomicU64::default(),
        opening: tokio::sync::Semaphore::new(MAX_OPENING),
        never_connected: AtomicU64::default(),
        answered: AtomicU64::default(),
        connected_by: AtomicU64::new(u64::MAX),
        connects_timed_out: AtomicU64::default(),
        cancel_seen: AtomicU64::new(u64::MAX),
        last_measured_end: AtomicU64::new(0),
        window: OnceLock::new(),
        deadlines,
    });
    let goaways_before = shared.target.goaways();
    let failures_before = shared.target.connect_failures();
    let start_mark = Mark::now(&shared.target, &shared.load, Edge::RunStart);
    // The window's counters start when warm-up ends, read by a task that sleeps until then (or by
    // the first call after it, whichever comes first).
    let window_mark = (!warmup.is_zero()).then(|| {
        let shared = shared.clone();
        tokio::spawn(async move {
            shared.clock.sleep_until(warmup).await;
            shared.window.get_or_init(|| Mark::now(&shared.target, &shared.load, Edge::WindowStart));
        })
    });
    let _watch = shared.deadlines.is_some().then(|| {
        let shared = shared.clone();
        Tasks(vec![tokio::spawn(async move {
            if let Some(deadlines) = &shared.deadlines {
                deadlines.watch().await;
            }
        })])
    });
    let mut workers = Tasks(
        (0..shared.load.concurrency).map(|slot| tokio::spawn(worker(shared.clone(), slot, sinks.clone()))).collect(),
    );
    for joined in workers.0.iter_mut() {
        joined.await.map_err(|e| EngineError::Run(format!("a load worker failed: {e}")))?;
    }
    let sink = Arc::into_inner(sinks).expect("every worker has ended").merged();
    let end_mark = Mark::now(&shared.target, &shared.load, Edge::End);
    let elapsed = clock.now();
    let start_mark = match window_mark {
        Some(task) if elapsed >= warmup => {
            let _ = task.await;
            shared.window.get().copied().unwrap_or(start_mark)
        }
        Some(task) => {
            task.abort(); // the run ended inside its warm-up: nothing measured
            end_mark
        }
        None => start_mark,
    };
    let stop = shared.load.stop;
    let cancelled = shared.load.cancel.load(Ordering::Relaxed);
    let schedule = shared.schedule.lock().unwrap();
    let pacer = &schedule.pacer;
    // The window ends at the deadline or the schedule's end, whichever is first (even when the last
    // calls end before it), unless the run stopped sooner: cancelled, or its count of calls reached.
    let planned = stop.deadline().into_iter().chain(pacer.end()).min();
    let stopped = match shared.cancel_seen.load(Ordering::Relaxed) {
        u64::MAX => elapsed,
        seen => elapsed.min(Duration::from_nanos(seen)),
    };
    // Its count reached, a run ends with its last measured call: a warm-up call that outlived
    // them (a connect waiting out SYN retries, a call held by the server) is not measured and
    // would stretch the window over its wait.
    let stopped = match shared.last_measured_end.load(Ordering::Relaxed) {
        last if last > 0 && !cancelled && schedule.admission.count_reached() => stopped.min(Duration::from_nanos(last)),
        _ => stopped,
    };
    let end = match planned {
        Some(planned) if cancelled || schedule.admission.count_reached() => planned.min(stopped),
        Some(planned) => planned,
        None => stopped,
    };
    let window = end.saturating_sub(warmup);
    let requested_calls = pacer.requested_calls(warmup, warmup + window);
    let mut connect_failures = shared.target.connect_failures().since(&failures_before);
    connect_failures.timed_out += shared.connects_timed_out.load(Ordering::Relaxed);
    let info = RunInfo {
        elapsed,
        window,
        requested_calls,
        connections_opened: shared.connections.load(Ordering::Relaxed),
        callers_never_connected: shared.never_connected.load(Ordering::Relaxed),
        callers_answered: shared.answered.load(Ordering::Relaxed),
        callers_connected_by: match shared.connected_by.load(Ordering::Relaxed) {
            u64::MAX => None,
            ns => Some(Duration::from_nanos(ns)),
        },
        connect_failures,
        goaways: shared.target.goaways().saturating_sub(goaways_before),
        retries: shared.retries.load(Ordering::Relaxed),
        not_started: schedule.not_started,
        wire: end_mark.wire.since(start_mark.wire),
        quic: end_mark.quic.zip(start_mark.quic).map(|(end, start)| end.since(start)),
        client_cpu: end_mark.cpu.saturating_sub(start_mark.cpu),
        cancelled,
        first_failure: shared.target.first_failure(),
    };
    Ok((info, sink))
}

async fn worker<T: Target, P: Pacer, S: Sink>(shared: Arc<Shared<T, P>>, slot: usize, sinks: Arc<Shards<S>>) {
    // `shared.clock` is read in place, not copied, and the ramp's wait keeps no local: what a
    // caller keeps across its calls is every byte of its task, which tokio rounds up to 128
    // (rustc's -Zprint-type-sizes: bench/results/h2-stream-memory-2026-12-07.md).
    // The waits are boxed: held inline, a wait's future would take its own place in every
    // caller's state beside the call's (184 bytes of 1,016 for HTTP/2, rustc's -Zprint-type-sizes).
    if !shared.load.ramp.is_zero() {
        let at = shared.load.ramp.mul_f64(slot as f64 / shared.load.concurrency as f64);
        Box::pin(shared.clock.sleep_until(at)).await;
    }
    let mut caller = Caller { conn: None, tried: false, connected: false, answered: false };
    let varies = shared.target.varies();
    let deadlines = shared.deadlines.as_ref();
    loop {
        if shared.load.cancel.load(Ordering::Relaxed) {
            let now = u64::try_from(shared.clock.now().as_nanos()).unwrap_or(u64::MAX - 1);
            shared.cancel_seen.fetch_min(now, Ordering::Relaxed);
            break;
        }
        // A closed-loop call is admitted, and later counted in or out of the warm-up, by this one
        // reading of the clock: read apart, a call admitted just before the warm-up's end (not
        // counted against `-n`) could start just after it and be measured, one call too many.
        // Only the intended start outlives the wait: the schedule's answer and the reading kept
        // across it would take their own place in every caller (bench/results/h2-stream-memory-2026-12-07.md).
        let (seq, intended) = {
            let taken = shared.clock.now();
            let Some((seq, at)) = shared.schedule.lock().unwrap().take(taken) else { break };
            (seq, at.ok_or(taken))
        };
        // A paced call starts when its wait ends; a closed-loop call at the reading that admitted
        // it, its intended start too (read again, the two differed now and then: a closed-loop
        // call has no schedule to be late for).
        let (intended, start) = match intended {
            Ok(at) => {
                Box::pin(shared.clock.sleep_until(at)).await;
                (at, shared.clock.now())
            }
            Err(taken) => (taken, taken),
        };
        shared.window_starts(|| intended);
        let answered = {
            // Pinned here, once: the call's future is most of what a caller holds.
            // Only a target whose requests vary is told the call's turn (a task-local, set per poll:
            // bench/results/call-data-cost-2026-12-06.md measured it on every call).
            let turn = crate::call_data::Turn { call: seq, caller: slot };
            let attempt = std::pin::pin!(turn.scope_if(varies, one_call(&shared, slot, &mut caller)));
            match deadlines {
                Some(deadlines) => deadlines.run(slot, shared.clock.instant(start), attempt).await,
                None => Some(attempt.await),
            }
        };
        let (reply, connect) = answered.unwrap_or_else(|| {
            if caller.conn.is_none() {
                shared.connects_timed_out.fetch_add(1, Ordering::Relaxed); // ended in its connect
            }
            (Reply::broken(ErrorKind::Timeout, ByteCounts::default()), None)
        });
        let end = shared.clock.now();
        if shared.load.stop.calls.is_some() && !shared.load.stop.in_warmup(intended) {
            let end_ns = u64::try_from(end.as_nanos()).unwrap_or(u64::MAX - 1);
            shared.last_measured_end.fetch_max(end_ns, Ordering::Relaxed);
        }
        if !reply.keep_connection || shared.load.new_connection_per_call {
            caller.conn = None;
        }
        caller.answered |= reply.outcome.is_ok();
        let stream = reply.stream.map(|s| StreamCounts {
            sent: s.sent,
            received: s.received,
            first_answer: s.first_answer.map(|at| at.saturating_duration_since(shared.clock.instant(start).into_std())),
        });
        let (outcome, bytes) = (reply.outcome, reply.bytes);
        sinks.add(&CallRecord { seq, intended, start, end, connect, outcome, bytes, stream });
        shared.load.progress.fetch_add(1, Ordering::Relaxed);
        // Yield now and then, so a target that never waits (in-process) cannot starve the runtime.
        tokio::task::coop::consume_budget().await;
    }
    if caller.tried && !caller.connected {
        shared.never_connected.fetch_add(1, Ordering::Relaxed);
    }
    if caller.answered {
        shared.answered.fetch_add(1, Ordering::Relaxed);
    }
}

/// A run's tasks (its workers, its deadlines' watch). Dropped (the run ended, a worker failed, or
/// the run was dropped), those still running stop, as a JoinSet's would; a JoinSet kept an entry
/// more beside each worker (bench/results/h2-stream-memory-2026-12-07.md).
struct Tasks(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// What one worker holds between its calls.
struct Caller<C> {
    conn: Option<C>,
    /// Whether it has tried to connect, and whether it ever did.
    tried: bool,
    connected: bool,
    /// Whether a call of its was answered successfully.
    answered: bool,
}

/// How many times one call is sent again when the server did not process it.
const MAX_RETRIES: u32 = 3;

/// Connects if the slot has no connection, then calls; gives the reply and the connection's
/// opening (if one was opened for this call). A call the server did not process is sent again (on a new
/// connection when its own is gone), at most [`MAX_RETRIES`] times.
async fn one_call<T: Target, P>(
    shared: &Shared<T, P>,
    slot: usize,
    caller: &mut Caller<T::Conn>,
) -> (Reply, Option<Connect>) {
    // Boxed: held across the call, inline it would take its place in every caller's state.
    let mut connect: Option<Box<Connect>> = None;
    let mut retries = 0;
    loop {
        if caller.conn.as_mut().is_some_and(|c| !shared.target.reusable(c)) {
            caller.conn = None; // closed by the server since the slot's last call: never send on it
        }
        if caller.conn.is_none() {
            caller.tried = true;
            let _opening = match caller.connected {
                false => Some(Box::pin(shared.opening.acquire()).await.expect("never closed")),
                true => None,
            };
            let before = shared.clock.now();
            // Boxed: a connect happens once per caller (or per call when every call opens its
            // own), and its future held inline would take its place in every caller's state.
            match Box::pin(shared.target.connect(slot)).await {
                Ok(c) => {
                    if let Some(handshake) = c.opened {
                        shared.connections.fetch_add(1, Ordering::Relaxed);
                        connect = connect.or(Some(Box::new(Connect { total: shared.clock.now() - before, handshake })));
                    }
                    if !caller.connected {
                        caller.connected = true;
                        let now = u64::try_from(shared.clock.now().as_nanos()).unwrap_or(u64::MAX - 1);
                        let by = &shared.connected_by;
                        let _ = by.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                            Some(if t == u64::MAX { now } else { t.max(now) })
                        });
                    }
                    caller.conn = Some(c.conn);
                }
                Err(kind) => return (Reply::broken(kind, ByteCounts::default()), None),
            }
        }
        let reply = shared.target.call(caller.conn.as_mut().expect("connected above")).await;
        if !reply.unprocessed || retries == MAX_RETRIES || shared.load.cancel.load(Ordering::Relaxed) {
            return (reply, connect.map(|c| *c));
        }
        retries += 1;
        shared.retries.fetch_add(1, Ordering::Relaxed);
        if !reply.keep_connection {
            caller.conn = None;
        }
    }
}

#[cfg(test)]
mod tests;
