use super::ring::{RECV_SIZE, SEND_MAX};
use super::*;
use io_uring::IoUring;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::pin::Pin;
use std::task::{Context, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};

/// Whether this kernel refuses io_uring: ENOSYS (not built in) or EPERM (`kernel.io_uring_disabled`,
/// a seccomp filter), with a line saying so, once. The epoll path is then the only one, and it is
/// tested everywhere else.
pub(super) fn refused_here() -> bool {
    let Err(e) = io_uring::IoUring::new(2) else { return false };
    if !matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) {
        return false;
    }
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| eprintln!("io_uring tests skipped: this kernel refuses io_uring ({e})"));
    true
}

/// The ring a run gets (after the self-check), or None where this kernel refuses io_uring. Where
/// io_uring is there, a ring that cannot be made fails the test: a green run has then exercised it.
pub(super) fn ring_with(receive: Receive) -> Option<RingOwner> {
    if refused_here() {
        return None;
    }
    Some(RingOwner::start_with(receive).unwrap_or_else(|e| panic!("io_uring is allowed here, yet: {e}")))
}

/// A ring of the kind asked for, whatever the self-check chose: the kinds a run does not get on
/// this kernel are still correct, only slower, and other kernels run them.
pub(super) fn ring_as(receive: Receive, defer: bool) -> Option<RingOwner> {
    if refused_here() {
        return None;
    }
    Some(RingOwner::start_as(receive, defer).unwrap_or_else(|e| panic!("io_uring is allowed here, yet: {e}")))
}

/// Every kind of ring: one that defers completions (where the kernel makes one), one whose
/// completions interrupt the thread, and one whose streams receive single-shot.
fn rings() -> Vec<RingOwner> {
    let deferred = kernel_defers().then(|| ring_as(Receive::default(), true)).flatten();
    let interrupting = ring_as(Receive::default(), false);
    let single_shot = ring_with(Receive::SingleShot);
    [deferred, interrupting, single_shot].into_iter().flatten().collect()
}

/// A ring with few, small provided buffers, or None where io_uring or buffer rings are missing.
fn small_buffers_ring(count: u16, size: u32) -> Option<RingOwner> {
    let ring = ring_with(Receive::Multishot(BufferShape { count, size }))?;
    if !receives_multishot(&ring) {
        eprintln!("skipped: this kernel has no provided-buffer rings");
        return None;
    }
    Some(ring)
}

/// Whether this ring's receives are multishot (and the kernel has not refused one).
fn receives_multishot(ring: &RingOwner) -> bool {
    ring.ring.multishot_flags().is_some()
}

fn out_of_buffers(ring: &RingOwner) -> u64 {
    ring.ring.with(|state| state.out_of_buffers)
}

fn buffers_outstanding(ring: &RingOwner) -> Option<usize> {
    ring.ring.with(|state| state.buffers.as_ref().map(ProvidedBuffers::outstanding))
}

fn pattern(size: usize, seed: usize) -> Vec<u8> {
    (0..size).map(|i| ((i + seed) * 7 % 251) as u8).collect()
}

/// Sends `message` and reads it back (concurrently: it may not fit the sockets' buffers); the
/// reading starts once `pile_up` bytes of the answer wait unread in the socket.
async fn echo(stream: &mut UringStream, message: &[u8], pile_up: usize) -> Vec<u8> {
    let fd = stream.raw_fd();
    let (mut reader, mut writer) = tokio::io::split(stream);
    let write = async {
        writer.write_all(message).await.unwrap();
        writer.flush().await.unwrap();
    };
    let read = async {
        // No receive takes the answer before the first read: it stays in the socket.
        assert!(eventually(|| unread_in_socket(fd) >= pile_up).await, "{pile_up} bytes never came back");
        let mut back = vec![0u8; message.len()];
        reader.read_exact(&mut back).await.unwrap();
        back
    };
    tokio::join!(write, read).1
}

/// An echo server on a thread: every connection gets back what it sends, until it closes.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
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

