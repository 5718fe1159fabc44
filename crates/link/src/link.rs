//! A link: two namespaces made for it (client side, server side), a TUN device in each with an
//! address of 198.18.0.0/15, and the forwarder between them — or, direct, a veth pair. Dropping it
//! stops the forwarder and removes both namespaces; a killed run's leftovers go with the next link.

use crate::counters::NamespaceCounters;
use crate::device::{make_end, IFNAME};
use crate::forwarder::{self, Shared};
use crate::lane::LaneCounts;
use crate::namespace::Namespace;
use crate::pcap;
use crate::spec::LinkSpec;
use crate::LinkError;
use serde::Serialize;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The client side's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The server side's address: where servers across the link listen.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

pub struct Link {
    pub client: Namespace,
    pub server: Namespace,
    /// The forwarder between TUN devices; None on a direct path (a veth pair, see [`Link::direct`]).
    emulated: Option<Emulated>,
    /// The client namespace's own counters of its interface and its TCP connections.
    counters: Arc<NamespaceCounters>,
    made: Instant,
}

struct Emulated {
    spec: Mutex<LinkSpec>,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the link carried and what its forwarder cost, since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LinkStats {
    /// Client → server.
    pub up: LaneCounts,
    /// Server → client.
    pub down: LaneCounts,
    /// Packets the far TUN device would not take.
    pub write_errors: u64,
    /// CPU time of the forwarder thread, ns.
    pub forwarder_cpu_ns: u64,
    /// Time since the link was made, ns.
    pub wall_ns: u64,
}

impl LinkStats {
    /// What happened between `earlier` and this.
    pub fn since(&self, earlier: &LinkStats) -> LinkStats {
        let lane = |a: LaneCounts, b: LaneCounts| LaneCounts {
            packets: a.packets - b.packets,
            bytes: a.bytes - b.bytes,
            lost: a.lost - b.lost,
            queue_drops: a.queue_drops - b.queue_drops,
            max_queue: a.max_queue,
        };
        LinkStats {
            up: lane(self.up, earlier.up),
            down: lane(self.down, earlier.down),
            write_errors: self.write_errors - earlier.write_errors,
            forwarder_cpu_ns: self.forwarder_cpu_ns.saturating_sub(earlier.forwarder_cpu_ns),
            wall_ns: self.wall_ns - earlier.wall_ns,
        }
    }

    /// The share of one CPU the forwarder used (1.0: its core was saturated).
    pub fn forwarder_busy(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.forwarder_cpu_ns as f64 / self.wall_ns as f64
        }
    }
}

impl Link {
    /// Makes the namespaces, the devices and the forwarder (pinned to `cpus`; empty: unpinned).
    /// Needs root ([`LinkError::NotPermitted`]). Leftovers of callbench runs that died are removed first.
    pub fn create(spec: &LinkSpec, cpus: &[usize]) -> Result<Link, LinkError> {
        let (client, server) = namespaces("an emulated network link")?;
        let client_end = make_end(&client, CLIENT_ADDR, 30, spec.mtu)?;
        let server_end = make_end(&server, SERVER_ADDR, 30, spec.mtu)?;
        let (shared, thread) = forwarder::start(client_end, server_end, spec, cpus)?;
        // A TUN device's packets are IP packets: no link-layer header in its counts.
        let counters = Arc::new(NamespaceCounters::open(&client, IFNAME, 0)?);
        let emulated = Some(Emulated { spec: Mutex::new(spec.clone()), shared, thread: Some(thread) });
        Ok(Link { client, server, emulated, counters, made: Instant::now() })
    }

    /// The same two namespaces and addresses joined by a veth pair: no delay and no forwarder,
    /// for counting what a client sends and opens from outside it. Needs root.
    pub fn direct() -> Result<Link, LinkError> {
        let (client, server) = namespaces("counting a client's connections and bytes outside it")?;
        crate::veth::make_pair(&client, &server, CLIENT_ADDR, SERVER_ADDR, 30)?;
        let counters = Arc::new(NamespaceCounters::open(&client, IFNAME, crate::veth::ETHERNET_HEADER)?);
        Ok(Link { client, server, emulated: None, counters, made: Instant::now() })
    }

