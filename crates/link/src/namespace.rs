//! Named network namespaces, made the way `ip netns add` makes them (a namespace bind-mounted on
//! /run/netns/NAME), so `ip netns list` shows them and `ip netns exec NAME CMD` runs a command in
//! one. Work inside a namespace runs on a thread that joined it: a thread's namespace is its own,
//! so the rest of callbench stays where it is.

use crate::sys;
use crate::LinkError;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};

pub use crate::cleanup::{remove_path, RUN_DIR};

/// A named network namespace, removed when dropped if this process made it.
#[derive(Debug)]
pub struct Namespace {
    pub name: String,
    file: File,
    owned: bool,
}

impl Namespace {
    /// Makes a new, empty namespace (only a loopback interface, down) named `name`: without root,
    /// [`LinkError::NotPermitted`].
    pub fn create(name: &str) -> Result<Namespace, LinkError> {
        let path = Path::new(RUN_DIR).join(name);
        std::fs::create_dir_all(RUN_DIR).map_err(|e| LinkError::os(&e, format!("cannot create {RUN_DIR}: {e}")))?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| LinkError::os(&e, format!("cannot create {}: {e}", path.display())))?;
        let made = std::thread::scope(|s| {
            s.spawn(|| -> Result<(), LinkError> {
                sys::unshare_network().map_err(|e| match e.raw_os_error() {
                    Some(libc::EPERM) => LinkError::NotPermitted(
                        "an emulated network needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run callbench as root"
                            .to_string(),
                    ),
                    _ => LinkError::os(&e, format!("cannot make a network namespace: {e}")),
                })?;
                sys::bind_mount(Path::new("/proc/thread-self/ns/net"), &path)
                    .map_err(|e| LinkError::os(&e, format!("cannot mount network namespace {name}: {e}")))
            })
            .join()
            .unwrap_or_else(|_| Err(LinkError::Kernel("namespace thread panicked".into())))
        });
        if let Err(e) = made {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        let file = File::open(&path).map_err(|e| {
            remove_path(&path);
            LinkError::os(&e, format!("cannot open network namespace {name}: {e}"))
        })?;
        crate::cleanup::register(&path);
        Ok(Namespace { name: name.to_string(), file, owned: true })
    }

    /// An existing namespace of /run/netns (not removed when dropped): [`LinkError::Invalid`] if
    /// there is none of that name.
    pub fn open(name: &str) -> Result<Namespace, LinkError> {
        let path = Path::new(RUN_DIR).join(name);
        let file = File::open(&path).map_err(|e| {
            let message = format!("no network namespace {name}: {e}");
            match e.kind() {
                std::io::ErrorKind::NotFound => LinkError::Invalid(message),
                _ => LinkError::os(&e, message),
            }
        })?;
        Ok(Namespace { name: name.to_string(), file, owned: false })
    }

    pub fn path(&self) -> PathBuf {
        Path::new(RUN_DIR).join(&self.name)
    }

    /// The namespace's file descriptor (for `setns` in a child before exec).
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// The namespace's identity (the inode `ls -i /proc/PID/ns/net` shows).
    pub fn inode(&self) -> Result<u64, LinkError> {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().map(|m| m.ino()).map_err(|e| LinkError::Kernel(format!("cannot stat {}: {e}", self.name)))
    }

    /// Runs `work` on a thread inside the namespace and returns what it gave: its own error, or
    /// the [`LinkError`] of entering the namespace as `E` (a `String`, a `LinkError`, …).
    pub fn run<T: Send, E: Send + From<LinkError>>(&self, work: impl FnOnce() -> Result<T, E> + Send) -> Result<T, E> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter_here()?;
                work()
            })
            .join()
            .unwrap_or_else(|_| {
                Err(LinkError::Kernel(format!("a thread in network namespace {} panicked", self.name)).into())
            })
        })
    }

    /// Moves the calling thread into the namespace until the guard is dropped (sockets it opens
    /// meanwhile belong to the namespace, and stay there).
    pub fn enter(&self) -> Result<Entered, LinkError> {
        let home = File::open("/proc/thread-self/ns/net")
            .map_err(|e| LinkError::Kernel(format!("cannot read this thread's namespace: {e}")))?;
        self.enter_here()?;
        Ok(Entered { home })
    }

    /// Moves the calling thread into the namespace for good.
    fn enter_here(&self) -> Result<(), LinkError> {
        sys::enter_network(self.file.as_fd())
            .map_err(|e| LinkError::os(&e, format!("cannot enter network namespace {}: {e}", self.name)))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if self.owned {
            let path = self.path();
            remove_path(&path);
            crate::cleanup::unregister(&path);
        }
    }
}

/// A thread inside a namespace; back home when dropped.
pub struct Entered {
    home: File,
}

impl Drop for Entered {
    fn drop(&mut self) {
        // The home namespace exists as long as this process does: going back cannot fail for lack
        // of it, and a thread left in the link's namespace would send its sockets there.
        sys::enter_network(self.home.as_fd()).expect("cannot return to this thread's network namespace");
    }
}

/// The inode of the calling thread's network namespace.
pub fn current_inode() -> Result<u64, LinkError> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/thread-self/ns/net")
        .map(|m| m.ino())
        .map_err(|e| LinkError::Kernel(format!("cannot read this thread's namespace: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_that_does_not_exist_is_a_bad_name() {
        let err = Namespace::open("callbench-no-such-namespace").unwrap_err();
        assert!(matches!(err, LinkError::Invalid(_)), "{err:?}");
        assert!(err.to_string().starts_with("no network namespace callbench-no-such-namespace: "), "{err}");
    }
}
