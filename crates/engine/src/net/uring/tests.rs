use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A ring, or None (and a line saying so) where this kernel does not allow io_uring: the epoll
/// path is then the only one, and it is tested everywhere else.
fn ring() -> Option<RingOwner> {
    match RingOwner::start() {
        Ok(ring) => Some(ring),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
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

async fn connect(ring: &RingOwner, addr: std::net::SocketAddr) -> UringStream {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    ring.stream(tcp.into_std().unwrap()).unwrap()
}

#[tokio::test]
async fn echoes_small_and_large_messages() {
    let Some(ring) = ring() else { return };
    let mut stream = connect(&ring, echo_server()).await;
    for size in [1usize, 100, RECV_SIZE - 1, RECV_SIZE + 1, SEND_MAX + 12_345, 1 << 20] {
        let message: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        // Written and read concurrently: a large message does not fit the sockets' buffers.
        let (mut reader, mut writer) = tokio::io::split(&mut stream);
        let write = async {
            writer.write_all(&message).await.unwrap();
            writer.flush().await.unwrap();
        };
        let mut back = vec![0u8; size];
        let read = reader.read_exact(&mut back);
        let ((), read) = tokio::join!(write, read);
        read.unwrap();
        assert!(back == message, "{size} bytes came back changed");
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
    let Some(ring) = ring() else { return };
    // The single-threaded runtime's ring defers completions to its enters where it can.
    assert_eq!(ring.deferred(), kernel_defers());
    interleave(&ring, 40, 50).await;
}

#[tokio::test]
async fn more_answers_at_once_than_one_enter_posts() {
    let Some(ring) = ring() else { return };
    // 300 answers arrive while the runtime's thread is blocked, and nothing else happens on the
    // ring after: the eventfd is signalled once, and an enter may post only some (6.13+ runs at
    // most 20 deferred completions per pass). The ring must enter until all are posted, or the
    // reader stalls.
    const STREAMS: usize = 300;
    let (answered, answers) = std::sync::mpsc::channel();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(STREAMS) {
            let (mut conn, answered) = (conn.unwrap(), answered.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4];
                conn.read_exact(&mut buf).unwrap();
                conn.write_all(&buf).unwrap();
                answered.send(()).unwrap();
                let _ = conn.read(&mut buf); // until the client closes
            });
        }
    });
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
    let Some(ring) = ring() else { return };
    assert!(!ring.deferred(), "SINGLE_ISSUER would refuse the other worker's submissions");
    interleave(&ring, 40, 50).await;
}

#[tokio::test]
async fn a_closed_peer_reads_as_the_end_and_writes_fail() {
    let Some(ring) = ring() else { return };
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
    let Some(ring) = ring() else { return };
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

#[test]
fn available_says_why_not_when_it_is_not() {
    if let Err(e) = available() {
        assert!(e.starts_with("io_uring is not available: "), "{e}");
    }
}
