//! The self-check before io_uring is used, once per process: how long after the answer a thread
//! asleep on each kind of ring has the receive's completion in hand, against the same wait over
//! epoll, each kind woken the way the engine's ring is ([`super::wake`], [`super::ring::builder`]).
//!
//! A ring can be correct and still wait: on kernel 6.18.44-fc the eventfd that tells of deferred
//! completions (DEFER_TASKRUN) is signalled 12-27 ms after the answer arrived, and the ring's own
//! descriptor never becomes readable for them, so every call over a deferred ring woken by them
//! alone waited that long (docs/src/load.md#io_uring-on-any-kernel). Which kernel does what cannot
//! be read from its version or the setup flags it accepts, so it is measured here, on the raw ring
//! with nothing of the engine's on top (whose own busy spells could hide a late wake-up): a kind
//! whose median is far above epoll's is not used, and where no kind is prompt, io_uring is not
//! used at all (`--io auto` falls back to epoll, `--io uring` refuses).

use super::ring::{self, Completions};
use super::wake::Eventfd;
use io_uring::{opcode, types, IoUring};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

/// Wake-ups measured per kind.
const ROUNDS: usize = 9;
/// After this many rounds whose wake-ups all were over the bound, a kind is decided.
const EARLY_ROUNDS: usize = 3;
/// A completion not in hand by then counts as in hand then (a ring whose descriptor never tells).
const WAIT_LIMIT: Duration = Duration::from_millis(200);
/// A kind is prompt when its median wake-up is within this many times epoll's…
const STALL_RATIO: u32 = 20;
/// …or within this, whichever is larger (a machine slow for both is not a stalled ring).
const STALL_FLOOR: Duration = Duration::from_millis(2);
/// How long the peer waits for the measured thread to fall asleep before it answers anyway.
const ASLEEP_LIMIT: Duration = Duration::from_secs(1);

/// Why io_uring cannot be used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// The kernel refuses it (not built in, `kernel.io_uring_disabled`, a seccomp filter).
    Refused(String),
    /// Every kind of ring waited far longer than epoll (the line has the figures).
    Stalls(String),
    /// The self-check itself could not run (no loopback socket, no thread, …).
    Unchecked(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Refused(why) => write!(f, "io_uring is not available: {why}"),
            Unusable::Stalls(why) => write!(f, "io_uring stalls on this kernel {why}"),
            Unusable::Unchecked(why) => write!(f, "io_uring's self-check: {why}"),
        }
    }
}

impl std::error::Error for Unusable {}

/// How one kind of ring did.
#[derive(Debug, Clone, Copy)]
pub struct Trial {
    /// The median time from the answer's send to its completion in the sleeping thread's hand.
    pub median: Duration,
    /// Within the bound: the kernel tells of completions without waiting for something else.
    pub prompt: bool,
}

/// What the self-check found.
#[derive(Debug, Clone)]
pub struct Check {
    /// The median wake-up over epoll, the yardstick.
    pub epoll: Duration,
    /// A ring that defers completions to its thread's enters (SINGLE_ISSUER + DEFER_TASKRUN),
    /// woken by its sockets and its eventfd, where the kernel makes one (6.1).
    pub deferred: Option<Trial>,
    /// A ring whose completions are posted by task work that wakes the thread (COOP_TASKRUN where
    /// the kernel has it, as a single-threaded run's ring).
    pub interrupting: Trial,
}

impl Check {
    /// Whether a ring on a single-threaded runtime may defer its completions.
    pub fn defer(&self) -> bool {
        self.deferred.is_some_and(|d| d.prompt)
    }

    /// Why io_uring cannot be used, if no kind of ring was prompt.
    fn refusal(&self) -> Option<String> {
        if self.interrupting.prompt || self.defer() {
            return None;
        }
        Some(format!("({}): {}", kernel(), self.figures()))
    }

    /// The wake-ups, in words.
    fn figures(&self) -> String {
        let deferred = match self.deferred {
            Some(d) => format!("{} with deferred completions, ", us(d.median)),
            None => String::new(),
        };
        format!(
            "a loopback answer was in hand {deferred}{} with interrupting ones, {} over epoll",
            us(self.interrupting.median),
            us(self.epoll)
        )
    }

    /// One line on how the rings post completions here, and why (results record it).
    pub fn describe(&self) -> String {
        let how = if self.defer() {
            "completions deferred to the client's thread"
        } else if self.deferred.is_some() {
            "completions posted by interrupting task work, as deferred ones came late on this kernel"
        } else {
            "completions posted by interrupting task work (this kernel cannot defer them)"
        };
        format!("io_uring: {how} (self-check: {})", self.figures())
    }
}

