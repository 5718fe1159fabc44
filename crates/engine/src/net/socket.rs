//! The socket under a connection: tokio's epoll-driven TCP stream, or the same socket driven
//! through io_uring (`--io`). What is above (byte counting, TLS, the protocols) cannot tell.

use super::uring::UringStream;
use crate::EngineError;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

pub enum Socket {
    Epoll(TcpStream),
    Uring(UringStream),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Socket::Epoll($s) => {
                let $s = Pin::new($s);
                $e
            }
            Socket::Uring($s) => {
                let $s = Pin::new($s);
                $e
            }
        }
    };
}

impl AsyncRead for Socket {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Socket {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        delegate!(self, s => s.poll_write(cx, buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        delegate!(self, s => s.poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Socket::Epoll(s) => s.is_write_vectored(),
            Socket::Uring(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_shutdown(cx))
    }
}

/// Which kernel interface drives the sockets, as asked for (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Io {
    /// epoll, through tokio: a system call per send and per receive.
    #[default]
    Epoll,
    /// io_uring: the sends and receives of one scheduler pass in one system call; an error
    /// where this kernel does not allow it.
    Uring,
    /// io_uring where this kernel allows it, else epoll (the result says which ran).
    Auto,
}

impl Io {
    /// Whether the sockets go through io_uring, or why the choice cannot be had here (an
    /// [`EngineError::Machine`]).
    pub fn resolve(self) -> Result<bool, EngineError> {
        match self {
            Io::Epoll => Ok(false),
            Io::Uring => super::uring::available().map(|()| true),
            Io::Auto => Ok(super::uring::available().is_ok()),
        }
    }
}

impl Io {
    /// One line on why the sockets went through io_uring (`uring`) or epoll when this was asked:
    /// how io_uring posts completions here (its self-check), or why it was not used.
    pub fn why(self, uring: bool) -> String {
        match (self, uring) {
            (_, true) => super::uring::describe(),
            (Io::Epoll, false) => "epoll, as asked (--io epoll, the default)".into(),
            (Io::Auto | Io::Uring, false) => format!("epoll: {}", super::uring::describe()),
        }
    }
}

impl std::str::FromStr for Io {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, EngineError> {
        match s {
            "epoll" => Ok(Io::Epoll),
            "uring" | "io_uring" => Ok(Io::Uring),
            "auto" => Ok(Io::Auto),
            _ => Err(EngineError::Settings(format!("unknown I/O interface {s:?}: epoll, uring or auto"))),
        }
    }
}

impl std::fmt::Display for Io {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Io::Epoll => "epoll",
            Io::Uring => "uring",
            Io::Auto => "auto",
        })
    }
}
