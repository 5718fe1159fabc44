//! One repetition's figures (`Cell::runs`): calls, latency, bytes, CPU on both sides, and what
//! was measured around it (interference, an emulated link, a peer tool's claims, a cluster).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One repetition's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunMetrics {
    pub calls_ok: u64,
    pub calls_errors: u64,
    /// Failed calls by kind (connect, timeout, http_503, grpc_14...).
    pub errors: BTreeMap<String, u64>,
    pub duration_s: f64,
    pub throughput_per_s: f64,
    pub latency_us: Option<Latency>,
    pub latency_uncorrected_us: Option<Latency>,
    pub rate_requested: Option<f64>,
    pub rate_achieved: Option<f64>,
    pub connections_opened: u64,
    /// Connections the server ended gracefully (HTTP/2 GOAWAY), and calls sent again because the
    /// server had not processed them: neither is an error.
    #[serde(default)]
    pub goaways: u64,
    /// Calls sent again because the server had not processed them (above a GOAWAY's
    /// last-stream-id, refused, or on a connection already closed).
    #[serde(default)]
    pub retries: u64,
    /// What the server said of the first call that failed with words (a gRPC status's
    /// grpc-message: `grpc_5: no such user`), warm-up included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
    pub connect_p50_us: Option<f64>,
    pub wire_sent_per_call: f64,
    pub wire_received_per_call: f64,
    pub payload_sent_per_call: f64,
    pub payload_received_per_call: f64,
    pub client_cpu_us_per_call: f64,
    /// Client CPU time over the run's wall time, in cores (1.0 = one core busy).
    pub client_cpu_cores: f64,
    pub server_cpu_us_per_call: Option<f64>,
    pub server_cpu_cores: Option<f64>,
    pub server_rss_peak_kib: Option<u64>,
    /// What else used the pinned CPUs during the measured window (None: not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<Interference>,
    /// Set when the interference passed the limits: the reason, with the figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
    /// The measured calls that opened their own connection, phase by phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdCalls>,
    /// The emulated link over the run, when the cell ran across one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkUse>,
    /// HTTP/3 runs of callbench's engine: what the client's QUIC loss recovery counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicUse>,
    /// A run of another load tool (wrk, ghz...): what it claimed and what was measured around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerRun>,
    /// What the client's own network namespace counted, when the experiment gave its clients one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<OutsideCounts>,
    /// The machines of a Ray cluster that made the calls together (`cluster` in the suite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRun>,
    /// A cache line's round trip between the first client and server CPUs, ns, before the run and
    /// after it: tens of ns when the hypervisor has them share a core, hundreds when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_round_trip_ns: Option<[f64; 2]>,
}

/// A repetition made by several machines together: the figures above are their merged ones
/// (histograms added, counts summed), these are each machine's share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClusterRun {
    /// The cluster's head, HOST:PORT.
    pub ray: String,
    pub workers: usize,
    /// The largest gap between the workers' first calls, ms.
    pub start_skew_ms: f64,
    /// Workers that fell behind their share, and why: the client side was the limit.
    pub behind_schedule: Vec<String>,
    pub per_worker: Vec<WorkerShare>,
    /// The earlier runs of this repetition, made again because their workers started further
    /// apart than the limit: why each was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remade_for_skew: Vec<String>,
}

/// One machine's share of a cluster's repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkerShare {
    pub name: String,
    /// The Ray node's address.
    pub address: String,
    /// Its execution segment, `FROM:TO` of the run.
    pub segment: String,
    pub calls_ok: u64,
    pub calls_errors: u64,
    pub throughput_per_s: f64,
    pub client_cpu_us_per_call: f64,
    /// Its first call after the common start, ms.
    pub start_late_ms: Option<f64>,
    /// How well its clock was known (half the fastest round trip to it), ms.
    pub clock_uncertainty_ms: Option<f64>,
}

