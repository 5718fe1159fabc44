//! The link's two ends: a TUN device in each namespace (tun-rs), addressed and brought up over
//! netlink (rtnetlink), with the namespace's loopback up too.

use crate::namespace::Namespace;
use crate::LinkError;
use futures_util::TryStreamExt;
use rtnetlink::packet_route::link::{InfoData, InfoKind, InfoVeth};
use rtnetlink::{LinkMessageBuilder, LinkUnspec, LinkVeth};
use std::net::{IpAddr, Ipv4Addr};
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
        with_netlink(|handle| async move {
            let lo = index_of(&handle, "lo").await?;
            set_up(&handle, lo).await?;
            let tun = index_of(&handle, IFNAME).await?;
            add_address(&handle, tun, local, prefix).await?;
            set_up(&handle, tun).await
        })?;
        Ok(device)
    })
}

/// Runs `work` with a netlink connection of the calling thread's namespace (the socket belongs to
/// the namespace of the thread that opens it), on a runtime of its own: its own error, or the
/// [`LinkError`] of opening the connection as `E`.
pub fn with_netlink<F, Fut, T, E>(work: F) -> Result<T, E>
where
    F: FnOnce(rtnetlink::Handle) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: From<LinkError>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| LinkError::Kernel(format!("cannot start a runtime for netlink: {e}")))?;
    runtime.block_on(async {
        let (connection, handle, _) =
            rtnetlink::new_connection().map_err(|e| LinkError::os(&e, format!("cannot open netlink: {e}")))?;
        let driver = tokio::spawn(connection);
        let result = work(handle).await;
        driver.abort();
        result
    })
}

/// The index of the calling thread's namespace's interface `name`.
pub async fn index_of(handle: &rtnetlink::Handle, name: &str) -> Result<u32, LinkError> {
    let mut links = handle.link().get().match_name(name.to_string()).execute();
    match links.try_next().await {
        Ok(Some(link)) => Ok(link.header.index),
        Ok(None) => Err(LinkError::Kernel(format!("no interface {name}"))),
        Err(e) => Err(LinkError::netlink(&e, format!("cannot find interface {name}: {e}"))),
    }
}

/// Gives interface `index` (named [`IFNAME`]) the address `addr/prefix`.
pub(crate) async fn add_address(
    handle: &rtnetlink::Handle,
    index: u32,
    addr: Ipv4Addr,
    prefix: u8,
) -> Result<(), LinkError> {
    handle
        .address()
        .add(index, IpAddr::V4(addr), prefix)
        .execute()
        .await
        .map_err(|e| LinkError::netlink(&e, format!("cannot give {IFNAME} the address {addr}/{prefix}: {e}")))
}

/// A veth pair made from the namespace `handle` speaks in: [`IFNAME`] here, its peer `peer_name`
/// made directly in the namespace of `peer_ns` (as `ip link add … peer netns`).
pub(crate) async fn add_veth_pair(
    handle: &rtnetlink::Handle,
    peer_name: String,
    peer_ns: std::os::fd::RawFd,
) -> Result<(), LinkError> {
    let peer = LinkMessageBuilder::<LinkUnspec>::new().name(peer_name).setns_by_fd(peer_ns).build();
    let pair = LinkMessageBuilder::<LinkVeth>::new_with_info_kind(InfoKind::Veth)
        .name(IFNAME.to_string())
        .set_info_data(InfoData::Veth(InfoVeth::Peer(peer)))
        .build();
    handle.link().add(pair).execute().await.map_err(|e| LinkError::netlink(&e, format!("cannot make a veth pair: {e}")))
}

pub(crate) async fn set_up(handle: &rtnetlink::Handle, index: u32) -> Result<(), LinkError> {
    handle
        .link()
        .set(LinkUnspec::new_with_index(index).up().build())
        .execute()
        .await
        .map_err(|e| LinkError::netlink(&e, format!("cannot bring interface {index} up: {e}")))
}
