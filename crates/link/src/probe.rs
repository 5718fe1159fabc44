//! What a small exchange pays the link, measured with real sockets: a TCP connect and round trips
//! of 64 bytes from the client namespace to an echo in the server namespace. At `rtt=0` this is
//! the link's own cost (two TUN devices and the forwarder), recorded with every result.

use crate::link::{Link, SERVER_ADDR};
use crate::LinkError;
use serde::Serialize;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PingPong {
    /// Time of the TCP connect (SYN to SYN-ACK), µs.
    pub connect_us: f64,
    /// Each round trip's time, µs, in order.
    pub round_trips_us: Vec<f64>,
}

impl PingPong {
    pub fn median_us(&self) -> f64 {
        let mut v = self.round_trips_us.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
}

/// `round_trips` exchanges over one fresh connection across `link` (every call bounded by 10 s): a
/// socket the kernel will not give is [`LinkError::Kernel`], an exchange that fails [`LinkError::Service`].
pub fn ping_pong(link: &Link, round_trips: usize) -> Result<PingPong, LinkError> {
    let listener: TcpListener = link.server.run(|| {
        TcpListener::bind((SERVER_ADDR, 0))
            .map_err(|e| LinkError::Kernel(format!("cannot listen in the server namespace: {e}")))
    })?;
    let port = listener.local_addr().map_err(|e| LinkError::Kernel(e.to_string()))?.port();
    let echo = std::thread::spawn(move || -> Result<(), String> {
        let (mut s, _) = listener.accept().map_err(|e| format!("echo accept: {e}"))?;
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let mut buf = [0u8; 64];
        loop {
            match s.read_exact(&mut buf) {
                Ok(()) => s.write_all(&buf).map_err(|e| format!("echo write: {e}"))?,
                Err(_) => return Ok(()), // the client closed
            }
        }
    });
    // The socket is made (and timed) on a thread in the client namespace; it stays there.
    let (mut stream, connect_us) = link.client.run(|| {
        let started = Instant::now();
        let s = TcpStream::connect_timeout(&(SERVER_ADDR, port).into(), Duration::from_secs(10))
            .map_err(|e| LinkError::Service(format!("cannot connect across the link: {e}")))?;
        Ok((s, started.elapsed().as_secs_f64() * 1e6))
    })?;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut out = Vec::with_capacity(round_trips);
    let mut buf = [7u8; 64];
    for _ in 0..round_trips {
        let t = Instant::now();
        stream.write_all(&buf).map_err(|e| LinkError::Service(format!("ping: {e}")))?;
        stream.read_exact(&mut buf).map_err(|e| LinkError::Service(format!("pong: {e}")))?;
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(stream);
    echo.join().map_err(|_| LinkError::Service("the echo thread panicked".into()))?.map_err(LinkError::Service)?;
    Ok(PingPong { connect_us, round_trips_us: out })
}
