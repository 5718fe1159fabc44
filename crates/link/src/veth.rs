//! A direct path between the two namespaces: a veth pair, one end in each, named like the
//! emulated link's interface and addressed the same way. No forwarder and no delay: packets cross
//! in the kernel as they do on loopback, but each namespace counts its own (see [`crate::counters`]).

use crate::device::{add_address, add_veth_pair, index_of, set_up, with_netlink, IFNAME};
use crate::namespace::Namespace;
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
        with_netlink(|handle| async move {
            add_veth_pair(&handle, IFNAME.to_string(), server_fd).await?;
            address_and_up(&handle, client_addr, prefix).await
        })
    })?;
    server.run(|| with_netlink(|handle| async move { address_and_up(&handle, server_addr, prefix).await }))
}

/// In the calling thread's namespace: [`IFNAME`] gets `addr/prefix`; it and `lo` go up.
async fn address_and_up(handle: &rtnetlink::Handle, addr: Ipv4Addr, prefix: u8) -> Result<(), LinkError> {
    let end = index_of(handle, IFNAME).await?;
    add_address(handle, end, addr, prefix).await?;
    set_up(handle, index_of(handle, "lo").await?).await?;
    set_up(handle, end).await
}
