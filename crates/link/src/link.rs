//! A link: two namespaces made for it (client side, server side), a TUN device in each with an
//! address of 198.18.0.0/15, and the forwarder between them. Dropping it stops the forwarder and
//! removes both namespaces; a killed run's leftovers are removed by the next link made.

use crate::device::make_end;
use crate::forwarder::{self, Shared};
use crate::lane::LaneCounts;
use crate::namespace::Namespace;
use crate::spec::LinkSpec;
use serde::Serialize;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The client side's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The server side's address: where servers across the link listen.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

pub struct Link {
    pub client: Namespace,
    pub server: Namespace,
    spec: Mutex<LinkSpec>,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
    made: Instant,
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
    /// Needs root. Leftovers of callbench runs that died are removed first.
    pub fn create(spec: &LinkSpec, cpus: &[usize]) -> Result<Link, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("an emulated network link needs root (it makes network namespaces and TUN devices): \
                        run callbench as root"
                .into());
        }
        crate::cleanup::remove_leftovers();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = format!(
            "{}{}-{}",
            crate::cleanup::PREFIX,
            crate::cleanup::owner_tag(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let client = Namespace::create(&format!("{base}-client"))?;
        let server = Namespace::create(&format!("{base}-server"))?;
        let client_end = make_end(&client, CLIENT_ADDR, 30, spec.mtu)?;
        let server_end = make_end(&server, SERVER_ADDR, 30, spec.mtu)?;
        let (shared, thread) = forwarder::start(client_end, server_end, spec, cpus)?;
        Ok(Link { client, server, spec: Mutex::new(spec.clone()), shared, thread: Some(thread), made: Instant::now() })
    }

    /// New settings for the packets from now on (a sweep's next step).
    pub fn set_spec(&self, spec: &LinkSpec) {
        *self.spec.lock().unwrap_or_else(|e| e.into_inner()) = spec.clone();
        self.shared.set_spec(spec.clone());
    }

    pub fn spec(&self) -> LinkSpec {
        self.spec.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn stats(&self) -> LinkStats {
        let [up, down] = self.shared.counts();
        LinkStats {
            up,
            down,
            write_errors: self.shared.write_errors(),
            forwarder_cpu_ns: self.shared.cpu_ns().unwrap_or(0),
            wall_ns: self.made.elapsed().as_nanos() as u64,
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.shared.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // The namespaces go as their fields drop.
    }
}
