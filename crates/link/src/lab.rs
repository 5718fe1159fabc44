//! A lab: one network namespace per named host, all joined by one bridge, as machines on one LAN —
//! for running several machines' worth of processes (a Ray head and its nodes, a server) on this one.
//! Each host has [`IFNAME`] with 198.18.1.N/24 (N = 1, 2, … in the order named), so a target in a
//! lab passes the route check ([`crate::route`]) from inside another host of it and nowhere else.
//! The bridge lives in a namespace of its own: nothing touches the machine's own network.

use crate::device::IFNAME;
use crate::namespace::Namespace;
use crate::netlink::Netlink;
use crate::LinkError;
use std::net::Ipv4Addr;

const BRIDGE: &str = "cb-bridge";
/// Hosts of one lab: 198.18.1.1 … 198.18.1.250.
pub const MAX_HOSTS: usize = 250;

#[derive(Debug)]
pub struct Lab {
    /// Each host's name, namespace and address, in the order named.
    pub hosts: Vec<LabHost>,
    /// Holds the bridge; removed last (fields drop in order).
    _bridge: Namespace,
}

#[derive(Debug)]
pub struct LabHost {
    pub name: String,
    pub namespace: Namespace,
    pub address: Ipv4Addr,
}

/// The address of the `i`-th host (from 0).
pub fn host_address(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, 1, i as u8 + 1)
}

/// A host's name: what a namespace name may carry, short enough to read.
pub fn check_host_name(name: &str) -> Result<(), LinkError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name != "lab";
    if ok {
        Ok(())
    } else {
        Err(LinkError::Invalid(format!("host name {name:?}: use 1 to 32 of a-z, 0-9 and _ (and not \"lab\")")))
    }
}

impl Lab {
    /// Makes the bridge and one namespace per host joined to it. Needs root; leftovers of
    /// callbench runs that died are removed first.
    pub fn create(names: &[String]) -> Result<Lab, LinkError> {
        if names.is_empty() || names.len() > MAX_HOSTS {
            return Err(LinkError::Invalid(format!("a lab has 1 to {MAX_HOSTS} hosts")));
        }
        for (i, name) in names.iter().enumerate() {
            check_host_name(name)?;
            if names[..i].contains(name) {
                return Err(LinkError::Invalid(format!("host {name} is named twice")));
            }
        }
        let base = crate::link::run_base("a lab of network namespaces")?;
        let bridge = Namespace::create(&format!("{base}-lab"))?;
        bridge.run(|| {
            let mut netlink = Netlink::open()?;
            netlink.add_bridge(BRIDGE)?;
            netlink.set_up(netlink.index_of(BRIDGE)?)?;
            netlink.set_up(netlink.index_of("lo")?)
        })?;
        let mut hosts = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let namespace = Namespace::create(&format!("{base}-{name}"))?;
            let address = host_address(i);
            join(&namespace, &bridge, i, address)?;
            hosts.push(LabHost { name: name.clone(), namespace, address });
        }
        Ok(Lab { hosts, _bridge: bridge })
    }
}

/// A veth pair: [`IFNAME`] in `host` with `address/24`, its peer a port of the bridge.
fn join(host: &Namespace, bridge: &Namespace, i: usize, address: Ipv4Addr) -> Result<(), LinkError> {
    let port = format!("cb-port{i}");
    let bridge_fd = bridge.fd();
    host.run(|| {
        let mut netlink = Netlink::open()?;
        netlink.add_veth_pair(IFNAME, &port, bridge_fd)?;
        let end = netlink.index_of(IFNAME)?;
        netlink.add_address(end, address, 24)?;
        netlink.set_up(netlink.index_of("lo")?)?;
        netlink.set_up(end)
    })?;
    bridge.run(|| {
        let mut netlink = Netlink::open()?;
        let master = netlink.index_of(BRIDGE)?;
        let index = netlink.index_of(&port)?;
        netlink.set_master_and_up(index, master)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_and_addresses() {
        assert_eq!(host_address(0), Ipv4Addr::new(198, 18, 1, 1));
        assert_eq!(host_address(MAX_HOSTS - 1), Ipv4Addr::new(198, 18, 1, 250));
        for good in ["head", "node_1", "server"] {
            assert_eq!(check_host_name(good), Ok(()));
        }
        for bad in ["", "Head", "a-b", "a/b", "lab", &"x".repeat(33)] {
            assert!(check_host_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_lab_needs_distinct_hosts() {
        let names = ["a".to_string(), "a".to_string()];
        assert_eq!(Lab::create(&names).unwrap_err(), LinkError::Invalid("host a is named twice".into()));
        assert!(matches!(Lab::create(&[]), Err(LinkError::Invalid(_))));
    }
}