/// Bytes the kernel holds in socket `fd`, not yet taken by any receive.
fn unread_in_socket(fd: std::os::fd::RawFd) -> usize {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which lives across the call.
    let ok = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) } == 0;
    if ok {
        unread.max(0) as usize
    } else {
        0
    }
}

async fn connect(ring: &RingOwner, addr: std::net::SocketAddr) -> UringStream {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    ring.stream(tcp.into_std().unwrap()).unwrap()
}

#[tokio::test]
async fn echoes_small_and_large_messages() {
    for ring in rings() {
        let mut stream = connect(&ring, echo_server()).await;
        for size in [1usize, 100, RECV_SIZE - 1, RECV_SIZE + 1, SEND_MAX + 12_345, 1 << 20] {
            let message = pattern(size, 0);
            let back = echo(&mut stream, &message, 0).await;
            assert!(back == message, "{size} bytes came back changed");
        }
    }
}

/// `connections` streams on `ring`, each making `calls` echo calls at once with the others.
async fn interleave(ring: &RingOwner, connections: usize, calls: u32) {
    let addr = echo_server();
    let mut streams = Vec::new();
    for _ in 0..connections {
        streams.push(connect(ring, addr).await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, mut s) in streams.into_iter().enumerate() {
        tasks.spawn(async move {
            for call in 0..calls {
                let message = format!("connection {i} call {call}");
                s.write_all(message.as_bytes()).await.unwrap();
                let mut back = vec![0u8; message.len()];
                s.read_exact(&mut back).await.unwrap();
                assert_eq!(back, message.as_bytes());
            }
        });
    }
    // Bounded: a completion the ring failed to collect would otherwise hang the test.
    let all = async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all).await.expect("every call answered");
}

/// Whether this kernel gives a ring SINGLE_ISSUER + DEFER_TASKRUN (6.1).
fn kernel_defers() -> bool {
    IoUring::<io_uring::squeue::Entry>::builder().setup_single_issuer().setup_defer_taskrun().build(2).is_ok()
}

#[tokio::test]
async fn many_connections_interleave_on_one_ring() {
    let Some(chosen) = ring_with(Receive::default()) else { return };
    // The single-threaded runtime's ring defers completions to its enters where the kernel can
    // and the self-check found them prompt.
    let check = probe::check().as_ref().unwrap();
    assert_eq!(chosen.deferred(), kernel_defers() && check.defer(), "{}", check.describe());
    drop(chosen);
    for ring in rings() {
        interleave(&ring, 40, 50).await;
    }
}

#[tokio::test]
async fn more_answers_at_once_than_one_enter_posts() {
    for ring in rings() {
        more_answers_at_once(ring).await;
    }
}

async fn more_answers_at_once(ring: RingOwner) {
    // 300 answers arrive while the runtime's thread is blocked, and nothing else happens on the
    // ring after: the eventfd is signalled once, and an enter may post only some (6.13+ runs at
    // most 20 deferred completions per pass). The ring must enter until all are posted, or the
    // reader stalls.
    const STREAMS: usize = 300;
    let (addr, answers) = answering_server(STREAMS);
    let mut streams = Vec::new();
    for _ in 0..STREAMS {
        let mut stream = connect(&ring, addr).await;
        // A receive queued before the send: it is in the kernel before the answer comes.
        let mut first = [0u8; 4];
        let mut cx = Context::from_waker(Waker::noop());
        let polled = Pin::new(&mut stream).poll_read(&mut cx, &mut ReadBuf::new(&mut first));
        assert!(polled.is_pending(), "an answer before the call");
        stream.write_all(b"ping").await.unwrap();
        streams.push(stream);
    }
    for stream in &mut streams {
        stream.flush().await.unwrap(); // sent: the receives queued before went in the same enter
    }
    for _ in 0..STREAMS {
        answers.recv().unwrap();
    }
    let read_all = async {
        for stream in &mut streams {
            let mut back = [0u8; 4];
            stream.read_exact(&mut back).await.unwrap();
            assert_eq!(&back, b"ping");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read_all).await.expect("every answer read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_threaded_runtime_gets_a_ring_any_thread_may_enter() {
    for ring in rings() {
        assert!(!ring.deferred(), "SINGLE_ISSUER would refuse the other worker's submissions");
        interleave(&ring, 40, 50).await;
    }
}

#[tokio::test]
async fn a_closed_peer_reads_as_the_end_and_writes_fail() {
    for ring in rings() {
        a_closed_peer_reads_as_the_end(ring).await;
    }
}

async fn a_closed_peer_reads_as_the_end(ring: RingOwner) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.write_all(b"bye").unwrap();
        // Closed: the client's first send after it meets a reset, the next ones fail.
    });
    let mut stream = connect(&ring, addr).await;
    let mut got = Vec::new();
    stream.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, b"bye");
    server.join().unwrap();
    let mut failed = false;
    for _ in 0..100 {
        if stream.write_all(b"hello?").await.is_err() || stream.flush().await.is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "writes to a closed peer kept succeeding");
}

