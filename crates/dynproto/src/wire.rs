//! One gRPC call over a caller's HTTP/2 connection (the engine's client), at
//! the wire level: the request headers, length-prefixed messages both ways,
//! and the grpc-status from trailers or from a trailers-only answer. Used for
//! reflection, which must work over whatever connection (h2c or TLS) the
//! engine opened.

use bytes::{Buf, Bytes, BytesMut};
pub(crate) use callbench_engine::grpc::percent_decode;
use callbench_engine::h2pool::{request_block, Answer, Connection, H2Error, HeaderList, Stream};

/// The 5-byte gRPC message header: compressed flag, big-endian length.
const HEADER_LEN: usize = 5;
/// Descriptor files are small; anything larger is a confused or hostile peer.
pub(crate) const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// grpc-status UNIMPLEMENTED: the method (here, the reflection version) is absent.
pub(crate) const UNIMPLEMENTED: u32 = 12;

#[derive(Debug)]
pub(crate) enum CallError {
    /// The server ended the call with a non-OK grpc-status.
    Status { code: u32, message: String },
    /// The server announced a message of `length` bytes, past the `limit` the call takes.
    TooLarge { length: usize, limit: usize },
    /// Anything else: transport, HTTP or framing trouble.
    Other(String),
}

impl CallError {
    pub(crate) fn describe(&self) -> String {
        match self {
            CallError::Status { code, message } if message.is_empty() => status_name(*code),
            CallError::Status { code, message } => format!("{}: {message}", status_name(*code)),
            CallError::TooLarge { length, limit } => {
                format!("the server announced a message of {length} bytes (limit {limit})")
            }
            CallError::Other(text) => text.clone(),
        }
    }
}

/// A call in progress: requests go out as they are sent, answers are read one at a time.
pub(crate) struct Call<'a> {
    stream: Stream<'a>,
    /// Whether the answer's head was judged (it may come before the first message).
    head_checked: bool,
    buffer: BytesMut,
    /// The largest message taken: its bytes are refused before they are held.
    limit: usize,
    /// The answer, once it ended.
    ended: Option<Answer>,
}

impl<'a> Call<'a> {
    /// Opens a stream to `path` on the connection (`scheme` "http" or "https").
    pub(crate) async fn start(
        conn: &'a Connection,
        scheme: &str,
        authority: &str,
        path: &str,
    ) -> Result<Call<'a>, CallError> {
        if !path.starts_with('/') || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(CallError::Other(format!("bad request target {path:?}")));
        }
        let headers = [("content-type".to_string(), "application/grpc".to_string()), ("te".into(), "trailers".into())];
        let blocks = request_block("POST", scheme == "https", authority, path, &headers);
        let stream =
            conn.open(&blocks, &Bytes::new(), false).await.map_err(|e| transport("cannot open a stream", e))?;
        Ok(Call { stream, head_checked: false, buffer: BytesMut::new(), limit: MAX_MESSAGE_BYTES, ended: None })
    }

    pub(crate) fn send(&mut self, message: &[u8]) -> Result<(), CallError> {
        let length = u32::try_from(message.len()).map_err(|_| CallError::Other("request too large".into()))?;
        let mut frame = Vec::with_capacity(HEADER_LEN + message.len());
        frame.push(0);
        frame.extend_from_slice(&length.to_be_bytes());
        frame.extend_from_slice(message);
        self.stream.send(Bytes::from(frame), false);
        Ok(())
    }

    /// The largest message the next answers may be (at most [`MAX_MESSAGE_BYTES`]).
    pub(crate) fn limit_messages(&mut self, bytes: usize) {
        self.limit = bytes.min(MAX_MESSAGE_BYTES);
    }

    /// Half-closes the request side: no more messages.
    pub(crate) fn finish(&mut self) {
        self.stream.send(Bytes::new(), true);
    }

    /// The next answer, or None when the call ended with grpc-status OK.
    pub(crate) async fn recv(&mut self) -> Result<Option<Bytes>, CallError> {
        loop {
            if !self.head_checked {
                let head = match &self.ended {
                    Some(answer) => Some(answer.headers.clone()),
                    None => self.stream.head(),
                };
                if let Some(head) = head {
                    check_headers(head.status().unwrap_or(0), &head)?;
                    self.head_checked = true;
                }
            }
            if self.head_checked {
                if let Some(message) = take_message(&mut self.buffer, self.limit)? {
                    return Ok(Some(message));
                }
            }
            if let Some(answer) = &self.ended {
                return self.end(answer);
            }
            let buffer = &mut self.buffer;
            match self.stream.next(&mut |chunk: &[u8]| buffer.extend_from_slice(chunk)).await {
                None => {}
                Some(Ok(answer)) => self.ended = Some(answer),
                Some(Err(e)) => return Err(transport("the answer broke off", e)),
            }
        }
    }

    /// The call's end, once every message was taken: its grpc-status.
    fn end(&self, answer: &Answer) -> Result<Option<Bytes>, CallError> {
        let trailers = answer.trailers.as_ref().unwrap_or(&answer.headers);
        match status(trailers) {
            Some(Err(error)) => Err(error),
            None => Err(CallError::Other("the answer ended without a grpc-status".into())),
            Some(Ok(())) if !self.buffer.is_empty() => {
                Err(CallError::Other("the answer ended inside a message".into()))
            }
            Some(Ok(())) => Ok(None),
        }
    }
}

