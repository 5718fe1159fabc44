//! `callbench phases FILE`: every connection in a packet capture (`serve --network … --pcap`, or
//! any pcap of raw IP packets) as DNS, TCP connect, TLS handshake and its exchanges, in
//! milliseconds and in round trips. The file is read as a stream, record by record.

use anyhow::{anyhow, Result};
use callbench_link::phases::{self, Phases};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// A pcap file of raw IP packets (link type RAW, as `callbench serve --network SPEC --pcap FILE` writes).
    file: PathBuf,
    /// Count round trips of this RTT (e.g. the link's `40ms`) [default: the median TCP connect in the capture].
    #[arg(long, value_parser = callbench_load::parse::duration)]
    rtt: Option<Duration>,
    /// Output: text or json.
    #[arg(short = 'o', long = "output", default_value = "text", value_parser = ["text", "json"])]
    output: String,
}

pub fn run(args: Args) -> Result<i32> {
    let phases = phases::read_file(&args.file, args.rtt).map_err(|e| anyhow!(e))?;
    if args.output == "json" {
        println!("{}", serde_json::to_string_pretty(&phases)?);
    } else {
        print!("{}", text(&phases));
    }
    Ok(0)
}

/// One line for the capture (and one if its file is cut), then one per connection and one per exchange.
pub fn text(p: &Phases) -> String {
    let mut out = String::new();
    if let Some(at) = p.cut_at_byte {
        let _ = writeln!(out, "the file is cut inside a packet at byte {at}: the phases of the packets before it");
    }
    let rtt = match (p.rtt_us, p.rtt_measured) {
        (Some(r), true) => format!("a round trip is {} (the median TCP connect)", ms(r)),
        (Some(r), false) => format!("a round trip is {} (given)", ms(r)),
        (None, _) => "no round trip to count in (no TCP connect in the capture)".to_string(),
    };
    let _ = writeln!(
        out,
        "{} packets, {} connections, {} DNS lookups; {rtt}",
        p.packets,
        p.connections.len(),
        p.lookups.len()
    );
    let trips = |us: f64| p.rtt_us.filter(|r| *r > 0.0).map_or(String::new(), |r| format!(" ({:.2} RTT)", us / r));
    let phase =
        |name: &str, us: Option<f64>| us.map_or(String::new(), |us| format!("  {name} {}{}", ms(us), trips(us)));
    for (i, c) in p.connections.iter().enumerate() {
        let tls = c.tls.as_ref().map_or(String::new(), |t| {
            let version = t.version.map_or("TLS".to_string(), |v| format!("TLS {v}"));
            phase(&version, t.handshake_us)
        });
        let _ = writeln!(
            out,
            "#{:<3} {} → {} at {}:{}{}{tls}{}",
            i + 1,
            c.client,
            c.server,
            ms(c.at_us),
            phase("DNS", c.dns_us),
            phase("TCP connect", c.tcp_connect_us),
            c.ended_by.map_or(String::new(), |who| format!("  (closed by the {who})")),
        );
        for e in &c.exchanges {
            let _ = writeln!(
                out,
                "       {} B out at {} →{}{}  {} B back",
                e.request_bytes,
                ms(e.request_at_us),
                phase("first byte", e.first_byte_us),
                phase("last byte", e.last_byte_us),
                e.answer_bytes
            );
        }
    }
    out
}

fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1e3)
}
