//! Answers that arrive in pieces: frames split across reads, one frame larger than the buffer the
//! reads share (read.rs), and many whole frames in one read.

use super::*;

/// A raw server: after each request's HEADERS, answers with `:status: 200` and `sizes` DATA
/// frames (the last one ending the stream), written `piece` bytes at a time.
async fn piecemeal_server(listener: TcpListener, calls: usize, sizes: Vec<usize>, piece: usize) {
    let (mut tcp, _) = listener.accept().await.unwrap();
    let mut preface = vec![0u8; frame::PREFACE.len()];
    tcp.read_exact(&mut preface).await.unwrap();
    let mut settings = Vec::new();
    frame::put_settings(&mut settings, &[]);
    tcp.write_all(&settings).await.unwrap();
    for _ in 0..calls {
        let stream = next_request(&mut tcp).await;
        let mut out = Vec::new();
        frame::put_headers(&mut out, stream, &[0x88], false, frame::DEFAULT_MAX_FRAME as usize);
        for (i, &size) in sizes.iter().enumerate() {
            frame::put_data(&mut out, stream, &vec![b'x'; size], i + 1 == sizes.len());
        }
        for part in out.chunks(piece) {
            tcp.write_all(part).await.unwrap();
            tcp.flush().await.unwrap();
            tokio::task::yield_now().await; // the client may read each piece on its own
        }
    }
    let mut rest = Vec::new();
    let _ = tcp.read_to_end(&mut rest).await;
}

async fn answers_in_pieces(calls: usize, sizes: Vec<usize>, piece: usize) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let total: usize = sizes.iter().sum();
    let server = tokio::spawn(piecemeal_server(listener, calls, sizes, piece));
    let conn = connect(addr).await;
    for _ in 0..calls {
        let (answer, received) = call(&conn, "/", &Bytes::new()).await;
        assert_eq!(answer.unwrap().status, 200);
        assert_eq!(received, total);
    }
    drop(conn);
    server.await.unwrap();
}

#[tokio::test]
async fn frames_split_across_many_reads_are_put_together() {
    answers_in_pieces(3, vec![1_000, 20_000, 3], 7).await;
}

#[tokio::test]
async fn a_frame_larger_than_the_shared_read_buffer_arrives_whole() {
    // 300,000 bytes in one DATA frame (we allow frames of 1 MiB), then a small one.
    answers_in_pieces(2, vec![300_000, 10], 7_001).await;
}

#[tokio::test]
async fn many_whole_frames_in_one_read_are_all_applied() {
    answers_in_pieces(2, vec![100; 500], 1 << 20).await;
}
