//! A direct path between the two namespaces: a veth pair, one end in each, named like the
//! emulated link's interface and addressed the same way. No forwarder and no delay: packets cross
//! in the kernel as they do on loopback, but each namespace counts its own (see [`crate::counters`]).

use crate::device::{add_address, index_of, set_up, with_netlink, IFNAME};
use crate::namespace::Namespace;
use crate::LinkError;
use rtnetlink::packet_route::link::{InfoData, InfoKind, InfoVeth};
use rtnetlink::{LinkMessageBuilder, LinkUnspec, LinkVeth};
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
            // The peer is made directly in the server namespace (as `ip link add … peer netns`).
            let peer = LinkMessageBuilder::<LinkUnspec>::new().name(IFNAME.to_string()).setns_by_fd(server_fd).build();
            let pair = LinkMessageBuilder::<LinkVeth>::new_with_info_kind(InfoKind::Veth)
                .name(IFNAME.to_string())
                .set_info_data(InfoData::Veth(InfoVeth::Peer(peer)))
                .build();
            handle
                .link()
                .add(pair)
                .execute()
                .await
                .map_err(|e| LinkError::netlink(&e, format!("cannot make a veth pair: {e}")))?;
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
