//! What a namespace's own kernel counted: the IP bytes and packets through its link interface in
//! each direction, and the TCP connections it opened. A client alone in its namespace is counted
//! from outside, whatever it is (callbench's engine, wrk, a Python interpreter) and whatever it
//! says about itself.
//!
//! The files are opened once from a thread inside the namespace: a /proc/…/net file keeps the
//! namespace it was opened in, so reading it again later, from any thread, reads that namespace.

use crate::namespace::Namespace;
use crate::LinkError;
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

/// The namespace's counters at one moment (monotonic, since the namespace was made).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// IP bytes (headers included) and packets sent out of the link interface.
    pub ip_bytes_out: u64,
    pub packets_out: u64,
    /// IP bytes and packets received on it.
    pub ip_bytes_in: u64,
    pub packets_in: u64,
    /// TCP connections this namespace opened (connect() calls that sent a SYN: `ActiveOpens`).
    pub tcp_active_opens: u64,
    /// TCP segments it sent again.
    pub tcp_retransmitted: u64,
}

impl Counts {
    /// What happened between `earlier` and this.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            ip_bytes_out: self.ip_bytes_out.saturating_sub(earlier.ip_bytes_out),
            packets_out: self.packets_out.saturating_sub(earlier.packets_out),
            ip_bytes_in: self.ip_bytes_in.saturating_sub(earlier.ip_bytes_in),
            packets_in: self.packets_in.saturating_sub(earlier.packets_in),
            tcp_active_opens: self.tcp_active_opens.saturating_sub(earlier.tcp_active_opens),
            tcp_retransmitted: self.tcp_retransmitted.saturating_sub(earlier.tcp_retransmitted),
        }
    }
}

/// The counter files of one namespace, for one interface of it.
#[derive(Debug)]
pub struct NamespaceCounters {
    interface: String,
    /// Bytes of link-layer header each packet carries in the device's count (14 on a veth, whose
    /// count is of Ethernet frames; 0 on a TUN device, whose packets are IP packets).
    link_header: u64,
    dev: Mutex<File>,
    snmp: Mutex<File>,
}

impl NamespaceCounters {
    /// Opens the counters of `ns` for its `interface` (the kernel's: errors are [`LinkError::Kernel`]).
    pub fn open(ns: &Namespace, interface: &str, link_header: u64) -> Result<NamespaceCounters, LinkError> {
        let (dev, snmp) = ns.run(|| {
            let open =
                |p: &str| File::open(p).map_err(|e| LinkError::Kernel(format!("cannot open {p} in {}: {e}", ns.name)));
            Ok((open("/proc/thread-self/net/dev")?, open("/proc/thread-self/net/snmp")?))
        })?;
        let counters = NamespaceCounters {
            interface: interface.to_string(),
            link_header,
            dev: Mutex::new(dev),
            snmp: Mutex::new(snmp),
        };
        counters.read()?; // the interface is there, and both files parse
        Ok(counters)
    }

    /// The counters now.
    pub fn read(&self) -> Result<Counts, LinkError> {
        let dev = read_again(&self.dev)?;
        let snmp = read_again(&self.snmp)?;
        let d = device_counts(&dev, &self.interface).ok_or_else(|| {
            LinkError::Kernel(format!("no interface {} in the namespace's device counters", self.interface))
        })?;
        let tcp = tcp_counts(&snmp)
            .ok_or_else(|| LinkError::Kernel("no TCP counters in the namespace's /proc/net/snmp".into()))?;
        Ok(Counts {
            ip_bytes_out: d.tx_bytes.saturating_sub(d.tx_packets * self.link_header),
            packets_out: d.tx_packets,
            ip_bytes_in: d.rx_bytes.saturating_sub(d.rx_packets * self.link_header),
            packets_in: d.rx_packets,
            tcp_active_opens: tcp.active_opens,
            tcp_retransmitted: tcp.retransmitted,
        })
    }
}

fn read_again(file: &Mutex<File>) -> Result<String, LinkError> {
    let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = String::new();
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.read_to_string(&mut text))
        .map_err(|e| LinkError::Kernel(format!("counters: {e}")))?;
    Ok(text)
}

#[derive(Debug, PartialEq)]
struct DeviceCounts {
    rx_bytes: u64,
    rx_packets: u64,
    tx_bytes: u64,
    tx_packets: u64,
}

/// The line of `interface` in /proc/net/dev: `name: rx_bytes rx_packets … (8 fields) tx_bytes tx_packets …`.
fn device_counts(text: &str, interface: &str) -> Option<DeviceCounts> {
    text.lines().find_map(|line| {
        let (name, fields) = line.split_once(':')?;
        if name.trim() != interface {
            return None;
        }
        let n: Vec<u64> = fields.split_whitespace().map(|f| f.parse().ok()).collect::<Option<_>>()?;
        (n.len() >= 10).then(|| DeviceCounts { rx_bytes: n[0], rx_packets: n[1], tx_bytes: n[8], tx_packets: n[9] })
    })
}

#[derive(Debug, PartialEq)]
struct TcpCounts {
    active_opens: u64,
    retransmitted: u64,
}

/// /proc/net/snmp's two `Tcp:` lines, names then values.
fn tcp_counts(text: &str) -> Option<TcpCounts> {
    let mut lines = text.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let field = |wanted: &str| -> Option<u64> {
        let at = names.split_whitespace().position(|n| n == wanted)?;
        values.split_whitespace().nth(at)?.parse().ok()
    };
    Some(TcpCounts { active_opens: field("ActiveOpens")?, retransmitted: field("RetransSegs")? })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:     120       2    0    0    0     0          0         0      120       2    0    0    0     0       0          0
cb-link: 5000      40    0    0    0     0          0         0     7000      50    0    0    0     0       0          0
";

    const SNMP: &str = "Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 90
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 12 0 0 0 3 400 410 5 0 1 0
Udp: InDatagrams NoPorts
Udp: 0 0
";

    #[test]
    fn an_interface_line_gives_both_directions() {
        let d = device_counts(DEV, "cb-link").unwrap();
        assert_eq!(d, DeviceCounts { rx_bytes: 5000, rx_packets: 40, tx_bytes: 7000, tx_packets: 50 });
        assert_eq!(device_counts(DEV, "lo").unwrap().tx_bytes, 120);
        assert_eq!(device_counts(DEV, "eth0"), None);
        assert_eq!(device_counts(DEV, "link"), None, "a name is matched whole");
    }

    #[test]
    fn tcp_counters_are_read_by_name() {
        assert_eq!(tcp_counts(SNMP), Some(TcpCounts { active_opens: 12, retransmitted: 5 }));
        assert_eq!(tcp_counts("Tcp: ActiveOpens\n"), None, "no values line");
        assert_eq!(tcp_counts("Udp: InDatagrams\nUdp: 0\n"), None);
    }

    #[test]
    fn differences_never_go_below_zero() {
        let a = Counts { ip_bytes_out: 10, packets_out: 1, tcp_active_opens: 2, ..Counts::default() };
        let b = Counts { ip_bytes_out: 25, packets_out: 3, tcp_active_opens: 2, ..Counts::default() };
        assert_eq!(b.since(&a).ip_bytes_out, 15);
        assert_eq!(b.since(&a).packets_out, 2);
        assert_eq!(a.since(&b), Counts::default());
    }
}