/// Bytes and connections counted outside the client, by the kernel of the network namespace it
/// ran alone in: the same count for callbench's engine and for any other tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutsideCounts {
    /// IP bytes per call in each direction: headers, handshakes, ACKs and retransmissions included.
    pub ip_sent_per_call: f64,
    pub ip_received_per_call: f64,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// TCP connections the client opened over its whole run, warm-up included (the namespace's
    /// ActiveOpens).
    pub connections_opened: u64,
    pub retransmitted_segments: u64,
    /// The calls the per-call figures divide by, and who counted them: `server` (the calls it
    /// answered over the span) or `client` (the calls the client counted).
    pub calls: u64,
    /// server: the calls the server answered over the span; client: the calls the client counted.
    pub calls_counted_by: String,
    /// `run`: from before the client started to after it ended; `window`: callbench's measured
    /// window (after its warm-up), as its own wire bytes are.
    pub span: String,
}

/// One run of a peer load tool. The run's own figures (calls, throughput, latencies) are the
/// tool's claims; CPU and memory are measured from outside (wait4 of its process tree), and the
/// server's own count of the calls it answered is beside them where the server keeps one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerRun {
    pub tool: String,
    /// The exact command line it ran with.
    pub command: String,
    /// How it ended: `exit code 0`, `killed by signal 15`, and `(stopped past its time limit)`.
    pub exit: String,
    /// The latencies it reported, µs by name (`p50`, `p90`, `p95`, `p99`, `max`, `mean`).
    pub latency_us: BTreeMap<String, f64>,
    /// The calls the server says it answered during the run (None: the server keeps no count).
    pub server_answered: Option<u64>,
    /// The tool's process from start to end, and the largest resident set of its processes.
    pub wall_s: f64,
    pub rss_peak_kib: u64,
}

/// Calls that opened their own connection, split as curl's `-w` splits a transfer: medians (µs)
/// of the name lookup (a name looked up per connection), the TCP handshake, the TLS handshake, and the rest up to the answer's end. Over QUIC
/// (HTTP/3) the handshake is one phase, transport and TLS together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ColdCalls {
    pub calls: u64,
    /// A target named by a name looked up per connection only: the lookup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_lookup_p50_us: Option<f64>,
    /// TCP connections only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_connect_p50_us: Option<f64>,
    pub tls_handshake_p50_us: Option<f64>,
    /// QUIC connections only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic_handshake_p50_us: Option<f64>,
    pub rest_p50_us: f64,
}

/// What the emulated link's forwarder did during one run (warm-up included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LinkUse {
    /// The forwarder thread's CPU time over the run's wall time (1.0: its core was saturated).
    pub forwarder_cores: f64,
    pub packets: u64,
    /// Packets the link dropped: its loss, and its full queue.
    pub lost: u64,
    pub queue_drops: u64,
    /// Its loss by direction: packets from the client (up) and from the server (down).
    #[serde(default)]
    pub lost_up: u64,
    #[serde(default)]
    pub lost_down: u64,
}

/// What an HTTP/3 client's QUIC loss recovery counted over the measured window (RFC 9002): its
/// own packets (requests and acknowledgements), those it declared lost, and the times it cut its
/// congestion window. The server's packets are the server's to count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuicUse {
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub congestion_events: u64,
}

/// What else used the CPUs the client and the server were pinned to during one measured window:
/// every other process's CPU time by the CPU it ran on, read from before the run (and its
/// warm-up) to its end; where /proc does not show the whole machine (a container), /proc/stat per
/// CPU minus the client's and the server's own CPU time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interference {
    /// Share (0–1) of the client CPUs' time used by anything but callbench and the server.
    pub client_cpus_other: f64,
    /// Share (0–1) of the server CPUs' time used by anything but the server and callbench.
    pub server_cpus_other: f64,
    /// Share (0–1) of the pinned CPUs' time stolen by the hypervisor.
    pub steal: f64,
    /// Mean clock of the pinned CPUs in MHz over the window, where cpufreq is readable.
    pub cpu_mhz: Option<f64>,
    /// The server's context switches per call: voluntary (it waited) and involuntary (preempted).
    pub server_voluntary_switches_per_call: Option<f64>,
    pub server_involuntary_switches_per_call: Option<f64>,
}

