//! The one way past the loopback rule: an address of 198.18.0.0/15 (RFC 2544's benchmarking
//! range) that is the far end of an emulated link callbench made. Checked before the first packet:
//! the calling thread must be in a namespace of a live callbench run, and the kernel's route to the
//! address must leave through that namespace's link interface — so nothing is sent anywhere else.

use crate::device::IFNAME;
use crate::netlink::Netlink;
use crate::LinkError;
use std::net::{IpAddr, Ipv4Addr};

/// 198.18.0.0/15, the range the links' addresses come from.
pub fn in_benchmark_range(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => (u32::from(v4) & 0xFFFE_0000) == u32::from(Ipv4Addr::new(198, 18, 0, 0)),
        IpAddr::V6(_) => false,
    }
}

/// The rule for every target callbench sends load or checks to: this machine's loopback, or the
/// far end of an emulated link callbench made (checked by [`check_target`]); anything else only
/// with `allow_remote` (`--allow-remote`). Decided before the first packet: a target refused is
/// [`LinkError::TargetRefused`] (or [`LinkError::Kernel`] when the check itself could not be made).
pub fn allowed(ip: IpAddr, allow_remote: bool) -> Result<(), LinkError> {
    if allow_remote || ip.to_canonical().is_loopback() {
        Ok(())
    } else if in_benchmark_range(ip) {
        check_target(ip).map_err(|e| {
            e.map_message(|why| format!("{why}; or give --allow-remote if it is a server of your own there"))
        })
    } else {
        Err(LinkError::TargetRefused(
            "only loopback targets (127.0.0.0/8, ::1) and the far end of an emulated link (198.18.0.0/15, \
             from inside it) are allowed without --allow-remote"
                .into(),
        ))
    }
}

/// Ok when packets to `ip` from the calling thread go over a callbench link and nowhere else;
/// else [`LinkError::TargetRefused`] (or [`LinkError::Kernel`] when the check itself could not be made).
pub fn check_target(ip: IpAddr) -> Result<(), LinkError> {
    let not_on_a_link =
        || LinkError::TargetRefused(format!("{ip} is not on an emulated link (links use 198.18.0.0/15)"));
    let IpAddr::V4(v4) = ip.to_canonical() else {
        return Err(not_on_a_link());
    };
    if !in_benchmark_range(ip) {
        return Err(not_on_a_link());
    }
    let here = crate::namespace::current_inode()?;
    if !namespace_is_a_live_link(here) {
        return Err(LinkError::TargetRefused(format!(
            "{ip} is only reachable across an emulated link, and this command does not run in one: run it \
             across the link (`callbench serve NAME --network SPEC -- COMMAND`, or `ip netns exec` on the \
             client namespace that serve prints)"
        )));
    }
    route_over_link(v4)
}

/// Whether namespace `inode` is one of /run/netns/callbench-* whose run is still alive.
fn namespace_is_a_live_link(inode: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(crate::namespace::RUN_DIR) else { return false };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().starts_with(crate::cleanup::PREFIX)
            && std::fs::metadata(e.path()).map(|m| m.ino() == inode).unwrap_or(false)
    })
}

/// Ok when the route to `ip` from the calling thread's namespace leaves through the link's
/// interface; else why not ([`LinkError::TargetRefused`]), or the netlink socket's own error.
fn route_over_link(ip: Ipv4Addr) -> Result<(), LinkError> {
    let mut netlink = Netlink::open()?;
    let refused = LinkError::TargetRefused;
    let link = netlink.index_of(IFNAME).map_err(|_| refused(format!("this namespace has no {IFNAME} interface")))?;
    match netlink.route_interface(ip).map_err(|e| refused(format!("no route to {ip}: {e}")))? {
        Some(index) if index == link => Ok(()),
        Some(index) => Err(refused(format!(
            "the route to {ip} leaves through interface {index}, not the link ({IFNAME}): refused"
        ))),
        None => Err(refused(format!("the route to {ip} names no interface: refused"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmark_range_is_198_18_slash_15() {
        for ip in ["198.18.0.1", "198.19.255.254", "::ffff:198.18.0.2"] {
            assert!(in_benchmark_range(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["198.17.255.255", "198.20.0.0", "127.0.0.1", "10.0.0.1", "::1"] {
            assert!(!in_benchmark_range(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn loopback_passes_and_the_rest_needs_allow_remote() {
        for ip in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(allowed(ip.parse().unwrap(), false), Ok(()), "{ip}");
        }
        for ip in ["10.0.0.1", "0.0.0.0", "192.0.2.1", "2001:db8::1", "198.18.0.2"] {
            let refused = allowed(ip.parse().unwrap(), false).unwrap_err();
            assert!(matches!(refused, LinkError::TargetRefused(_)), "{ip}: {refused:?}");
            assert_eq!(allowed(ip.parse().unwrap(), true), Ok(()), "{ip}");
        }
        assert!(allowed("10.0.0.1".parse().unwrap(), false).unwrap_err().to_string().contains("--allow-remote"));
    }

    #[test]
    fn outside_a_link_nothing_in_the_range_is_accepted() {
        // This test runs in the machine's own namespace, which no callbench run made.
        let err = check_target("198.18.0.2".parse().unwrap()).unwrap_err();
        assert!(matches!(err, LinkError::TargetRefused(_)), "{err:?}");
        assert!(err.to_string().contains("across"), "{err}");
        assert!(matches!(check_target("10.0.0.1".parse().unwrap()), Err(LinkError::TargetRefused(_))));
    }
}
