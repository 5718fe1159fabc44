//! The thread that is the link: it reads every packet the client side's TUN device gives it,
//! holds it until the lane says it leaves, and writes it into the server side's (and the other way
//! round). It sleeps with a 1 ns timer slack until a margin before the next departure and spins the
//! rest, so a packet leaves within microseconds of its time; the margin follows how late its own
//! timer wake-ups come (see [`Margin`]). Its CPU time is read from outside
//! (/proc/self/task/TID/schedstat) and reported with every result. With a capture it also writes
//! every packet as the client's side sees it: a packet the client sent when it came in (lost ones
//! too), a packet to the client when it left for it; it writes the capture out and closes its
//! file when told to end it, and answers once it has.

use crate::lane::{Fate, Lane, LaneCounts};
use crate::pcap;
use crate::spec::LinkSpec;
use crate::LinkError;
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tun_rs::SyncDevice;

/// The least margin: spin instead of sleeping when the next departure is this close (the kernel
/// wakes a sleeper late even with a 1 ns slack: bench/results/code-notes-2026-12.md#timer-wake-ups-of-the-forwarder).
const SPIN_NS: u64 = 50_000;
/// The most margin, whatever the wake-ups do: a forwarder never spins longer than this per sleep.
const MAX_SPIN_NS: u64 = 2_000_000;
/// The longest sleep with nothing scheduled: how soon a stop or new settings are seen when idle.
const IDLE_NS: u64 = 20_000_000;

/// What the forwarder shares with the [`Link`](crate::Link) that owns it.
#[derive(Default)]
pub struct Shared {
    stop: AtomicBool,
    /// New settings, taken by the forwarder at its next wake-up.
    update: Mutex<Option<LinkSpec>>,
    /// Client → server, server → client.
    counts: Mutex<[LaneCounts; 2]>,
    /// Packets that could not be written into the far TUN device.
    write_errors: Mutex<u64>,
    /// A capture to start writing, taken by the forwarder at its next wake-up.
    new_capture: Mutex<Option<pcap::Writer>>,
    /// Set to end the capture: the forwarder takes it, writes the capture out, closes its file and
    /// answers on it.
    end_capture: Mutex<Option<Sender<CaptureEnd>>>,
    tid: AtomicI32,
}