/// Latency percentiles in µs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
    pub mean: f64,
}

impl RunMetrics {
    /// The value of one of [`super::METRICS`] in this run (None when the run does not have it).
    pub fn metric(&self, name: &str) -> Option<f64> {
        let lat = |f: fn(&Latency) -> f64| self.latency_us.as_ref().map(f);
        // A peer tool's latencies are the ones it reported; what it did not count is not there.
        let claimed = |k: &str| self.peer.as_ref().and_then(|p| p.latency_us.get(k).copied());
        // A tool's socket bytes are its own business; its connections are what its namespace counted.
        let peer = self.peer.is_some();
        let outside = self.outside.as_ref();
        match name {
            "throughput_per_s" => Some(self.throughput_per_s),
            "latency_p50_us" => lat(|l| l.p50).or_else(|| claimed("p50")),
            "latency_p90_us" => lat(|l| l.p90).or_else(|| claimed("p90")),
            "latency_p99_us" => lat(|l| l.p99).or_else(|| claimed("p99")),
            "latency_p99.9_us" => lat(|l| l.p99_9),
            "latency_mean_us" => lat(|l| l.mean).or_else(|| claimed("mean")),
            "wire_sent_per_call" | "wire_received_per_call" if peer => None,
            "connections_opened" if peer => outside.map(|o| o.connections_opened as f64),
            "ip_sent_per_call" => outside.map(|o| o.ip_sent_per_call),
            "ip_received_per_call" => outside.map(|o| o.ip_received_per_call),
            "client_cpu_us_per_call" => Some(self.client_cpu_us_per_call),
            "server_cpu_us_per_call" => self.server_cpu_us_per_call,
            "client_cpu_cores" => Some(self.client_cpu_cores),
            "server_cpu_cores" => self.server_cpu_cores,
            "server_rss_peak_kib" => self.server_rss_peak_kib.map(|v| v as f64),
            "wire_sent_per_call" => Some(self.wire_sent_per_call),
            "wire_received_per_call" => Some(self.wire_received_per_call),
            "rate_achieved" => self.rate_achieved,
            "connections_opened" => Some(self.connections_opened as f64),
            "duration_s" => Some(self.duration_s),
            // Wall time per call, from the count and the window: at concurrency 1 the mean time of
            // a call at full clock resolution (latencies are whole µs).
            "wall_us_per_call" => {
                let calls = self.calls_ok + self.calls_errors;
                (calls > 0).then(|| self.duration_s * 1e6 / calls as f64)
            }
            "cold_name_lookup_p50_us" => self.cold.and_then(|c| c.name_lookup_p50_us),
            "cold_tcp_connect_p50_us" => self.cold.and_then(|c| c.tcp_connect_p50_us),
            "cold_tls_handshake_p50_us" => self.cold.and_then(|c| c.tls_handshake_p50_us),
            "cold_quic_handshake_p50_us" => self.cold.and_then(|c| c.quic_handshake_p50_us),
            "cold_rest_p50_us" => self.cold.map(|c| c.rest_p50_us),
            "link_forwarder_cores" => self.link.map(|l| l.forwarder_cores),
            // A file from before the link counted each direction says only its total.
            "link_lost_up" => self.link.filter(|l| l.lost_up + l.lost_down == l.lost).map(|l| l.lost_up as f64),
            "link_lost_down" => self.link.filter(|l| l.lost_up + l.lost_down == l.lost).map(|l| l.lost_down as f64),
            // The client's namespace counts any client's TCP, callbench's or a peer's.
            "tcp_retransmitted" => outside.map(|o| o.retransmitted_segments as f64),
            "quic_packets_lost" => self.quic.map(|q| q.packets_lost as f64),
            "quic_congestion_events" => self.quic.map(|q| q.congestion_events as f64),
            _ => None,
        }
        .filter(|v| v.is_finite())
    }
}
