//! How this kernel wakes a thread asleep in epoll_wait when the answer that a ring's receive waits
//! for arrives, for each way of setting up the ring and of watching it: the measurement behind
//! docs/src/load.md#io_uring-on-any-kernel, with the raw `io-uring` crate and nothing of the
//! engine's on top. A peer thread sends one byte once the measured thread sleeps.
//!
//! `cargo run --release -p callbench-engine --example uring_wakeups [ROUNDS]`

use io_uring::{opcode, types, IoUring};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Give up on a wake-up after this long.
const LIMIT: Duration = Duration::from_millis(200);

#[derive(Clone, Copy, PartialEq)]
enum Setup {
    /// No setup flags: task work interrupts the thread.
    Plain,
    /// COOP_TASKRUN + TASKRUN_FLAG.
    Cooperative,
    /// SINGLE_ISSUER + DEFER_TASKRUN + TASKRUN_FLAG.
    Deferred,
}

#[derive(Clone, Copy, PartialEq)]
enum Watched {
    Ring,
    Eventfd,
    Socket,
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    println!("kernel {}", std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim());
    println!("{:<28} {:>12} {:>12} {:>10}", "ring, watched in epoll", "median", "max", "woken");
    for (name, setup, watched) in [
        ("plain, ring fd", Setup::Plain, Watched::Ring),
        ("coop_taskrun, ring fd", Setup::Cooperative, Watched::Ring),
        ("defer_taskrun, ring fd", Setup::Deferred, Watched::Ring),
        ("defer_taskrun, eventfd", Setup::Deferred, Watched::Eventfd),
        ("defer_taskrun, socket", Setup::Deferred, Watched::Socket),
    ] {
        match measure(setup, watched, rounds) {
            Ok((mut times, woken)) => {
                times.sort();
                let (median, max) = (times[times.len() / 2], times[times.len() - 1]);
                println!("{name:<28} {:>12.1?} {:>12.1?} {:>7}/{rounds}", median, max, woken);
            }
            Err(e) => println!("{name:<28} {e}"),
        }
    }
}

/// Each round: a one-byte receive armed, the peer's send once this thread sleeps, and the time
/// from that send until epoll_wait returned the watched descriptor (LIMIT if it never did).
fn measure(setup: Setup, watched: Watched, rounds: usize) -> std::io::Result<(Vec<Duration>, usize)> {
    let mut builder = IoUring::builder();
    match setup {
        Setup::Plain => {}
        Setup::Cooperative => {
            builder.setup_coop_taskrun().setup_taskrun_flag();
        }
        Setup::Deferred => {
            builder.setup_single_issuer().setup_defer_taskrun().setup_taskrun_flag();
        }
    }
    let mut ring: IoUring = builder.build(8)?;
    // SAFETY: eventfd has no memory arguments.
    let eventfd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if watched == Watched::Eventfd {
        ring.submitter().register_eventfd(eventfd)?;
    }
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?)?;
    let (theirs, _) = listener.accept()?;
    let fd = match watched {
        Watched::Ring => ring.as_raw_fd(),
        Watched::Eventfd => eventfd,
        Watched::Socket => ours.as_raw_fd(),
    };
    // SAFETY: plain system calls on descriptors this function owns; `event` lives across them.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    let mut event = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLET) as u32, u64: 0 };
    unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &mut event) };
    let (mut times, mut woken) = (Vec::new(), 0);
    for _ in 0..rounds {
        let mut byte = [0u8; 1];
        let recv = opcode::Recv::new(types::Fd(ours.as_raw_fd()), byte.as_mut_ptr(), 1).build();
        // SAFETY: `byte` outlives the receive, which completes below.
        unsafe { ring.submission().push(&recv) }.expect("room for one entry");
        enter(&mut ring, setup, 0)?;
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into `count` from a non-blocking eventfd.
        unsafe { libc::read(eventfd, (&mut count as *mut u64).cast(), 8) };
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() };
        let mut peer = theirs.try_clone()?;
        let sender = std::thread::spawn(move || {
            asleep(tid);
            let at = Instant::now();
            peer.write_all(b"a").map(|()| at)
        });
        let started = Instant::now();
        let woke = loop {
            let left = LIMIT.saturating_sub(started.elapsed());
            if left.is_zero() {
                break None;
            }
            // SAFETY: room for one event.
            let n = unsafe { libc::epoll_wait(epoll, &mut event, 1, left.as_millis() as i32 + 1) };
            if n == 1 {
                break Some(Instant::now());
            }
        };
        let sent = sender.join().expect("the peer thread")?;
        woken += usize::from(woke.is_some());
        times.push(woke.map_or(LIMIT, |w| w.saturating_duration_since(sent)));
        enter(&mut ring, setup, 1)?;
        assert_eq!(ring.completion().next().map(|c| c.result()), Some(1), "the byte came");
    }
    // SAFETY: both were opened above and are not used after.
    unsafe { libc::close(epoll) };
    unsafe { libc::close(eventfd) };
    Ok((times, woken))
}

fn enter(ring: &mut IoUring, setup: Setup, wait: usize) -> std::io::Result<usize> {
    if setup == Setup::Deferred {
        let queued = ring.submission().len() as u32;
        // SAFETY: no argument is passed.
        unsafe {
            ring.submitter().enter::<libc::sigset_t>(queued, wait as u32, io_uring::EnterFlags::GETEVENTS.bits(), None)
        }
    } else {
        ring.submit_and_wait(wait)
    }
}

/// Waits until thread `tid` of this process sleeps (bounded: a second).
fn asleep(tid: i32) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
        if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('S')) {
            return;
        }
        std::thread::yield_now();
    }
}