    /// Whether packets cross a forwarder that can delay them (else a direct veth pair).
    pub fn is_emulated(&self) -> bool {
        self.emulated.is_some()
    }

    /// The client namespace's counters, readable from any thread (an engine's edge hook).
    pub fn client_counters(&self) -> Arc<NamespaceCounters> {
        self.counters.clone()
    }

    /// New settings for the packets from now on (a sweep's next step). A direct path has none.
    pub fn set_spec(&self, spec: &LinkSpec) {
        if let Some(e) = &self.emulated {
            *e.spec.lock().unwrap_or_else(|e| e.into_inner()) = spec.clone();
            e.shared.set_spec(spec.clone());
        }
    }

    pub fn spec(&self) -> LinkSpec {
        match &self.emulated {
            Some(e) => e.spec.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            None => LinkSpec::transparent(),
        }
    }

    /// From now on, writes every packet as the client's side sees it into a pcap file at `path`
    /// (each cut to `snaplen` bytes, the file to `cap` bytes: see [`crate::pcap`]), until
    /// [`Link::end_capture`]. A direct path has no forwarder to see them: [`LinkError::Invalid`].
    pub fn start_capture(&self, path: &Path, snaplen: u32, cap: u64) -> Result<(), LinkError> {
        let Some(e) = &self.emulated else {
            return Err(LinkError::Invalid("a direct path (veth) has no forwarder to capture".into()));
        };
        let writer = pcap::Writer::create(path, snaplen, cap)
            .map_err(|err| LinkError::Io(format!("cannot write the capture {}: {err}", path.display())))?;
        e.shared.start_capture(writer);
        Ok(())
    }

    /// Ends the capture and waits until its file is written out and closed, `within` at most
    /// ([`pcap::FINISH_WITHIN`] is ample): what it holds ([`pcap::Written::cut`] says whether
    /// packets past its cap were left out), or why the file is cut (writing it failed, or did not
    /// finish in time: [`LinkError::Io`]).
    pub fn end_capture(&self, within: Duration) -> Result<pcap::Written, LinkError> {
        let Some(e) = &self.emulated else {
            return Err(LinkError::Invalid("a direct path (veth) has no capture".into()));
        };
        e.shared.end_capture(within)
    }

    /// What the forwarder did (all zero on a direct path).
    pub fn stats(&self) -> LinkStats {
        let wall_ns = self.made.elapsed().as_nanos() as u64;
        let Some(e) = &self.emulated else { return LinkStats { wall_ns, ..LinkStats::default() } };
        let [up, down] = e.shared.counts();
        LinkStats {
            up,
            down,
            write_errors: e.shared.write_errors(),
            forwarder_cpu_ns: e.shared.cpu_ns().unwrap_or(0),
            wall_ns,
        }
    }
}

/// The client and server namespaces of a new link, named after this run (root only).
fn namespaces(purpose: &str) -> Result<(Namespace, Namespace), LinkError> {
    let base = run_base(purpose)?;
    Ok((Namespace::create(&format!("{base}-client"))?, Namespace::create(&format!("{base}-server"))?))
}

/// `callbench-<owner>-<n>`: the start of the names of a new set of namespaces of this run, once
/// the caller is known to be root and dead runs' leftovers are gone.
pub(crate) fn run_base(purpose: &str) -> Result<String, LinkError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(LinkError::NotPermitted(format!(
            "{purpose} needs root (it makes network namespaces and network devices): run callbench as root"
        )));
    }
    crate::cleanup::remove_leftovers();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    Ok(format!("{}{}-{}", crate::cleanup::PREFIX, crate::cleanup::owner_tag(), NEXT.fetch_add(1, Ordering::Relaxed)))
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(e) = &mut self.emulated {
            e.shared.stop();
            if let Some(thread) = e.thread.take() {
                let _ = thread.join();
            }
        }
        // The namespaces go as their fields drop.
    }
}