/// The self-check's result for this process, measured on first use: why io_uring cannot be
/// used, or how it can.
pub fn check() -> &'static Result<Check, Unusable> {
    static CHECK: OnceLock<Result<Check, Unusable>> = OnceLock::new();
    CHECK.get_or_init(|| {
        // A thread of its own: a deferred ring belongs to the thread that makes it, and the
        // caller may be a runtime's.
        let measured = std::thread::Builder::new()
            .name("io_uring self-check".into())
            .spawn(measure)
            .map_err(|e| Unusable::Unchecked(format!("cannot start a thread: {e}")))?
            .join()
            .map_err(|_| Unusable::Unchecked("it panicked".into()))?;
        let measured = measured.map_err(|why| match why {
            Measure::Refused(e) => Unusable::Refused(e),
            Measure::Failed(e) => Unusable::Unchecked(e),
        })?;
        match measured.refusal() {
            Some(why) => Err(Unusable::Stalls(why)),
            None => Ok(measured),
        }
    })
}

/// What the measured thread waits on.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Epoll,
    Deferred,
    Interrupting,
}

/// Why the measurement did not finish: the kernel refused a ring, or something else failed.
enum Measure {
    Refused(String),
    Failed(String),
}

fn measure() -> Result<Check, Measure> {
    if let Err(e) = IoUring::new(2) {
        return Err(Measure::Refused(e.to_string()));
    }
    let peer = Peer::start().map_err(|e| Measure::Failed(format!("cannot start its loopback peer: {e}")))?;
    let waiter = |kind| Waiter::new(kind, &peer).map_err(Measure::Failed);
    let mut waiters = vec![waiter(Kind::Epoll)?, waiter(Kind::Interrupting)?];
    // A kernel before 6.1 makes no deferred ring: that kind is then not tried.
    if let Ok(deferred) = Waiter::new(Kind::Deferred, &peer) {
        waiters.push(deferred);
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); waiters.len()];
    for round in 0..ROUNDS {
        let bound = bound(&times[0]);
        for (i, waiter) in waiters.iter_mut().enumerate() {
            // A ring late every time so far is not asked again (each late wake-up is milliseconds).
            if i > 0 && round >= EARLY_ROUNDS && times[i].iter().all(|t| *t > bound) {
                continue;
            }
            let woke = waiter.wait_for_answer(&peer).map_err(Measure::Failed)?;
            times[i].push(woke);
        }
    }
    let epoll = median(&times[0]);
    let bound = bound(&times[0]);
    let trial = |t: &Vec<Duration>| Trial { median: median(t), prompt: median(t) <= bound };
    Ok(Check { epoll, interrupting: trial(&times[1]), deferred: (waiters.len() > 2).then(|| trial(&times[2])) })
}

/// The longest median wake-up a prompt kind may have, given epoll's.
fn bound(over_epoll: &[Duration]) -> Duration {
    (median(over_epoll) * STALL_RATIO).max(STALL_FLOOR)
}

/// The other end of every measured connection: on request, it waits until the measured thread is
/// asleep, then sends one byte and notes when.
struct Peer {
    listener: TcpListener,
    asks: mpsc::Sender<(TcpStream, i32, mpsc::Sender<Instant>)>,
}

impl Peer {
    fn start() -> std::io::Result<Peer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let (asks, asked) = mpsc::channel::<(TcpStream, i32, mpsc::Sender<Instant>)>();
        std::thread::Builder::new().name("io_uring self-check peer".into()).spawn(move || {
            // Ends when the measuring thread drops its end of the channel.
            for (mut socket, tid, sent) in asked {
                wait_until_asleep(tid);
                let at = Instant::now();
                if socket.write_all(b"a").is_err() || sent.send(at).is_err() {
                    return;
                }
            }
        })?;
        Ok(Peer { listener, asks })
    }
}

/// Waits (bounded) until thread `tid` of this process sleeps: then it is in its wait.
fn wait_until_asleep(tid: i32) {
    let started = Instant::now();
    while started.elapsed() < ASLEEP_LIMIT && !sleeping(tid) {
        std::thread::yield_now();
    }
}

/// Whether thread `tid` of this process sleeps (or is gone), as /proc says.
pub(super) fn sleeping(tid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
    // The state follows the command name's closing parenthesis.
    stat.rsplit_once(") ").is_none_or(|(_, rest)| rest.starts_with('S'))
}

/// One connection and what the measured thread sleeps on for it.
struct Waiter {
    kind: Kind,
    /// The measured side, and the peer's side (which the peer writes to).
    ours: TcpStream,
    theirs: TcpStream,
    ring: Option<IoUring>,
    /// A deferred ring's eventfd: in `epoll` beside the socket, as the engine watches both.
    eventfd: Option<Eventfd>,
    /// An epoll of the socket (epoll's kind, and a deferred ring's) or of the ring's descriptor.
    epoll: OwnedFd,
}

