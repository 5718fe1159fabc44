//! The link's two ends: a TUN device in each namespace (tun-rs), addressed and brought up over
//! netlink (crate::netlink), with the namespace's loopback up too.

use crate::namespace::Namespace;
use crate::netlink::Netlink;
use crate::LinkError;
use std::net::Ipv4Addr;
use tun_rs::SyncDevice;

/// The name of the link's interface in both namespaces (the route check looks for it).
pub const IFNAME: &str = "cb-link";

/// A TUN device named [`IFNAME`] in `ns`, with `local/prefix`, up, non-blocking.
pub fn make_end(ns: &Namespace, local: Ipv4Addr, prefix: u8, mtu: u16) -> Result<SyncDevice, LinkError> {
    ns.run(|| {
        let device = tun_rs::DeviceBuilder::new()
            .name(IFNAME)
            .mtu(mtu)
            .enable(false)
            .build_sync()
            .map_err(|e| LinkError::os(&e, format!("cannot make a TUN device in {}: {e}", ns.name)))?;
        device
            .set_nonblocking(true)
            .map_err(|e| LinkError::Kernel(format!("cannot make the TUN device non-blocking: {e}")))?;
        let mut netlink = Netlink::open()?;
        let lo = netlink.index_of("lo")?;
        netlink.set_up(lo)?;
        let tun = netlink.index_of(IFNAME)?;
        netlink.add_address(tun, local, prefix)?;
        netlink.set_up(tun)?;
        Ok(device)
    })
}
