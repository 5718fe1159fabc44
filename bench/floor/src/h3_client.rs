//! HTTP/3 with nothing on top of quinn: callbench's own QUIC set-up (TLS 1.3, ALPN `h3`, its
//! windows), on each connection a control stream with an empty SETTINGS frame (RFC 9114 §6.2.1),
//! then per call a new bidirectional stream carrying one HEADERS frame prepared once (QPACK's
//! static table and literals, no dynamic table, no Huffman), finished at once. The answer's stream
//! is read to its end, its bytes counted and never parsed: no QPACK decoding, no frame checks. The
//! server's own unidirectional streams (its SETTINGS and QPACK streams) are left unread.

use crate::outcome::{Outcome, Plan, Window};
use bytes::Bytes;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The HEADERS frame of `GET path` to `authority` over https, as QPACK encodes it with the static
/// table only (RFC 9204 §4.5): `:method GET` and `:scheme https` by index, `:authority` and
/// `:path` as literals named by index.
pub fn get_frame(authority: &str, path: &str) -> Vec<u8> {
    let mut block = vec![0, 0]; // Required Insert Count 0, Base 0: no dynamic table
    block.push(0xC0 | 17); // indexed field line, static: :method GET
    block.push(0xC0 | 23); // :scheme https
    for (index, value) in [(0u8, authority), (1, path)] {
        put_int(&mut block, 4, 0x50, u64::from(index)); // literal with a static name reference
        put_int(&mut block, 7, 0x00, value.len() as u64); // not Huffman-coded
        block.extend_from_slice(value.as_bytes());
    }
    let mut frame = vec![];
    put_varint(&mut frame, 0x01); // HEADERS
    put_varint(&mut frame, block.len() as u64);
    frame.extend_from_slice(&block);
    frame
}

/// QPACK's prefixed integer (RFC 7541 §5.1): `bits` of the first byte, after `pattern`.
fn put_int(out: &mut Vec<u8>, bits: u32, pattern: u8, mut n: u64) {
    let max = (1u64 << bits) - 1;
    if n < max {
        out.push(pattern | n as u8);
        return;
    }
    out.push(pattern | max as u8);
    n -= max;
    while n >= 128 {
        out.push((n % 128) as u8 | 0x80);
        n /= 128;
    }
    out.push(n as u8);
}

/// QUIC's variable-length integer (RFC 9000 §16), for values below 2^30.
fn put_varint(out: &mut Vec<u8>, n: u64) {
    match n {
        0..64 => out.push(n as u8),
        64..16_384 => out.extend_from_slice(&(0x4000 | n as u16).to_be_bytes()),
        _ => out.extend_from_slice(&(0x8000_0000 | n as u32).to_be_bytes()),
    }
}

/// `streams` calls in flight on each of `connections` QUIC connections to `addr`, on one thread.
pub fn run(
    addr: SocketAddr,
    connections: usize,
    streams: usize,
    frame: Vec<u8>,
    config: quinn::ClientConfig,
    plan: &Plan,
) -> Result<Outcome, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let bind: SocketAddr = if addr.is_ipv4() { ([127, 0, 0, 1], 0).into() } else { "[::1]:0".parse().unwrap() };
        let mut endpoint =
            quinn::Endpoint::client(bind).map_err(|e| format!("cannot open a UDP socket for QUIC: {e}"))?;
        endpoint.set_default_client_config(config);
        let (mut opened, mut controls) = (vec![], vec![]);
        for _ in 0..connections {
            let (connection, control) = connect(&endpoint, addr).await?;
            opened.push(connection);
            controls.push(control); // open while the connection is used
        }
        let frame = Bytes::from(frame);
        let window = Rc::new(RefCell::new(Window::new(plan)));
        let mut tasks = vec![];
        for connection in &opened {
            for _ in 0..streams {
                let (connection, frame, window) = (connection.clone(), frame.clone(), window.clone());
                tasks.push(tokio::task::spawn_local(calls(connection, frame, window)));
            }
        }
        let mut failed = None;
        for task in tasks {
            if let Err(e) = task.await.map_err(|e| e.to_string()).and_then(|r| r) {
                failed.get_or_insert(e);
            }
        }
        for connection in &opened {
            connection.close(0u32.into(), b"");
        }
        drop(controls);
        // Bounded: a server that never acknowledges the close is not waited for long.
        let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
        match failed {
            Some(e) => Err(e),
            None => Ok(Rc::into_inner(window).expect("every task has ended").into_inner().finish()),
        }
    })
}

/// A QUIC connection, and its control stream with its SETTINGS sent.
async fn connect(
    endpoint: &quinn::Endpoint,
    addr: SocketAddr,
) -> Result<(quinn::Connection, quinn::SendStream), String> {
    let connecting =
        endpoint.connect(addr, &addr.ip().to_string()).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let connection = tokio::time::timeout(Duration::from_secs(5), connecting)
        .await
        .map_err(|_| format!("{addr}: no QUIC handshake within 5 s"))?
        .map_err(|e| format!("{addr}: QUIC handshake failed: {e}"))?;
    let mut control = connection.open_uni().await.map_err(|e| format!("{addr}: no control stream: {e}"))?;
    // Stream type 0x00 (control), then SETTINGS (type 0x04) with no settings. The stream stays
    // open for the connection's life: closing it is a connection error (RFC 9114 §6.2.1).
    control.write_all(&[0x00, 0x04, 0x00]).await.map_err(|e| format!("{addr}: cannot send SETTINGS: {e}"))?;
    Ok((connection, control))
}

/// One stream's calls, one after another, until the window is over.
async fn calls(connection: quinn::Connection, frame: Bytes, window: Rc<RefCell<Window>>) -> Result<(), String> {
    loop {
        let sent = Instant::now();
        let (mut send, mut recv) = connection.open_bi().await.map_err(|e| format!("cannot open a stream: {e}"))?;
        send.write_chunk(frame.clone()).await.map_err(|e| format!("cannot send the request: {e}"))?;
        send.finish().map_err(|e| format!("cannot end the request: {e}"))?;
        let mut received = 0;
        while let Some(chunk) =
            recv.read_chunk(usize::MAX, true).await.map_err(|e| format!("the answer failed: {e}"))?
        {
            received += chunk.bytes.len();
        }
        if received == 0 {
            return Err("the server ended a stream without an answer".into());
        }
        if !window.borrow_mut().answered(sent, Instant::now()) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_is_four_field_lines_of_the_static_table() {
        let frame = get_frame("127.0.0.1:4433", "/students");
        let block = [&[0x00, 0x00, 0xD1, 0xD7, 0x50, 14][..], b"127.0.0.1:4433", &[0x51, 9], b"/students"].concat();
        assert_eq!(frame[..2], [0x01, block.len() as u8]);
        assert_eq!(frame[2..], block[..]);
    }

    #[test]
    fn long_values_take_more_prefix_bytes() {
        let mut out = vec![];
        put_int(&mut out, 5, 0, 1337);
        assert_eq!(out, [0x1F, 0x9A, 0x0A]); // RFC 7541 §C.1.2's example
        let mut out = vec![];
        put_varint(&mut out, 494_878_333);
        assert_eq!(out, [0x9d, 0x7f, 0x3e, 0x7d]); // RFC 9000 §A.1's example
        let mut out = vec![];
        put_varint(&mut out, 15_293);
        assert_eq!(out, [0x7b, 0xbd]);
    }
}
