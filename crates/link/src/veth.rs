//! A direct path between the two namespaces: a veth pair, one end in each, named like the
//! emulated link's interface and addressed the same way. No forwarder and no delay: packets cross
//! in the kernel as they do on loopback, but each namespace counts its own (see [`crate::counters`]).

use crate::device::IFNAME;
use crate::namespace::Namespace;
use crate::netlink::Netlink;
use crate::LinkError;
use std::net::Ipv4Addr;

/// Bytes of Ethernet header in each packet a veth device counts.
pub const ETHERNET_HEADER: u64 = 14;

/// The pair: [`IFNAME`] in `client` with `client_addr`, its peer [`IFNAME`] in `server` with
/// `server_addr`, both `/prefix`, up, loopbacks up too.
pub fn make_pair(
    client: &Namespace,
    server: &Namespace,
    client_addr: Ipv4Addr,
    server_addr: Ipv4Addr,
    prefix: u8,
) -> Result<(), LinkError> {
    let server_fd = server.fd();
    client.run(|| {
        let mut netlink = Netlink::open()?;
        netlink.add_veth_pair(IFNAME, IFNAME, server_fd)?;
        address_and_up(&mut netlink, client_addr, prefix)
    })?;
    server.run(|| address_and_up(&mut Netlink::open()?, server_addr, prefix))
}

/// In the calling thread's namespace: [`IFNAME`] gets `addr/prefix`; it and `lo` go up.
fn address_and_up(netlink: &mut Netlink, addr: Ipv4Addr, prefix: u8) -> Result<(), LinkError> {
    let end = netlink.index_of(IFNAME)?;
    netlink.add_address(end, addr, prefix)?;
    netlink.set_up(netlink.index_of("lo")?)?;
    netlink.set_up(end)
}
