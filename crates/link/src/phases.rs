//! Each connection of any client, read from a capture of its packets (the link's, or any pcap of
//! raw IP packets): its DNS lookup, TCP connect, TLS handshake and then its exchanges (a flight of
//! the client's bytes and the server's flight that follows), timed as the client saw them. The same
//! method for every client, callbench's engine or a black box, so phases compare across tools in
//! round trips of the measured RTT (the median TCP connect) or of one given.
//!
//! A flight is the payload one side sends before the other sends any: pure ACKs do not end one.
//! A TLS handshake is the client's flights that start with a plaintext handshake record (22): it
//! ends where the client's first flight that does not (its Finished and request in TLS 1.3, its
//! request after the server's Finished in TLS 1.2) starts. Over HTTP/2 many calls share a flight,
//! so an exchange is a turn of the conversation, one call only when one call is in flight.

mod order;
pub mod packet;

use crate::pcap::{self, Packet};
use packet::{is_client_hello, server_hello_version, Parsed, ACK, FIN, RST, SYN};
use serde::Serialize;
use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::path::Path;
use std::time::Duration;

/// What a capture holds, phase by phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phases {
    pub packets: usize,
    /// Where the file ends inside a packet's record (a capture cut short): the phases are those of
    /// the packets before it.
    pub cut_at_byte: Option<u64>,
    /// The round trip the phases are counted in (µs): the median TCP connect, unless given.
    pub rtt_us: Option<f64>,
    pub rtt_measured: bool,
    pub lookups: Vec<Lookup>,
    pub connections: Vec<Connection>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lookup {
    pub name: Option<String>,
    /// When the query was sent, from the capture's first packet (µs).
    pub at_us: f64,
    /// Until its answer (None: no answer in the capture).
    pub took_us: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Connection {
    pub client: String,
    pub server: String,
    /// The client's SYN, from the capture's first packet (µs).
    pub at_us: f64,
    /// The lookup answered last before this connection's SYN (and after the previous one's).
    pub dns_us: Option<f64>,
    /// SYN to SYN-ACK.
    pub tcp_connect_us: Option<f64>,
    pub tls: Option<Tls>,
    pub exchanges: Vec<Exchange>,
    /// Who sent the first FIN or RST: `client` or `server`.
    pub ended_by: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tls {
    /// From the ServerHello (None: not in the capture, or cut by the snap length).
    pub version: Option<&'static str>,
    /// From the ClientHello to the client's first flight after the handshake.
    pub handshake_us: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exchange {
    /// When the client's flight started (µs from the capture's first packet).
    pub request_at_us: f64,
    pub request_bytes: u64,
    /// From the request to the server's first byte after it, and to its last before the client's next flight.
    pub first_byte_us: Option<f64>,
    pub last_byte_us: Option<f64>,
    pub answer_bytes: u64,
}

/// One side's run of payload.
struct Flight {
    from_client: bool,
    start: f64,
    end: f64,
    bytes: u64,
    /// The first segment's captured payload.
    first: Vec<u8>,
}

struct Open {
    client: SocketAddrV4,
    server: SocketAddrV4,
    at: f64,
    syn_ack: Option<f64>,
    flights: Vec<Flight>,
    ended_by: Option<&'static str>,
}

/// The phases of every connection that starts (with its SYN) in `packets`, taken in time order
/// (within [`order::WINDOW`] of the order given); `rtt` counts them in a given round trip instead
/// of the measured one. The packets are read one at a time: what is kept is each connection's
/// state and each flight's first segment, not the packets.
pub fn read(packets: impl IntoIterator<Item = Packet>, rtt: Option<Duration>) -> Phases {
    let mut reading = Reading::default();
    for p in order::in_time_order(packets.into_iter()) {
        reading.packet(&p);
    }
    reading.finish(rtt)
}

/// [`read`] from a pcap file, streamed record by record. A file that ends inside a record (a run
/// killed while writing it) gives the phases of the packets before it, and says where it is cut.
/// Errors are [`crate::LinkError::Io`] (reading the file failed) or [`crate::LinkError::Invalid`] (not a
/// capture, a damaged record), each naming the file.
pub fn read_file(path: &Path, rtt: Option<Duration>) -> Result<Phases, crate::LinkError> {
    let mut reader = pcap::Reader::open(path)?;
    let mut error = None;
    let packets = std::iter::from_fn(|| match reader.next_packet() {
        Ok(packet) => packet,
        Err(e) => {
            error = Some(e);
            None
        }
    });
    let mut phases = read(packets, rtt);
    if let Some(e) = error {
        return Err(e.map_message(|m| format!("{}: {m}", path.display())));
    }
    phases.cut_at_byte = reader.cut_at();
    Ok(phases)
}

/// What the packets read so far made of the capture.
#[derive(Default)]
struct Reading {
    packets: usize,
    /// The first packet's time: the phases' zero.
    first: Option<Duration>,
    open: Vec<Open>,
    by_key: HashMap<(SocketAddrV4, SocketAddrV4), usize>,
    queries: HashMap<(SocketAddrV4, u16), usize>,
    /// And when each was answered.
    lookups: Vec<(Lookup, Option<f64>)>,
}

impl Reading {
    fn packet(&mut self, p: &Packet) {
        self.packets += 1;
        let first = *self.first.get_or_insert(p.at);
        let t = p.at.saturating_sub(first).as_secs_f64() * 1e6;
        match packet::parse(&p.bytes) {
            Parsed::Tcp(s) => self.segment(t, &s),
            Parsed::Dns(d) if !d.response => {
                self.queries.insert((d.from, d.id), self.lookups.len());
                self.lookups.push((Lookup { name: d.name, at_us: t, took_us: None }, None));
            }
            Parsed::Dns(d) => {
                if let Some(&i) = self.queries.get(&(d.to, d.id)) {
                    let (lookup, answered) = &mut self.lookups[i];
                    if answered.is_none() {
                        *answered = Some(t);
                        lookup.took_us = Some(t - lookup.at_us);
                    }
                }
            }
            Parsed::Other => {}
        }
    }

    fn segment(&mut self, t: f64, s: &packet::Segment) {
        if s.flags & SYN != 0 && s.flags & ACK == 0 {
            let resent = self.by_key.get(&(s.from, s.to)).is_some_and(|&i| self.open[i].syn_ack.is_none());
            if resent {
                return; // the SYN again: the connect is timed from the first
            }
            self.by_key.insert((s.from, s.to), self.open.len());
            self.open.push(Open {
                client: s.from,
                server: s.to,
                at: t,
                syn_ack: None,
                flights: vec![],
                ended_by: None,
            });
            return;
        }
        let (index, from_client) = match (self.by_key.get(&(s.from, s.to)), self.by_key.get(&(s.to, s.from))) {
            (Some(&i), _) => (i, true),
            (None, Some(&i)) => (i, false),
            (None, None) => return, // began before the capture
        };
        let conn = &mut self.open[index];
        if s.flags & SYN != 0 && !from_client {
            conn.syn_ack.get_or_insert(t);
        }
        if s.len > 0 {
            match conn.flights.last_mut() {
                Some(f) if f.from_client == from_client => {
                    f.end = t;
                    f.bytes += s.len as u64;
                }
                _ => conn.flights.push(Flight {
                    from_client,
                    start: t,
                    end: t,
                    bytes: s.len as u64,
                    first: s.payload.to_vec(),
                }),
            }
        }
        if s.flags & (FIN | RST) != 0 {
            conn.ended_by.get_or_insert(if from_client { "client" } else { "server" });
        }
    }

    fn finish(self, rtt: Option<Duration>) -> Phases {
        let mut connections: Vec<Connection> = self.open.into_iter().map(connection).collect();
        attach_lookups(&mut connections, &self.lookups);
        let mut connects: Vec<f64> = connections.iter().filter_map(|c| c.tcp_connect_us).collect();
        connects.sort_by(f64::total_cmp);
        let n = connects.len();
        let measured = (n > 0).then(|| (connects[(n - 1) / 2] + connects[n / 2]) / 2.0);
        Phases {
            packets: self.packets,
            cut_at_byte: None,
            rtt_us: rtt.map(|r| r.as_secs_f64() * 1e6).or(measured),
            rtt_measured: rtt.is_none(),
            lookups: self.lookups.into_iter().map(|(l, _)| l).collect(),
            connections,
        }
    }
}

fn connection(mut c: Open) -> Connection {
    let connect = c.syn_ack.map(|t| t - c.at);
    let flights = &causal(std::mem::take(&mut c.flights), connect);
    let hello = flights.first().filter(|f| f.from_client && is_client_hello(&f.first));
    // TLS: the exchanges start at the client's first flight that is not a plaintext handshake record.
    let (tls, from) = match hello {
        None => (None, 0),
        Some(hello) => {
            let version = flights.iter().find(|f| !f.from_client).and_then(|f| server_hello_version(&f.first));
            let after = flights.iter().enumerate().skip(1).find(|(_, f)| f.from_client && f.first.first() != Some(&22));
            let handshake_us = after.map(|(_, f)| f.start - hello.start);
            (Some(Tls { version, handshake_us }), after.map_or(flights.len(), |(i, _)| i))
        }
    };
    let mut exchanges = Vec::new();
    let mut i = from;
    while i < flights.len() {
        let request = &flights[i];
        if !request.from_client {
            i += 1; // the server spoke first: no request of the client's to time it from
            continue;
        }
        let answer = flights.get(i + 1);
        exchanges.push(Exchange {
            request_at_us: request.start,
            request_bytes: request.bytes,
            first_byte_us: answer.map(|a| a.start - request.start),
            last_byte_us: answer.map(|a| a.end - request.start),
            answer_bytes: answer.map_or(0, |a| a.bytes),
        });
        i += 2;
    }
    Connection {
        client: c.client.to_string(),
        server: c.server.to_string(),
        at_us: c.at,
        dns_us: None,
        tcp_connect_us: c.syn_ack.map(|t| t - c.at),
        tls,
        exchanges,
        ended_by: c.ended_by,
    }
}

/// Flights as cause and effect: server bytes that reach the client less than half its round trip
/// (`connect`: SYN to SYN-ACK, the path's floor) after the client's latest flight began cannot answer
/// it: they are the end of the server's flight before (HTTP/2 SETTINGS sent right behind a TLS
/// Finished), and the client flights on either side of them are one.
fn causal(flights: Vec<Flight>, connect: Option<f64>) -> Vec<Flight> {
    let Some(floor) = connect else { return flights };
    let mut out: Vec<Flight> = Vec::new();
    for f in flights {
        if let [.., before, last] = out.as_mut_slice() {
            if !f.from_client && last.from_client && !before.from_client && f.start - last.start < floor / 2.0 {
                before.end = before.end.max(f.end);
                before.bytes += f.bytes;
                continue;
            }
        }
        match out.last_mut() {
            Some(last) if last.from_client == f.from_client => {
                last.end = f.end;
                last.bytes += f.bytes;
            }
            _ => out.push(f),
        }
    }
    out
}

/// Gives each connection the lookup answered last before its SYN and after the previous SYN.
fn attach_lookups(connections: &mut [Connection], lookups: &[(Lookup, Option<f64>)]) {
    let mut since = f64::NEG_INFINITY;
    for c in connections.iter_mut() {
        let before = lookups.iter().filter(|(_, answered)| answered.is_some_and(|t| t > since && t <= c.at_us));
        c.dns_us = before.max_by(|a, b| a.1.unwrap().total_cmp(&b.1.unwrap())).and_then(|(l, _)| l.took_us);
        since = c.at_us;
    }
}

#[cfg(test)]
mod large_capture_tests;
#[cfg(test)]
mod tests;
