//! An emulated network link between a client and a server on this machine, in the spirit of
//! Mahimahi's delay and link shells: two network namespaces the run makes, joined through TUN
//! devices by a forwarder that holds each packet until its time, so every round trip pays — the
//! TCP handshake, TLS flights, HTTP/2 SETTINGS, window updates and retransmissions alike.
//!
//! - [`LinkError`]: why something could not be done, by kind (a bad spec, not root, the kernel's refusal,
//!   a target the route rule refuses, a file, a program across the link);
//! - [`LinkSpec`]: what the link does (`rtt=40ms,bandwidth=20mbit,loss=0.01`), parsed once;
//! - [`Link`]: the namespaces, devices and forwarder (or a veth pair: [`Link::direct`]); removed when dropped;
//! - [`counters`]: what the client's namespace itself counted (IP bytes, TCP connections opened);
//! - [`route::check_target`]: the one way past the loopback rule (198.18.0.0/15, over our link);
//! - [`cleanup`]: nothing left behind, even by a killed run;
//! - [`lab::Lab`]: hosts in namespaces of their own on one bridge (several machines on this one);
//! - [`dns::NameServer`]: a name server on the server side, so a client's lookup crosses the link;
//! - [`front::FrontEnd`]: a command (a TLS-terminating proxy) on the server side, between the link and the server;
//! - [`probe::ping_pong`]: what the link really costs, measured with real sockets;
//! - [`pcap`] and [`phases`]: what the link carried, written as a capture, and each call of any client
//!   read back from it as DNS, TCP connect, TLS handshake and request → answer, in round trips.

pub mod cleanup;
pub mod counters;
pub mod device;
pub mod dns;
mod error;
pub mod forwarder;
pub mod front;
pub mod lab;
pub mod lane;
mod link;
pub mod namespace;
mod netlink;
pub mod pcap;
pub mod phases;
pub mod probe;
pub mod route;
pub mod spec;
mod sys;
mod units;
pub mod veth;

pub use error::LinkError;
pub use link::{Link, LinkStats, CLIENT_ADDR, SERVER_ADDR};
pub use spec::{LaneSpec, LinkSpec, QueueLimit};
