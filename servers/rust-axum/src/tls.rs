//! `--tls` for `axum::serve`: a listener whose connections are already through their TLS
//! handshake. Handshakes run in their own tasks, so a slow or silent client does not hold up
//! the accept loop; the finished ones are handed to axum through a channel. hyper-util's auto
//! builder then tells HTTP/2 (ALPN `h2`: the client sends the HTTP/2 preface) from HTTP/1.1.

use axum::serve::Listener;
use callbench_serverkit::tls::HANDSHAKE_TIMEOUT;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

type Accepted = (TlsStream<TcpStream>, SocketAddr);

pub struct TlsListener {
    ready: mpsc::Receiver<Accepted>,
    local_addr: SocketAddr,
    accept_task: AbortHandle,
}

impl TlsListener {
    /// Starts accepting on `listener` (TCP_NODELAY on every connection); must run inside the runtime.
    pub fn new(listener: TcpListener, config: ServerConfig) -> io::Result<TlsListener> {
        let local_addr = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        let accept_task = tokio::spawn(accept_loop(listener, TlsAcceptor::from(Arc::new(config)), tx)).abort_handle();
        Ok(TlsListener { ready, local_addr, accept_task })
    }
}

async fn accept_loop(mut listener: TcpListener, acceptor: TlsAcceptor, ready: mpsc::Sender<Accepted>) {
    loop {
        // axum's own accept for TCP: it waits and retries on errors such as too many open files.
        let (tcp, peer) = tokio::select! {
            accepted = Listener::accept(&mut listener) => accepted,
            () = ready.closed() => return, // axum dropped the listener: it is stopping
        };
        // A response's last small segment must not wait for the client's delayed ACK (Nagle).
        let _ = tcp.set_nodelay(true);
        let (acceptor, ready) = (acceptor.clone(), ready.clone());
        tokio::spawn(async move {
            if let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                let _ = ready.send((tls, peer)).await;
            }
        });
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> Accepted {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accept task ended (it only does when aborted): accept nothing more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local_addr)
    }
}
