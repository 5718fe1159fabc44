//! The one driver loop, for every load model: closed or open loop, steps, ramps, warm-up and limits
//! are data (a pacer, a stop, a concurrency), never another loop.

use crate::clock::Clock;
use crate::pacer::{Next, Pacer};
use crate::record::{ByteCounts, CallRecord, ErrorKind, Outcome};
use crate::stop::{Admission, Stop};
use crate::target::{Reply, Target};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// How hard and how long to drive a target; the pacer says when.
#[derive(Debug, Clone)]
pub struct Load {
    /// Calls in flight at most (`-c`); also the number of connections each slot owns.
    pub concurrency: usize,
    pub stop: Stop,
    /// A call (connect included) taking longer is abandoned and recorded as `Timeout`.
    pub timeout: Option<Duration>,
    /// Open a new connection for every call (what ab does without -k).
    pub new_connection_per_call: bool,
    /// Set it to end the run early (Ctrl-C): calls in flight finish, no new call starts.
    pub cancel: Arc<AtomicBool>,
}

impl Load {
    pub fn new(concurrency: usize, stop: Stop) -> Self {
        Load { concurrency, stop, timeout: None, new_connection_per_call: false, cancel: Arc::default() }
    }
}

/// What the run itself knew, beside the records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInfo {
    /// From the run's start to the end of its last call.
    pub elapsed: Duration,
    /// The measured window: from the end of warm-up to the deadline (or the end, if sooner).
    pub window: Duration,
    /// Calls the pacer intended in the window (None in closed loop).
    pub requested_calls: Option<f64>,
    pub connections_opened: u64,
}

struct Schedule<P> {
    pacer: P,
    admission: Admission,
    seq: u64,
    over: bool,
}

impl<P: Pacer> Schedule<P> {
    /// The next call's number and intended start (None: as soon as possible), or None when the run is over.
    fn take(&mut self, now: Duration) -> Option<(u64, Option<Duration>)> {
        if self.over {
            return None;
        }
        let intended = match self.pacer.next() {
            Next::Free => None,
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
}

struct Shared<T, P> {
    target: T,
    schedule: Mutex<Schedule<P>>,
    clock: Clock,
    load: Load,
    records: UnboundedSender<CallRecord>,
    connections: AtomicU64,
}

/// Drives `target` as `pacer` and `load` say, sending one record per call to `records`.
/// Errors only on a load that is unbounded or has no concurrency; failed calls are records, not errors.
pub async fn run<T: Target, P: Pacer + 'static>(
    target: T,
    pacer: P,
    load: Load,
    records: UnboundedSender<CallRecord>,
) -> Result<RunInfo, String> {
    if load.concurrency == 0 {
        return Err("concurrency must be at least 1".into());
    }
    if !load.stop.is_bounded() && !pacer.ends() {
        return Err("a run must be bounded by a number of calls, a duration or a finite rate schedule".into());
    }
    let schedule = Schedule { pacer, admission: Admission::new(load.stop), seq: 0, over: false };
    let clock = Clock::start();
    let shared = Arc::new(Shared {
        target,
        schedule: Mutex::new(schedule),
        clock,
        load,
        records,
        connections: AtomicU64::new(0),
    });
    let mut workers = tokio::task::JoinSet::new();
    for slot in 0..shared.load.concurrency {
        workers.spawn(worker(shared.clone(), slot));
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|e| format!("a load worker failed: {e}"))?;
    }
    let elapsed = clock.now();
    let stop = shared.load.stop;
    let end = stop.deadline().map_or(elapsed, |d| d.min(elapsed));
    let window = end.saturating_sub(stop.warmup);
    let pacer = &shared.schedule.lock().unwrap().pacer;
    let requested_calls = pacer.requested_calls(stop.warmup, stop.warmup + window);
    Ok(RunInfo { elapsed, window, requested_calls, connections_opened: shared.connections.load(Ordering::Relaxed) })
}

async fn worker<T: Target, P: Pacer>(shared: Arc<Shared<T, P>>, slot: usize) {
    let clock = shared.clock;
    let mut conn: Option<T::Conn> = None;
    loop {
        if shared.load.cancel.load(Ordering::Relaxed) {
            return;
        }
        let Some((seq, intended)) = shared.schedule.lock().unwrap().take(clock.now()) else { return };
        if let Some(at) = intended {
            clock.sleep_until(at).await;
        }
        let start = clock.now();
        let attempt = one_call(&shared, slot, &mut conn);
        let (reply, connect) = match shared.load.timeout {
            Some(limit) => tokio::time::timeout(limit, attempt).await.unwrap_or_else(|_| {
                (
                    Reply {
                        outcome: Outcome::Error(ErrorKind::Timeout),
                        bytes: ByteCounts::default(),
                        keep_connection: false,
                    },
                    None,
                )
            }),
            None => attempt.await,
        };
        let end = clock.now();
        if !reply.keep_connection || shared.load.new_connection_per_call {
            conn = None;
        }
        let intended = intended.unwrap_or(start);
        let record = CallRecord { seq, intended, start, end, connect, outcome: reply.outcome, bytes: reply.bytes };
        if shared.records.send(record).is_err() {
            return; // nobody listens any more
        }
        // Yield now and then, so a target that never waits (in-process) cannot starve the runtime.
        tokio::task::coop::consume_budget().await;
    }
}

/// Connects if the slot has no connection, then calls; gives the reply and the connect time.
async fn one_call<T: Target, P>(
    shared: &Shared<T, P>,
    slot: usize,
    conn: &mut Option<T::Conn>,
) -> (Reply, Option<Duration>) {
    let mut connect = None;
    if conn.is_none() {
        let before = shared.clock.now();
        match shared.target.connect(slot).await {
            Ok(c) => {
                shared.connections.fetch_add(1, Ordering::Relaxed);
                *conn = Some(c);
            }
            Err(kind) => {
                return (
                    Reply { outcome: Outcome::Error(kind), bytes: ByteCounts::default(), keep_connection: false },
                    None,
                )
            }
        }
        connect = Some(shared.clock.now() - before);
    }
    let reply = shared.target.call(conn.as_mut().expect("connected above")).await;
    (reply, connect)
}

#[cfg(test)]
mod tests;
