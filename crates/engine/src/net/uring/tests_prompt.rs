//! Completions reaped without waiting for a timer or another wake-up: a one-connection ping-pong
//! over a ring against the same ping-pong over epoll, interleaved, judged by the ratio of their
//! medians (a stalled ring is hundreds of times slower; a busy machine slows both alike).

use super::tests::{ring_as, ring_with};
use super::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Round trips over each transport.
const PINGS: usize = 200;
/// A prompt ring's median round trip is within this many times epoll's.
const PROMPT: f64 = 5.0;
/// A ring the self-check turned down is at least this many times slower than epoll.
const STALLED: f64 = 3.0;
/// A round trip not back by then fails the test (a ring that never wakes).
const LIMIT: Duration = Duration::from_secs(5);

/// The threads whose sleep the echo server waits for: the runtime's (other tests may run beside
/// in the same process, under plain `cargo test`).
type Watched = Arc<Mutex<Vec<i32>>>;

fn this_thread() -> i32 {
    // SAFETY: gettid has no arguments.
    unsafe { libc::gettid() }
}

/// An echo server: one byte back for each byte, for every connection, until it closes; it
/// answers only once every `watched` thread sleeps, so that the answer must wake a thread waiting
/// for it (an answer that comes while the client still runs can be reaped by the client's own
/// next system call, and hide a ring that never tells of it).
fn echo_server(watched: Watched) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            conn.set_nodelay(true).unwrap();
            let watched = watched.clone();
            std::thread::spawn(move || {
                let mut byte = [0u8; 1];
                while matches!(conn.read(&mut byte), Ok(1)) {
                    asleep(&watched.lock().unwrap());
                    conn.write_all(&byte).unwrap();
                }
            });
        }
    });
    addr
}

/// Waits until every thread in `tids` sleeps or is gone (bounded: a second).
fn asleep(tids: &[i32]) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) && !tids.iter().all(|&tid| probe::sleeping(tid)) {
        std::thread::yield_now();
    }
}

async fn ping<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S) -> Duration {
    let started = Instant::now();
    let exchange = async {
        stream.write_all(b"p").await.unwrap();
        let mut back = [0u8; 1];
        stream.read_exact(&mut back).await.unwrap();
    };
    tokio::time::timeout(LIMIT, exchange).await.expect("the answer came back");
    started.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The ring's median round trip over epoll's, pinging both in turn on one connection each.
async fn ratio_to_epoll(ring: &RingOwner, watched: &Watched) -> f64 {
    let addr = echo_server(watched.clone());
    let mut epoll = tokio::net::TcpStream::connect(addr).await.unwrap();
    epoll.set_nodelay(true).unwrap();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let mut uring = ring.stream(tcp.into_std().unwrap()).unwrap();
    let (mut over_epoll, mut over_uring) = (Vec::new(), Vec::new());
    for _ in 0..PINGS {
        over_epoll.push(ping(&mut epoll).await);
        over_uring.push(ping(&mut uring).await);
    }
    median(over_uring).as_secs_f64() / median(over_epoll).as_secs_f64()
}

/// This (the current-thread runtime's) thread.
fn just_this_thread() -> Watched {
    Arc::new(Mutex::new(vec![this_thread()]))
}

#[tokio::test]
async fn the_ring_a_run_gets_reaps_every_completion_without_waiting() {
    let Some(ring) = ring_with(Receive::default()) else { return };
    let ratio = ratio_to_epoll(&ring, &just_this_thread()).await;
    let how = probe::check().as_ref().unwrap().describe();
    assert!(ratio < PROMPT, "io_uring's round trip is {ratio:.1}× epoll's ({how})");
}

#[test]
fn a_multi_threaded_runtimes_ring_reaps_without_waiting() {
    let workers = Watched::default();
    let noted = workers.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || noted.lock().unwrap().push(this_thread()))
        .build()
        .unwrap();
    runtime.block_on(async {
        let Some(ring) = ring_with(Receive::default()) else { return };
        let ratio = ratio_to_epoll(&ring, &workers).await;
        assert!(ratio < PROMPT, "io_uring's round trip is {ratio:.1}× epoll's");
    });
}

#[tokio::test]
async fn the_self_check_turns_down_a_kind_of_ring_exactly_when_it_waits() {
    // Both kinds, whatever this kernel does: each one the self-check accepts is prompt, and each
    // one it turns down is slow here too (not a false alarm that would cost io_uring for nothing).
    let Some(interrupting) = ring_as(Receive::default(), false) else { return };
    let check = match probe::check() {
        Ok(check) => check.clone(),
        Err(why) => {
            assert!(matches!(why, probe::Unusable::Stalls(_)), "{why}");
            let ratio = ratio_to_epoll(&interrupting, &just_this_thread()).await;
            assert!(ratio > STALLED, "turned down, yet {ratio:.1}× epoll's round trip: {why}");
            return;
        }
    };
    let mut kinds = vec![("interrupting", interrupting, check.interrupting)];
    if let Some(trial) = check.deferred {
        kinds.push(("deferred", ring_as(Receive::default(), true).unwrap(), trial));
    }
    for (kind, ring, trial) in kinds {
        let ratio = ratio_to_epoll(&ring, &just_this_thread()).await;
        let what = format!("{kind}: {ratio:.1}× epoll's round trip; self-check: {}", check.describe());
        if trial.prompt {
            assert!(ratio < PROMPT, "{what}");
        } else {
            assert!(ratio > STALLED, "{what}");
        }
    }
}

#[test]
fn the_self_check_says_how_in_one_line() {
    if super::tests::refused_here() {
        return;
    }
    let line = describe();
    assert!(line.starts_with("io_uring"), "{line}");
    assert!(line.contains("over epoll"), "the figures: {line}");
    assert!(!line.contains('\n'), "{line}");
}
