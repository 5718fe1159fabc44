//! Why a link, a lab or a check of the link's cannot do what was asked, by what its caller does
//! about it: each kind carries the one-line message callbench prints.

use std::io;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// What was given is not valid: a link spec or one of its values (`rtt=40`, `bandwidth=20mbps`),
    /// a capture's cap, a host name, a file that is not a pcap of raw IP packets, or an ask the link
    /// cannot serve (a capture of a direct path).
    #[error("{0}")]
    Invalid(String),
    /// Not permitted: namespaces and network devices need root (CAP_SYS_ADMIN and CAP_NET_ADMIN).
    #[error("{0}")]
    NotPermitted(String),
    /// The kernel refused or lacks what the link needs: a namespace, a TUN or veth device, a
    /// bridge, a netlink request, a socket, a thread, its counters in /proc.
    #[error("{0}")]
    Kernel(String),
    /// A target the route rule refuses: not this machine's loopback nor the far end of a live
    /// callbench link from inside it (`10.0.0.1` without `--allow-remote`), so load would leave
    /// this machine.
    #[error("{0}")]
    TargetRefused(String),
    /// Reading or writing a file failed: a capture (a full disk, a missing file), a resolver file.
    #[error("{0}")]
    Io(String),
    /// A program the link runs, or a connection across it, did not do its part: dnsmasq not
    /// installed or silent, a front end that exits before it accepts, the probe's echo failing.
    #[error("{0}")]
    Service(String),
}

impl LinkError {
    /// A system call's failure: not permitted (EPERM, EACCES) or the kernel's refusal, said by `message`.
    pub(crate) fn os(e: &io::Error, message: String) -> LinkError {
        match e.raw_os_error() {
            Some(libc::EPERM | libc::EACCES) => LinkError::NotPermitted(message),
            _ => LinkError::Kernel(message),
        }
    }

    /// The same kind with its message rewritten (a path or a hint added).
    pub(crate) fn map_message(self, f: impl FnOnce(String) -> String) -> LinkError {
        match self {
            LinkError::Invalid(m) => LinkError::Invalid(f(m)),
            LinkError::NotPermitted(m) => LinkError::NotPermitted(f(m)),
            LinkError::Kernel(m) => LinkError::Kernel(f(m)),
            LinkError::TargetRefused(m) => LinkError::TargetRefused(f(m)),
            LinkError::Io(m) => LinkError::Io(f(m)),
            LinkError::Service(m) => LinkError::Service(f(m)),
        }
    }
}

/// The message, for callers whose own errors are still strings.
impl From<LinkError> for String {
    fn from(e: LinkError) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_system_call_is_not_permitted_and_the_rest_the_kernels() {
        let eperm = io::Error::from_raw_os_error(libc::EPERM);
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        let enodev = io::Error::from_raw_os_error(libc::ENODEV);
        assert_eq!(LinkError::os(&eperm, "m".into()), LinkError::NotPermitted("m".into()));
        assert_eq!(LinkError::os(&eacces, "m".into()), LinkError::NotPermitted("m".into()));
        assert_eq!(LinkError::os(&enodev, "m".into()), LinkError::Kernel("m".into()));
        let other = io::Error::other("no errno");
        assert_eq!(LinkError::os(&other, "m".into()), LinkError::Kernel("m".into()));
    }

    #[test]
    fn a_rewritten_message_keeps_its_kind() {
        let e = LinkError::TargetRefused("no".into()).map_message(|m| format!("{m}; or not"));
        assert_eq!(e, LinkError::TargetRefused("no; or not".into()));
        assert_eq!(String::from(e), "no; or not");
    }
}
