//! A plain HTTP/1.1 client over one keep-alive connection, with full control
//! of method, headers and body bytes (bad input included).

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::time::Duration;

pub struct Http1Conn {
    addr: SocketAddr,
    sender: SendRequest<Full<Bytes>>,
}

pub struct HttpReply {
    pub status: u16,
    pub content_type: String,
    pub content_encoding: String,
    pub body: Bytes,
}

impl Http1Conn {
    pub async fn connect(addr: SocketAddr) -> Result<Http1Conn> {
        let stream = tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(addr))
            .await
            .context("connect timed out")?
            .with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Http1Conn { addr, sender })
    }

    /// False once the server has closed the connection.
    pub fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    /// Sends one request; `headers` with an empty value are not sent.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> Result<HttpReply> {
        let mut request = hyper::Request::builder().method(method).uri(path).header("host", self.addr.to_string());
        for (name, value) in headers.iter().filter(|(_, v)| !v.is_empty()) {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request.body(Full::new(body)).context("cannot build the request")?;
        self.sender.ready().await.context("connection closed")?;
        let response = tokio::time::timeout(Duration::from_secs(30), async {
            let response = self.sender.send_request(request).await?;
            let status = response.status().as_u16();
            let content_type = header(response.headers(), "content-type");
            let content_encoding = header(response.headers(), "content-encoding");
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, hyper::Error>(HttpReply { status, content_type, content_encoding, body })
        })
        .await
        .context("no answer within 30 s")??;
        Ok(response)
    }
}

pub fn header(headers: &http::HeaderMap, name: &str) -> String {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}
