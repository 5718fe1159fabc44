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

#[tokio::test]
async fn many_connections_interleave_on_one_ring() {
    let Some(ring) = ring() else { return };
    let addr = echo_server();
    let mut streams = Vec::new();
    for _ in 0..40 {
        streams.push(connect(&ring, addr).await);
    }
    let mut calls = tokio::task::JoinSet::new();
    for (i, mut s) in streams.into_iter().enumerate() {
        calls.spawn(async move {
            for call in 0..50u32 {
                let message = format!("connection {i} call {call}");
                s.write_all(message.as_bytes()).await.unwrap();
                let mut back = vec![0u8; message.len()];
                s.read_exact(&mut back).await.unwrap();
                assert_eq!(back, message.as_bytes());
            }
        });
    }
    while let Some(done) = calls.join_next().await {
        done.unwrap();
    }
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
