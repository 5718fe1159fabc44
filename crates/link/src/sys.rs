//! The system calls of a namespace's life, through `libc` as everywhere else in callbench: each
//! returns the `errno` as an `io::Error` when it fails.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// Moves the calling thread into a network namespace of its own (`unshare(CLONE_NEWNET)`).
pub fn unshare_network() -> io::Result<()> {
    check(unsafe { libc::unshare(libc::CLONE_NEWNET) })
}

/// Moves the calling thread into the network namespace of `fd` (`setns(fd, CLONE_NEWNET)`).
pub fn enter_network(fd: BorrowedFd<'_>) -> io::Result<()> {
    check(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) })
}

/// Bind-mounts `source` on `target` (`mount --bind`).
pub fn bind_mount(source: &Path, target: &Path) -> io::Result<()> {
    let (source, target) = (c_path(source)?, c_path(target)?);
    check(unsafe { libc::mount(source.as_ptr(), target.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) })
}

/// Detaches the mount on `path` (`umount -l`).
pub fn unmount_lazily(path: &Path) -> io::Result<()> {
    let path = c_path(path)?;
    check(unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) })
}