impl Shared {
    pub fn counts(&self) -> [LaneCounts; 2] {
        *self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write_errors(&self) -> u64 {
        *self.write_errors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands `writer` to the forwarder and waits (20 ms at most: its longest sleep) until it took
    /// it: every packet after this returns is in the capture.
    pub fn start_capture(&self, writer: pcap::Writer) {
        *self.new_capture.lock().unwrap_or_else(|e| e.into_inner()) = Some(writer);
        self.wait_for(|s| s.new_capture.lock().unwrap_or_else(|e| e.into_inner()).is_none());
    }

    /// Ends the capture and waits, `within` at most, until the forwarder wrote it out and closed
    /// its file. Past that, or if the forwarder is gone, the file is cut: an error says why.
    pub fn end_capture(&self, within: Duration) -> CaptureEnd {
        let (tx, rx) = mpsc::channel();
        *self.end_capture.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        if self.tid.load(Ordering::SeqCst) == 0 {
            self.end_capture.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        match rx.recv_timeout(within) {
            Ok(end) => end,
            Err(RecvTimeoutError::Timeout) => Err(LinkError::Io(format!(
                "the link's forwarder did not finish writing it within {}",
                crate::units::show_duration(within)
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                Err(LinkError::Io("the link's forwarder ended before writing it out".into()))
            }
        }
    }

    /// Polls `done` every 200 µs for up to 1 s (the forwarder wakes every 20 ms at the latest).
    fn wait_for(&self, done: impl Fn(&Shared) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(1);
        while !done(self) && Instant::now() < deadline && self.tid.load(Ordering::SeqCst) != 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    pub fn set_spec(&self, spec: LinkSpec) {
        *self.update.lock().unwrap_or_else(|e| e.into_inner()) = Some(spec);
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// CPU time the forwarder thread has used, in ns (None before it started or after it ended).
    pub fn cpu_ns(&self) -> Option<u64> {
        let tid = self.tid.load(Ordering::SeqCst);
        if tid == 0 {
            return None;
        }
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }
}

/// Starts the forwarder between `client` and `server` (TUN devices, non-blocking) on `cpus`.
pub fn start(
    client: SyncDevice,
    server: SyncDevice,
    spec: &LinkSpec,
    cpus: &[usize],
) -> Result<(Arc<Shared>, std::thread::JoinHandle<()>), LinkError> {
    let shared = Arc::new(Shared::default());
    let lanes = [Lane::new(spec.up, spec.seed), Lane::new(spec.down, spec.seed.rotate_left(32) ^ 0x5bd1_e995)];
    let (s, cpus) = (shared.clone(), cpus.to_vec());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("callbench-link".into())
        .spawn(move || {
            prepare_thread(&cpus);
            // SAFETY: gettid has no preconditions.
            s.tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
            let _ = ready_tx.send(());
            let devices = [client, server];
            let capture = Capture::Off;
            Forwarder { devices, lanes, waiting: Default::default(), shared: s.clone(), capture }.run();
            s.tid.store(0, Ordering::SeqCst); // ended: nobody waits for it any more
            s.end_capture.lock().unwrap_or_else(|e| e.into_inner()).take(); // nor for its capture
        })
        .map_err(|e| LinkError::Kernel(format!("cannot start the link's forwarder: {e}")))?;
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    Ok((shared, handle))
}

/// Pinned to `cpus` (none: wherever it runs), and woken on time.
fn prepare_thread(cpus: &[usize]) {
    // SAFETY: plain syscalls on the calling thread; CPU_SET stays within the set for real CPUs.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if !cpus.is_empty() {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in cpus {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

struct Forwarder {
    /// [client side, server side]: lane 0 reads the first and writes the second, lane 1 the reverse.
    devices: [SyncDevice; 2],
    lanes: [Lane; 2],
    /// Packets in flight per lane, in departure order (a lane never reorders).
    waiting: [VecDeque<(u64, Vec<u8>)>; 2],
    shared: Arc<Shared>,
    capture: Capture,
}

/// What a capture held once written out, or why its file is cut ([`LinkError::Io`]).
pub type CaptureEnd = Result<pcap::Written, LinkError>;

enum Capture {
    Off,
    On(pcap::Writer),
    /// Writing it failed (a full disk): the file ends where the failure was.
    Failed(String),
}

impl Forwarder {
    fn run(mut self) {
        let epoch = Instant::now();
        let wall = SystemTime::now(); // the capture's clock: the epoch's wall time, plus the monotonic time since
        let now = || epoch.elapsed().as_nanos() as u64;
        let mut buffer = vec![0u8; 65536];
        let mut write_errors = 0u64;
        let mut margin = Margin::new();
        while !self.shared.stop.load(Ordering::Relaxed) {
            if let Some(spec) = self.shared.update.lock().unwrap_or_else(|e| e.into_inner()).take() {
                self.lanes[0].set_spec(spec.up);
                self.lanes[1].set_spec(spec.down);
            }
            if let Some(writer) = self.shared.new_capture.lock().unwrap_or_else(|e| e.into_inner()).take() {
                self.capture = Capture::On(writer);
            }
            let ending = self.shared.end_capture.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(answer) = ending {
                let _ = answer.send(self.finish_capture());
            }
            for lane in 0..2 {
                loop {
                    match self.devices[lane].recv(&mut buffer) {
                        Ok(size) => {
                            let arrived = now();
                            if lane == 0 {
                                self.capture(wall, arrived, &buffer[..size]); // sent by the client now
                            }
                            if let Fate::Departs(at) = self.lanes[lane].admit(arrived, size) {
                                self.waiting[lane].push_back((at, buffer[..size].to_vec()));
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(_) => break, // the device is going away with the link
                    }
                }
            }
            let t = now();
            for lane in 0..2 {
                while self.waiting[lane].front().is_some_and(|(at, _)| *at <= t) {
                    let (_, packet) = self.waiting[lane].pop_front().expect("checked above");
                    if self.devices[1 - lane].send(&packet).is_err() {
                        write_errors += 1;
                    } else if lane == 1 {
                        // Reaches the client now (its departure time, plus however late this loop is).
                        self.capture(wall, now(), &packet);
                    }
                }
            }
            *self.shared.counts.lock().unwrap_or_else(|e| e.into_inner()) =
                [self.lanes[0].counts, self.lanes[1].counts];
            *self.shared.write_errors.lock().unwrap_or_else(|e| e.into_inner()) = write_errors;
            let next = self.waiting.iter().filter_map(|w| w.front().map(|(at, _)| *at)).min();
            let wait = next.map_or(IDLE_NS, |at| at.saturating_sub(now()));
            if wait > margin.ns {
                let until = now() + (wait - margin.ns);
                if self.sleep(wait - margin.ns) && next.is_some() {
                    margin.woke(now().saturating_sub(until));
                }
            }
            // Closer than that: loop at once, reading arrivals while the departure comes.
        }
        let _ = self.finish_capture(); // a link dropped while capturing: its file is written out
    }

    /// Writes the capture out and closes its file.
    fn finish_capture(&mut self) -> CaptureEnd {
        match std::mem::replace(&mut self.capture, Capture::Off) {
            Capture::Off => Err(LinkError::Invalid("no capture was being written".into())),
            Capture::On(writer) => writer.finish().map_err(|e| LinkError::Io(format!("writing it failed: {e}"))),
            Capture::Failed(why) => Err(LinkError::Io(why)),
        }
    }

    /// Writes `packet` into the capture as seen `ns` after the forwarder's start.
    fn capture(&mut self, wall: SystemTime, ns: u64, packet: &[u8]) {
        let Capture::On(writer) = &mut self.capture else { return };
        if let Err(e) = writer.packet(wall + Duration::from_nanos(ns), packet) {
            self.capture = Capture::Failed(format!("writing it failed: {e}"));
        }
    }

    /// Sleeps up to `ns`, or until a device has a packet; true when the time ran out.
    fn sleep(&self, ns: u64) -> bool {
        let mut fds = [
            libc::pollfd { fd: self.devices[0].as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.devices[1].as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let timeout = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: two valid pollfds, a valid timespec, no signal mask change.
        unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &timeout, std::ptr::null()) == 0 }
    }
}

/// How long before a departure the forwarder stops sleeping. A timer wake-up comes late by what
/// the machine makes it, later after a long sleep than a short one (a virtual CPU halted long is
/// slow to run again: bench/results/code-notes-2026-12.md#timer-wake-ups-of-the-forwarder), and
/// every packet would leave that late. So the margin is the 90th percentile of the last
/// [`Margin::KEPT`] wake-ups' lateness plus 25 µs, within [`SPIN_NS`]..[`MAX_SPIN_NS`]: a rare preemption of
/// milliseconds (which no spinning would have saved) does not make the forwarder spin for long after it.
struct Margin {
    ns: u64,
    /// The latest wake-ups' lateness, ns (a ring).
    late: [u64; Margin::KEPT],
    next: usize,
}

impl Margin {
    const KEPT: usize = 32;

    fn new() -> Margin {
        Margin { ns: SPIN_NS, late: [0; Margin::KEPT], next: 0 }
    }

    /// A timer wake-up came `late_ns` after the time asked for.
    fn woke(&mut self, late_ns: u64) {
        self.late[self.next] = late_ns;
        self.next = (self.next + 1) % Margin::KEPT;
        let mut sorted = self.late;
        sorted.sort_unstable();
        let p90 = sorted[Margin::KEPT * 9 / 10];
        self.ns = (p90 + 25_000).clamp(SPIN_NS, MAX_SPIN_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_follows_the_latest_wake_ups_but_not_a_rare_one() {
        let mut m = Margin::new();
        m.woke(10_000);
        assert_eq!(m.ns, SPIN_NS, "a wake-up within the least margin changes nothing");
        m.woke(40_000_000);
        assert_eq!(m.ns, SPIN_NS, "one preemption of 40 ms is not a reason to spin");
        for _ in 0..Margin::KEPT {
            m.woke(150_000);
        }
        assert_eq!(m.ns, 175_000, "wake-ups that are all late move it");
        for _ in 0..Margin::KEPT {
            m.woke(0);
        }
        assert_eq!(m.ns, SPIN_NS, "on-time wake-ups bring it back");
        for _ in 0..Margin::KEPT {
            m.woke(60_000_000);
        }
        assert_eq!(m.ns, MAX_SPIN_NS, "never beyond the bound");
    }
}