#[tokio::test]
async fn dropping_a_stream_mid_receive_frees_it_and_the_ring_goes_on() {
    for ring in rings() {
        dropping_mid_receive(ring).await;
    }
}

async fn dropping_mid_receive(ring: RingOwner) {
    let addr = echo_server();
    let mut waiting = connect(&ring, addr).await;
    let mut buf = [0u8; 4];
    // A receive is queued and left in flight: nothing will ever answer it.
    let pending = tokio::time::timeout(Duration::from_millis(20), waiting.read(&mut buf)).await;
    assert!(pending.is_err(), "a read with nothing sent returned");
    drop(waiting);
    let mut other = connect(&ring, addr).await;
    other.write_all(b"ping").await.unwrap();
    other.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"ping");
    drop(other);
    // The ring itself ends with nothing left in flight (its drop waits for those completions).
    drop(ring);
}

#[tokio::test]
async fn receives_are_multishot_where_the_kernel_has_them() {
    let Some(ring) = ring_with(Receive::default()) else { return };
    let mut stream = connect(&ring, echo_server()).await;
    assert_eq!(echo(&mut stream, b"ping", 0).await, b"ping");
    if kernel_at_least(6, 0) {
        assert!(receives_multishot(&ring), "this kernel has multishot receives, yet they are not used");
        assert!(stream.receiving_multishot(), "the stream's receive is not multishot");
    }
    let Some(single) = ring_with(Receive::SingleShot) else { return };
    assert!(!receives_multishot(&single));
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release.trim().split(|c: char| !c.is_ascii_digit()).map(|n| n.parse::<u32>().unwrap_or(0));
    (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) >= (major, minor)
}

#[tokio::test]
async fn a_refused_multishot_receive_turns_the_ring_to_single_shot() {
    let Some(ring) = small_buffers_ring(16, 1024) else { return };
    // MSG_WAITALL makes the kernel refuse a multishot receive (EINVAL), as one before 6.0 does.
    ring.ring.with(|state| state.multishot_flags = libc::MSG_WAITALL);
    let mut stream = connect(&ring, echo_server()).await;
    let message = pattern(50_000, 3);
    assert!(echo(&mut stream, &message, 0).await == message);
    assert!(!receives_multishot(&ring), "the ring still receives multishot after a refusal");
    assert!(!stream.receiving_multishot());
    // A stream opened afterwards receives single-shot from its first read.
    let mut later = connect(&ring, echo_server()).await;
    assert_eq!(echo(&mut later, b"later", 0).await, b"later");
    assert!(!later.receiving_multishot());
}

#[tokio::test]
async fn many_messages_larger_than_a_provided_buffer_come_whole() {
    let Some(ring) = small_buffers_ring(16, 1024) else { return };
    let mut stream = connect(&ring, echo_server()).await;
    for call in 0..200 {
        let message = pattern(1000 + call * 37, call);
        let back = echo(&mut stream, &message, 0).await;
        assert!(back == message, "call {call}: {} bytes came back changed", message.len());
    }
    assert_eq!(buffers_outstanding(&ring), Some(0));
}