impl Waiter {
    fn new(kind: Kind, peer: &Peer) -> Result<Waiter, String> {
        let fail = |e: std::io::Error| e.to_string();
        let ours = TcpStream::connect(peer.listener.local_addr().map_err(fail)?).map_err(fail)?;
        let (theirs, _) = peer.listener.accept().map_err(fail)?;
        let _ = (ours.set_nodelay(true), theirs.set_nodelay(true));
        let (ring, eventfd, watched) = match kind {
            Kind::Epoll => (None, None, ours.as_raw_fd()),
            Kind::Interrupting => {
                let ring = ring::builder(Completions::Cooperative).build(8);
                let ring = ring.or_else(|_| ring::builder(Completions::Interrupting).build(8)).map_err(fail)?;
                let fd = ring.as_raw_fd();
                (Some(ring), None, fd)
            }
            Kind::Deferred => {
                let ring = ring::builder(Completions::Deferred).build(8).map_err(fail)?;
                let eventfd = Eventfd::new(&ring).map_err(fail)?;
                (Some(ring), Some(eventfd), ours.as_raw_fd())
            }
        };
        // SAFETY: epoll_create1 has no memory arguments; the descriptor it returns is ours.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(fail(std::io::Error::last_os_error()));
        }
        // SAFETY: just created, owned by nothing else.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        for fd in std::iter::once(watched).chain(eventfd.as_ref().map(Eventfd::fd)) {
            let mut event = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLET) as u32, u64: 0 };
            // SAFETY: `event` is valid for the call; both descriptors are open.
            if unsafe { libc::epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) } != 0 {
                return Err(fail(std::io::Error::last_os_error()));
            }
        }
        Ok(Waiter { kind, ours, theirs, ring, eventfd, epoll })
    }

    /// Arms a receive of one byte (on a ring), asks the peer to send it once this thread sleeps,
    /// and waits for the byte as the engine would: how long after the send it was in hand.
    fn wait_for_answer(&mut self, peer: &Peer) -> Result<Duration, String> {
        let fail = |e: std::io::Error| e.to_string();
        let mut byte = [0u8; 1];
        if let Some(ring) = self.ring.as_mut() {
            let recv = opcode::Recv::new(types::Fd(self.ours.as_raw_fd()), byte.as_mut_ptr(), 1).build();
            // SAFETY: `byte` outlives the receive: it completes (or the ring is gone) before return.
            unsafe { ring.submission().push(&recv) }.map_err(|_| "a full submission queue".to_string())?;
            enter(ring, self.kind, 0).map_err(fail)?;
        }
        if let Some(eventfd) = &self.eventfd {
            eventfd.drain();
        }
        let (sent, sent_at) = mpsc::channel();
        let theirs = self.theirs.try_clone().map_err(fail)?;
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() };
        peer.asks.send((theirs, tid, sent)).map_err(|_| "its peer is gone".to_string())?;
        let in_hand = self.wait_until_in_hand().map_err(fail)?;
        let sent_at = sent_at.recv().map_err(|_| "its peer is gone".to_string())?;
        // The byte, whichever way it came, so the next round starts from nothing.
        match self.ring.as_mut() {
            Some(ring) => {
                if in_hand.is_none() {
                    enter(ring, self.kind, 1).map_err(fail)?;
                }
                let done = ring.completion().next().map(|c| c.result());
                if done != Some(1) {
                    return Err(format!("a receive ended with {done:?}"));
                }
            }
            None => std::io::Read::read_exact(&mut self.ours, &mut byte).map_err(fail)?,
        }
        Ok(in_hand.map_or(WAIT_LIMIT, |at| at.saturating_duration_since(sent_at)))
    }

    /// When the answer was in hand: the socket readable (epoll's kind), or the completion in the
    /// ring's queue after each wake-up (a deferred ring entered first, as the engine's ring's task
    /// does). None by WAIT_LIMIT.
    fn wait_until_in_hand(&mut self) -> std::io::Result<Option<Instant>> {
        let started = Instant::now();
        let watched = self.epoll.as_raw_fd();
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        loop {
            let left = WAIT_LIMIT.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(None);
            }
            // SAFETY: `event` has room for the one event asked for.
            let n = unsafe { libc::epoll_wait(watched, &mut event, 1, left.as_millis() as i32 + 1) };
            // n < 0: interrupted, and an interrupting ring's task work ran on the way out.
            let Some(ring) = self.ring.as_mut() else {
                if n == 1 {
                    return Ok(Some(Instant::now()));
                }
                continue;
            };
            if n == 1 && self.kind == Kind::Deferred {
                if let Some(eventfd) = &self.eventfd {
                    eventfd.drain();
                }
                enter(ring, self.kind, 0)?;
            }
            if !ring.completion().is_empty() {
                return Ok(Some(Instant::now()));
            }
        }
    }
}

/// Submits what is queued; `wait` completions first (a deferred ring runs its work only here).
fn enter(ring: &mut IoUring, kind: Kind, wait: usize) -> std::io::Result<usize> {
    if kind == Kind::Deferred {
        let queued = ring.submission().len() as u32;
        let getevents = io_uring::EnterFlags::GETEVENTS.bits();
        // SAFETY: no argument is passed; the queued receive's buffer outlives it.
        unsafe { ring.submitter().enter::<libc::sigset_t>(queued, wait as u32, getevents, None) }
    } else {
        ring.submit_and_wait(wait)
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(|_| "unknown".into(), |r| r.trim().to_string())
}