/// Refuses non-gRPC answers; a grpc-status in the headers is a trailers-only answer.
pub(crate) fn check_headers(http_status: u16, headers: &HeaderList) -> Result<(), CallError> {
    if let Some(Err(error)) = status(headers) {
        return Err(error);
    }
    if http_status == 404 {
        // The gRPC spec maps HTTP 404 to UNIMPLEMENTED (a proxy without the route).
        return Err(CallError::Status { code: UNIMPLEMENTED, message: "HTTP 404".into() });
    }
    if http_status != 200 {
        return Err(CallError::Other(format!("not a gRPC answer: HTTP {http_status}")));
    }
    match headers.get("content-type").map(String::from_utf8_lossy) {
        Some(value) if value.to_ascii_lowercase().starts_with("application/grpc") => Ok(()),
        Some(value) => Err(CallError::Other(format!("not a gRPC answer: content-type {value:?}"))),
        None => Err(CallError::Other("not a gRPC answer: no content-type".into())),
    }
}

/// The grpc-status in `headers`: None when absent, Ok for 0.
pub(crate) fn status(headers: &HeaderList) -> Option<Result<(), CallError>> {
    let value = headers.get("grpc-status")?;
    let code = std::str::from_utf8(value).ok().and_then(|s| s.trim().parse::<u32>().ok());
    let Some(code) = code else {
        return Some(Err(CallError::Other(format!("bad grpc-status {:?}", String::from_utf8_lossy(value)))));
    };
    if code == 0 {
        return Some(Ok(()));
    }
    let message = headers.get("grpc-message").map(percent_decode).unwrap_or_default();
    Some(Err(CallError::Status { code, message }))
}

/// Takes one whole message off the front of `buffer`, if it holds one; one announced past `limit`
/// bytes is an error as soon as its header is there.
pub(crate) fn take_message(buffer: &mut BytesMut, limit: usize) -> Result<Option<Bytes>, CallError> {
    if buffer.len() < HEADER_LEN {
        return Ok(None);
    }
    let compressed = buffer[0];
    let length = u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]]) as usize;
    if compressed != 0 {
        // We never send grpc-accept-encoding, so a compressed answer breaks the protocol.
        return Err(CallError::Other(format!("the server sent a compressed message (flag {compressed}) unasked")));
    }
    if length > limit {
        return Err(CallError::TooLarge { length, limit });
    }
    if buffer.len() < HEADER_LEN + length {
        return Ok(None);
    }
    buffer.advance(HEADER_LEN);
    Ok(Some(buffer.split_to(length).freeze()))
}

fn transport(what: &str, error: H2Error) -> CallError {
    // What an HTTP/1.1 or TLS server's answer to an h2c preface does to the framing.
    let hint = match error {
        H2Error::Protocol | H2Error::Broken => " (is the peer an HTTP/2 server, and TLS or not as expected?)",
        _ => "",
    };
    CallError::Other(format!("{what}: {error}{hint}"))
}

/// `NOT_FOUND (5)`, as people read gRPC codes.
pub(crate) fn status_name(code: u32) -> String {
    match callbench_contract::grpc_status::name(code.into()) {
        Some(name) => format!("{name} ({code})"),
        None => format!("status {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_across_chunks_come_out_whole() {
        let mut buffer = BytesMut::new();
        buffer.extend_from_slice(&[0, 0, 0, 0, 3, b'a']);
        assert!(take_message(&mut buffer, MAX_MESSAGE_BYTES).unwrap().is_none());
        buffer.extend_from_slice(b"bc\0\0\0\0\0");
        assert_eq!(take_message(&mut buffer, MAX_MESSAGE_BYTES).unwrap().unwrap(), Bytes::from_static(b"abc"));
        assert_eq!(take_message(&mut buffer, MAX_MESSAGE_BYTES).unwrap().unwrap(), Bytes::new());
        assert!(buffer.is_empty());
    }

    #[test]
    fn huge_or_compressed_frames_are_errors() {
        let mut huge = BytesMut::from(&[0u8, 0xff, 0xff, 0xff, 0xff][..]);
        assert!(take_message(&mut huge, MAX_MESSAGE_BYTES).is_err());
        let mut compressed = BytesMut::from(&[1u8, 0, 0, 0, 0][..]);
        assert!(take_message(&mut compressed, MAX_MESSAGE_BYTES).is_err());
    }

    #[test]
    fn statuses_read_from_headers() {
        let mut headers = HeaderList::default();
        assert!(status(&headers).is_none());
        headers.push(b"grpc-status", b"12");
        headers.push(b"grpc-message", b"unknown%20service");
        match status(&headers) {
            Some(Err(CallError::Status { code: 12, message })) => assert_eq!(message, "unknown service"),
            other => panic!("{other:?}"),
        }
        let mut bad = HeaderList::default();
        bad.push(b"grpc-status", b"x");
        assert!(matches!(status(&bad), Some(Err(CallError::Other(_)))));
        assert_eq!(status_name(5), "NOT_FOUND (5)");
        assert_eq!(status_name(99), "status 99");
    }

    #[test]
    fn non_grpc_heads_are_refused() {
        let mut head = HeaderList::default();
        head.push(b"content-type", b"text/html");
        assert!(matches!(check_headers(404, &head), Err(CallError::Status { code: UNIMPLEMENTED, .. })));
        assert!(matches!(check_headers(200, &head), Err(CallError::Other(_))));
        let mut grpc = HeaderList::default();
        grpc.push(b"content-type", b"application/grpc+proto");
        assert!(check_headers(200, &grpc).is_ok());
    }
}