#[tokio::test]
async fn more_unread_data_than_buffers_rearms_and_loses_nothing() {
    // 8 buffers of 1 KiB, 256 KiB coming back unread for a while: the receive runs out (ENOBUFS),
    // then the reads take up the rest through the next receives.
    let Some(ring) = small_buffers_ring(8, 1024) else { return };
    let mut stream = connect(&ring, echo_server()).await;
    for round in 0..3 {
        let message = pattern(256 * 1024, round);
        // Twice what the buffers hold waits in the socket when the reads begin.
        let back = echo(&mut stream, &message, 16 * 1024).await;
        assert!(back == message, "round {round}: the bytes came back changed");
    }
    assert!(out_of_buffers(&ring) > 0, "the receive never ran out of buffers");
    assert_eq!(buffers_outstanding(&ring), Some(0));
    // Multishot again after the single-shot read that followed ENOBUFS.
    assert_eq!(echo(&mut stream, b"again", 0).await, b"again");
    assert!(stream.receiving_multishot(), "the receive was not re-armed as multishot");
}

#[tokio::test]
async fn a_stream_dropped_holding_buffers_gives_them_back_while_others_go_on() {
    let Some(ring) = small_buffers_ring(16, 1024) else { return };
    let addr = echo_server();
    let mut others = Vec::new();
    for _ in 0..4 {
        others.push(connect(&ring, addr).await);
    }
    let mut dropped = connect(&ring, addr).await;
    // Its receive is armed and takes buffers for an answer never read.
    dropped.write_all(&pattern(8 * 1024, 1)).await.unwrap();
    let mut first = [0u8; 1];
    dropped.read_exact(&mut first).await.unwrap();
    let holding = eventually(|| buffers_outstanding(&ring).unwrap() > 0).await;
    assert!(holding, "the unread answer holds no buffers");
    drop(dropped);
    let mut calls = tokio::task::JoinSet::new();
    for (i, mut stream) in others.into_iter().enumerate() {
        calls.spawn(async move {
            for call in 0..20 {
                let message = pattern(3000 + call, i);
                assert!(echo(&mut stream, &message, 0).await == message);
            }
        });
    }
    while let Some(done) = calls.join_next().await {
        done.unwrap();
    }
    // The streams are gone; their receives' last completions come as the ring's task reaps.
    let settled = eventually(|| ring.ring.with(|state| state.in_flight) == 0).await;
    assert!(settled, "the dropped streams' receives never ended");
    assert_eq!(buffers_outstanding(&ring), Some(0), "buffers were not given back");
    drop(ring);
}

/// Whether `condition` comes to hold (looked at every 10 ms, for at most 30 s: it is a state of
/// the kernel or of the ring's task, which tells no one when it changes).
async fn eventually(condition: impl Fn() -> bool) -> bool {
    for _ in 0..3000 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}

#[test]
fn available_says_why_not_when_it_is_not() {
    if let Err(e) = available() {
        assert!(matches!(e, crate::EngineError::Machine(_)), "{e:?}");
        let e = e.to_string();
        let refused = e.starts_with("io_uring is not available: ");
        assert!(refused || e.starts_with("io_uring stalls on this kernel"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// A server on a thread that answers each connection's 4 bytes with them, tells `answered`,
/// and waits for the client to close.
pub(super) fn answering_server(connections: usize) -> (std::net::SocketAddr, std::sync::mpsc::Receiver<()>) {
    let (answered, answers) = std::sync::mpsc::channel();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(connections) {
            let (mut conn, answered) = (conn.unwrap(), answered.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4];
                conn.read_exact(&mut buf).unwrap();
                conn.write_all(&buf).unwrap();
                answered.send(()).unwrap();
                let _ = conn.read(&mut buf);
            });
        }
    });
    (addr, answers)
}
