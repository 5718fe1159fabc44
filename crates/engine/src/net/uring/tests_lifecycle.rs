//! How rings and streams end: a stream left on a ring whose owner is gone (the HTTP/2 probe's
//! detached connection), a stream dropped off the ring's thread under SINGLE_ISSUER, and
//! deferred completions the kernel leaves for a later enter (DEFER_TASKRUN from 6.13 runs at
//! most 20 per enter).

use super::ring::State;
use super::tests::{answering_server, ring_with};
use super::*;
use io_uring::IoUring;
use io_uring::{opcode, squeue, types};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// How long a test waits for what must happen: generous, as the machine may be busy.
const DEADLINE: Duration = Duration::from_secs(30);

async fn connect(ring: &RingOwner, addr: SocketAddr) -> UringStream {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    ring.stream(tcp.into_std().unwrap()).unwrap()
}

/// Whether `condition` comes to hold within [`DEADLINE`] (looked at every 10 ms: a state of the
/// kernel, another thread or the ring's task, which tells no one when it changes).
async fn eventually(condition: impl Fn() -> bool) -> bool {
    let until = tokio::time::Instant::now() + DEADLINE;
    while tokio::time::Instant::now() < until {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}

fn with_state<R>(ring: &RingOwner, f: impl FnOnce(&mut State) -> R) -> R {
    ring.ring.with(f)
}

/// The other end of one connection, on a thread: keeps what it receives until the end (EOF),
/// and its socket open until the `Peer` is dropped (so no descriptor number is freed meanwhile).
struct Peer {
    addr: SocketAddr,
    received: Arc<Mutex<Option<Vec<u8>>>>,
    _release: std::sync::mpsc::Sender<()>,
}

impl Peer {
    fn start() -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(None));
        let kept = received.clone();
        let (release, released) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            // Bounded, so the thread ends even when the test fails.
            conn.set_read_timeout(Some(2 * DEADLINE)).unwrap();
            let mut all = Vec::new();
            let _ = conn.read_to_end(&mut all);
            *kept.lock().unwrap() = Some(all);
            let _ = released.recv();
        });
        Peer { addr, received, _release: release }
    }

    /// What the peer received, once its connection ended; None if it did not end in time.
    async fn received(&self) -> Option<Vec<u8>> {
        eventually(|| self.received.lock().unwrap().is_some()).await;
        self.received.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_stream_left_on_the_ring_ends_when_its_owner_drops() {
    for receive in [Receive::default(), Receive::SingleShot] {
        let Some(ring) = ring_with(receive) else { return };
        let peer = Peer::start();
        let mut stream = connect(&ring, peer.addr).await;
        let freed = Arc::downgrade(&ring.ring);
        let (go, went) = tokio::sync::oneshot::channel::<()>();
        let left = tokio::spawn(async move {
            let mut buf = [0u8; 16];
            // A receive in flight, as the probe's HTTP/2 task has, until the owner is gone.
            tokio::select! {
                biased;
                _ = went => {}
                _ = stream.read(&mut buf) => panic!("the peer sent nothing"),
            }
            // Then what that task does once its request handle is dropped: a GOAWAY, flushed.
            let _ = stream.write_all(b"GOAWAY").await;
            let _ = stream.flush().await;
            let _ = stream.read(&mut buf).await;
        });
        let armed = eventually(|| with_state(&ring, |s| s.in_flight == 1 && s.ring.submission().is_empty())).await;
        assert!(armed, "the receive was never submitted");
        drop(ring);
        go.send(()).unwrap();
        assert!(peer.received().await.is_some(), "the connection left on the ring never ended");
        tokio::time::timeout(DEADLINE, left).await.expect("the task left on the ring never ended").unwrap();
        assert!(eventually(|| freed.strong_count() == 0).await, "the ring outlived its owner and its streams");
    }
}

#[tokio::test]
async fn an_http2_probe_left_on_the_ring_ends_when_its_endpoint_drops() {
    if let Err(e) = available() {
        return eprintln!("skipped: {e}");
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let ended = Arc::new(AtomicBool::new(false));
    let (connected, handshaken) = tokio::sync::oneshot::channel();
    let server = tokio::spawn({
        let ended = ended.clone();
        async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut conn = h2::server::handshake(tcp).await.unwrap();
            connected.send(()).unwrap();
            while let Some(Ok(_)) = conn.accept().await {}
            ended.store(true, Ordering::SeqCst);
        }
    });
    let endpoint = crate::net::Endpoint::new("127.0.0.1", addr.port(), vec![addr], None).unwrap().with_io_uring(true);
    let send = crate::h2pool::probe(&endpoint, std::time::Duration::from_secs(10)).await.unwrap();
    handshaken.await.unwrap();
    let owner = endpoint.ring.get().unwrap().as_ref().unwrap();
    let freed = Arc::downgrade(&owner.ring);
    // As when building the gRPC target fails after the probe: the handle and the endpoint go
    // together, and the probe's connection task writes its GOAWAY after the ring's owner is gone.
    drop(send);
    drop(endpoint);
    tokio::time::timeout(DEADLINE, server).await.expect("the server's connection never ended").unwrap();
    assert!(ended.load(Ordering::SeqCst));
    assert!(eventually(|| freed.strong_count() == 0).await, "the ring outlived its endpoint");
}

#[tokio::test]
async fn a_stream_dropped_off_the_rings_thread_leaves_its_queued_send_to_the_ring() {
    let Some(ring) = ring_with(Receive::default()) else { return };
    if !ring.deferred() {
        return eprintln!("skipped: this kernel has no SINGLE_ISSUER rings, any thread may enter");
    }
    let (first, second) = (Peer::start(), Peer::start());
    let mut dropped = connect(&ring, first.addr).await;
    // A send queued and not submitted: the ring's task has not run since.
    let mut cx = Context::from_waker(Waker::noop());
    let queued = Pin::new(&mut dropped).poll_write(&mut cx, b"stale");
    assert!(matches!(queued, Poll::Ready(Ok(5))));
    assert!(!with_state(&ring, |s| s.ring.submission().is_empty()), "the send was submitted at once");
    // That thread may not enter: were the socket closed now, the next socket would take its
    // number (the lowest free one, once the numbers below are taken), and the ring's task would
    // submit the stale send on that one.
    let fd = dropped.raw_fd();
    let _fillers = fill_below(fd);
    std::thread::spawn(move || drop(dropped)).join().unwrap();
    // SAFETY: F_GETFD only reads the descriptor's flags.
    let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
    assert!(open, "the socket was closed while an entry naming it was still queued");
    let mut next = connect(&ring, second.addr).await;
    next.write_all(b"mine").await.unwrap();
    next.flush().await.unwrap();
    drop(next);
    assert_eq!(second.received().await.as_deref(), Some(&b"mine"[..]), "another stream's send came out here");
    // The dropped stream's peer sees the end; the shutdown cut its send.
    assert_eq!(first.received().await.as_deref(), Some(&b""[..]));
    let settled = eventually(|| with_state(&ring, |s| s.in_flight == 0 && s.parting.is_empty())).await;
    assert!(settled, "the dropped stream's socket or operations were never finished");
    let third = Peer::start();
    let mut later = connect(&ring, third.addr).await;
    later.write_all(b"later").await.unwrap();
    later.flush().await.unwrap();
    drop(later);
    assert_eq!(third.received().await.as_deref(), Some(&b"later"[..]));
}

/// Opens /dev/null until every descriptor number below `fd` is taken, so that the next one
/// opened after `fd` is closed gets `fd` (the kernel hands out the lowest free number).
fn fill_below(fd: std::os::fd::RawFd) -> Vec<std::fs::File> {
    let mut fillers = Vec::new();
    loop {
        let filler = std::fs::File::open("/dev/null").unwrap();
        if filler.as_raw_fd() > fd {
            return fillers;
        }
        fillers.push(filler);
    }
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release.trim().split(|c: char| !c.is_ascii_digit()).map(|n| n.parse::<u32>().unwrap_or(0));
    (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) >= (major, minor)
}

#[test]
fn the_kernel_sets_taskrun_when_an_enter_leaves_deferred_work() {
    // What the ring's task relies on (`State::enter_due`): after an enter that ran only part of
    // the deferred work, TASKRUN is set, whoever reaps the completions it posted.
    const SOCKETS: usize = 64;
    let builder =
        IoUring::<squeue::Entry>::builder().setup_single_issuer().setup_defer_taskrun().setup_taskrun_flag().build(128);
    let Ok(mut ring) = builder else { return eprintln!("skipped: this kernel has no DEFER_TASKRUN rings") };
    let pairs: Vec<(UnixStream, UnixStream)> = (0..SOCKETS).map(|_| UnixStream::pair().unwrap()).collect();
    let mut bufs = vec![[0u8; 1]; SOCKETS];
    for (i, ((ours, _), buf)) in pairs.iter().zip(&mut bufs).enumerate() {
        let entry = opcode::Recv::new(types::Fd(ours.as_raw_fd()), buf.as_mut_ptr(), 1).build().user_data(i as u64);
        // SAFETY: the buffer and the socket outlive the ring's use of them (all complete below).
        unsafe { ring.submission().push(&entry) }.unwrap();
    }
    ring.submit().unwrap();
    assert_eq!(ring.completion().len(), 0, "a receive ended before anything was sent");
    for (i, (_, theirs)) in pairs.iter().enumerate() {
        (&*theirs).write_all(&[i as u8]).unwrap();
    }
    // Every answer is deferred work now, posted only by this thread's enters.
    let getevents = io_uring::EnterFlags::GETEVENTS.bits();
    let (mut posted, mut first) = (0, None);
    for _ in 0..SOCKETS {
        // SAFETY: no argument is passed.
        unsafe { ring.submitter().enter::<libc::sigset_t>(0, 0, getevents, None) }.unwrap();
        posted += ring.completion().count();
        first.get_or_insert(posted);
        if posted == SOCKETS {
            break;
        }
        assert!(ring.submission().taskrun(), "{} answers left with no TASKRUN after an enter", SOCKETS - posted);
    }
    assert_eq!(posted, SOCKETS);
    if kernel_at_least(6, 13) {
        assert!(first < Some(SOCKETS), "one enter posted every answer: nothing was left to flag");
    }
    assert!(bufs.iter().enumerate().all(|(i, b)| b[0] == i as u8));
}

#[tokio::test]
async fn what_a_drops_enter_posted_and_another_stream_reaped_does_not_stall_the_rest() {
    // The sequence issue 40 feared: many answers wait as deferred work; a dropped stream's
    // enter posts some of them; another stream's read reaps those, so the ring's task reaps
    // none itself. What the kernel still holds must come without any other event.
    let Some(ring) = ring_with(Receive::default()) else { return };
    const STREAMS: usize = 64;
    let (addr, answers) = answering_server(STREAMS + 1);
    let mut streams = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..=STREAMS {
        let mut stream = connect(&ring, addr).await;
        let polled = Pin::new(&mut stream).poll_read(&mut cx, &mut ReadBuf::new(&mut [0u8; 4]));
        assert!(polled.is_pending(), "an answer before the call");
        stream.write_all(b"ping").await.unwrap();
        streams.push(stream);
    }
    for stream in &mut streams {
        stream.flush().await.unwrap();
    }
    // The thread blocks until every answer was sent: they all wait as deferred work.
    for _ in 0..=STREAMS {
        answers.recv().unwrap();
    }
    drop(streams.pop());
    let posted = with_state(&ring, |s| s.ring.completion().len());
    let mut got = [0u8; 4];
    let mut first = ReadBuf::new(&mut got);
    let _ = Pin::new(&mut streams[0]).poll_read(&mut cx, &mut first);
    let first = first.filled().len();
    if ring.deferred() {
        assert!(posted > 0, "the drop's enter posted nothing for another stream to reap");
        assert_eq!(with_state(&ring, |s| s.ring.completion().len()), 0, "the other stream's read reaped nothing");
    }
    let read_all = async {
        streams[0].read_exact(&mut got[first..]).await.unwrap();
        assert_eq!(&got, b"ping");
        for stream in &mut streams[1..] {
            let mut back = [0u8; 4];
            stream.read_exact(&mut back).await.unwrap();
            assert_eq!(&back, b"ping");
        }
    };
    tokio::time::timeout(DEADLINE, read_all).await.expect("every answer read");
}

/// An echo server on a thread: each connection gets back what it sends, until it closes.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = conn.read(&mut buf) {
                    if conn.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn many_streams_with_drops_among_their_calls_all_finish() {
    // No timeout on any call (as with `--timeout 0`): a completion the ring failed to collect
    // would hang its stream, which only the test's deadline ends.
    let Some(ring) = ring_with(Receive::default()) else { return };
    let ring = Arc::new(ring);
    let addr = echo_server();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..64 {
        let ring = ring.clone();
        tasks.spawn(async move {
            let mut stream = connect(&ring, addr).await;
            for call in 0..30 {
                if call % 7 == 6 {
                    // Dropped with a receive armed, among the other streams' calls.
                    stream = connect(&ring, addr).await;
                }
                let message = format!("stream {i} call {call}");
                stream.write_all(message.as_bytes()).await.unwrap();
                let mut back = vec![0u8; message.len()];
                stream.read_exact(&mut back).await.unwrap();
                assert_eq!(back, message.as_bytes());
            }
        });
    }
    let all = async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    };
    tokio::time::timeout(DEADLINE, all).await.expect("every call answered");
    let settled = eventually(|| ring.ring.with(|s| s.in_flight == 0 && s.ring.submission().is_empty())).await;
    assert!(settled, "the dropped streams' operations never ended");
}
