//! gRPC's rules for an answer, apart from how it arrives: what a method's shape says of its
//! answer, the head that says gRPC, where the status is, and a compressed message only under a
//! named encoding (gRPC over HTTP/2, as grpc-go reads it). The gRPC target ([`crate::grpc`])
//! judges each call by them; the fuzz target `grpc_rules` checks them against their statement.

use crate::h2pool::HeaderList;
use crate::record::ErrorKind;

/// What a method takes and gives: its request and its answer are one message or a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Unary,
    ServerStreaming,
    ClientStreaming,
    Bidi,
}

impl Shape {
    pub fn of(client_streams: bool, server_streams: bool) -> Shape {
        match (client_streams, server_streams) {
            (false, false) => Shape::Unary,
            (false, true) => Shape::ServerStreaming,
            (true, false) => Shape::ClientStreaming,
            (true, true) => Shape::Bidi,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Unary => "unary",
            Shape::ServerStreaming => "server-streaming",
            Shape::ClientStreaming => "client-streaming",
            Shape::Bidi => "bidi-streaming",
        }
    }

    /// Whether the request is a stream of messages.
    pub fn client_streams(self) -> bool {
        matches!(self, Shape::ClientStreaming | Shape::Bidi)
    }

    /// Whether a successful answer is exactly one message (unary and client-streaming methods).
    pub fn answers_once(self) -> bool {
        matches!(self, Shape::Unary | Shape::ClientStreaming)
    }
}

/// What came of an answer's messages, as the rules need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Received {
    /// Whole messages.
    pub count: u64,
    /// Whether any byte of DATA came (a trailers-only answer has none).
    pub any_data: bool,
    /// Whether the data ended at the end of a message and broke no framing rule.
    pub whole: bool,
    /// Whether any message came with the compressed flag.
    pub compressed: bool,
}

/// Whether an answer of a `shape` method, with `http_status`, `head`, `trailers` and its
/// messages, keeps gRPC's rules and says OK; Err is the kind of failure a call counts.
pub fn verdict(
    shape: Shape,
    http_status: u16,
    head: &HeaderList,
    trailers: Option<&HeaderList>,
    received: Received,
) -> Result<(), ErrorKind> {
    if http_status != 200 {
        return Err(ErrorKind::HttpStatus(http_status));
    }
    if !is_grpc(head) {
        return Err(ErrorKind::Protocol); // grpc-go: "malformed header: missing HTTP content-type"
    }
    match grpc_status(head, trailers, received.any_data) {
        Some(0) => {}
        Some(code) => return Err(ErrorKind::GrpcStatus(code)),
        // No status where gRPC puts it (grpc-go: INTERNAL): the answer broke the protocol.
        None => return Err(ErrorKind::Protocol),
    }
    if !received.whole || (received.compressed && !declares_compression(head)) {
        return Err(ErrorKind::Protocol);
    }
    if shape.answers_once() && received.count != 1 {
        return Err(ErrorKind::Protocol); // grpc-go: INTERNAL, "no" or "more than one" message
    }
    Ok(())
}

/// Whether the answer's headers name a compression for its messages: a message flagged compressed
/// in an answer that names none (or `identity`) is an error (INTERNAL, by gRPC's HTTP/2 protocol).
pub fn declares_compression(head: &HeaderList) -> bool {
    head.get("grpc-encoding").is_some_and(|name| !name.trim_ascii().eq_ignore_ascii_case(b"identity"))
}

/// Whether an answer's head says gRPC: `content-type: application/grpc`, or `application/grpc+…` /
/// `application/grpc;…` (gRPC over HTTP/2's Content-Type rule, as grpc-go reads it).
pub fn is_grpc(head: &HeaderList) -> bool {
    head.get("content-type").is_some_and(|v| {
        let v = v.trim_ascii();
        v.len() >= 16
            && v[..16].eq_ignore_ascii_case(b"application/grpc")
            && matches!(v.get(16), None | Some(b'+' | b';'))
    })
}

/// grpc-status from the trailers; from the head only when the answer is trailers-only (its head
/// ended the stream: no DATA, no trailers). An answer with data and no trailers has none, whatever
/// its head says (gRPC over HTTP/2: the status is the answer's last word).
pub fn grpc_status(head: &HeaderList, trailers: Option<&HeaderList>, data_came: bool) -> Option<i32> {
    let value = match trailers {
        Some(trailers) => trailers.get("grpc-status")?,
        None if !data_came => head.get("grpc-status")?,
        None => return None,
    };
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

/// The grpc-message beside the grpc-status [`grpc_status`] reads (where it reads it), decoded;
/// None when there is none or it is empty.
pub fn grpc_message(head: &HeaderList, trailers: Option<&HeaderList>, data_came: bool) -> Option<String> {
    let value = match trailers {
        Some(trailers) => trailers.get("grpc-message")?,
        None if !data_came => head.get("grpc-message")?,
        None => return None,
    };
    Some(percent_decode(value)).filter(|m| !m.is_empty())
}

/// grpc-message is percent-encoded UTF-8 (gRPC HTTP/2 spec).
pub fn percent_decode(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = raw
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (raw[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(fields: &[(&str, &str)]) -> HeaderList {
        let mut list = HeaderList::default();
        for (name, value) in fields {
            list.push(name.as_bytes(), value.as_bytes());
        }
        list
    }

    const GRPC: (&str, &str) = ("content-type", "application/grpc");
    const ONE: Received = Received { count: 1, any_data: true, whole: true, compressed: false };

    #[test]
    fn a_compressed_message_needs_an_encoding_named() {
        assert!(!declares_compression(&headers(&[])));
        assert!(!declares_compression(&headers(&[("grpc-encoding", " Identity ")])));
        assert!(declares_compression(&headers(&[("grpc-encoding", "gzip")])));
        let ok = headers(&[("grpc-status", "0")]);
        let compressed = Received { compressed: true, ..ONE };
        assert_eq!(verdict(Shape::Unary, 200, &headers(&[GRPC]), Some(&ok), compressed), Err(ErrorKind::Protocol));
        let gzip = headers(&[GRPC, ("grpc-encoding", "gzip")]);
        assert_eq!(verdict(Shape::Unary, 200, &gzip, Some(&ok), compressed), Ok(()));
    }

    #[test]
    fn the_answer_must_say_grpc() {
        for good in ["application/grpc", "application/grpc+proto", "Application/GRPC; charset=x"] {
            assert!(is_grpc(&headers(&[("content-type", good)])), "{good}");
        }
        for bad in ["application/json", "application/grpc-web", "text/plain", "application/grp"] {
            assert!(!is_grpc(&headers(&[("content-type", bad)])), "{bad}");
        }
        assert!(!is_grpc(&headers(&[])));
    }

    #[test]
    fn status_from_trailers_or_trailers_only() {
        let mut head = HeaderList::default();
        let mut trailers = HeaderList::default();
        assert_eq!(grpc_status(&head, None, false), None);
        head.push(b"grpc-status", b"5");
        assert_eq!(grpc_status(&head, None, false), Some(5), "trailers-only");
        assert_eq!(
            grpc_status(&head, None, true),
            None,
            "data, then no trailers: the head's status is not the answer's"
        );
        assert_eq!(grpc_status(&head, Some(&trailers), true), None, "trailers without a status");
        trailers.push(b"grpc-status", b"0");
        assert_eq!(grpc_status(&head, Some(&trailers), true), Some(0));
    }

    #[test]
    fn a_unary_or_client_streaming_answer_is_exactly_one_message() {
        let (head, ok) = (headers(&[GRPC]), headers(&[("grpc-status", "0")]));
        for shape in [Shape::Unary, Shape::ClientStreaming, Shape::ServerStreaming, Shape::Bidi] {
            for count in [0, 1, 2] {
                let got = verdict(shape, 200, &head, Some(&ok), Received { count, ..ONE });
                let once = shape.answers_once();
                assert_eq!(got.is_ok(), !once || count == 1, "{} with {count} messages", shape.name());
            }
        }
    }

    #[test]
    fn each_broken_rule_is_its_failure() {
        let (head, ok) = (headers(&[GRPC]), headers(&[("grpc-status", "0")]));
        assert_eq!(verdict(Shape::Unary, 200, &head, Some(&ok), ONE), Ok(()));
        assert_eq!(verdict(Shape::Unary, 503, &head, Some(&ok), ONE), Err(ErrorKind::HttpStatus(503)));
        assert_eq!(verdict(Shape::Unary, 200, &headers(&[]), Some(&ok), ONE), Err(ErrorKind::Protocol));
        let not_found = headers(&[("grpc-status", "5")]);
        assert_eq!(verdict(Shape::Unary, 200, &head, Some(&not_found), ONE), Err(ErrorKind::GrpcStatus(5)));
        assert_eq!(verdict(Shape::Unary, 200, &head, None, ONE), Err(ErrorKind::Protocol), "no trailers");
        let cut = Received { whole: false, ..ONE };
        assert_eq!(verdict(Shape::Unary, 200, &head, Some(&ok), cut), Err(ErrorKind::Protocol));
        let trailers_only = headers(&[GRPC, ("grpc-status", "0")]);
        let nothing = Received { count: 0, any_data: false, whole: true, compressed: false };
        assert_eq!(verdict(Shape::ServerStreaming, 200, &trailers_only, None, nothing), Ok(()));
        assert_eq!(verdict(Shape::Unary, 200, &trailers_only, None, nothing), Err(ErrorKind::Protocol));
    }

    #[test]
    fn grpc_message_is_percent_decoded() {
        assert_eq!(percent_decode(b"no%20such%3A x%"), "no such: x%");
        assert_eq!(percent_decode(b"%zz%e2%9c%93"), "%zz\u{2713}");
    }

    #[test]
    fn the_message_is_read_where_the_status_is() {
        let trailers = headers(&[("grpc-status", "5"), ("grpc-message", "no%20such%20user")]);
        let head = headers(&[GRPC, ("grpc-message", "not this one")]);
        assert_eq!(grpc_message(&head, Some(&trailers), true).as_deref(), Some("no such user"));
        let trailers_only = headers(&[GRPC, ("grpc-status", "3"), ("grpc-message", "bad")]);
        assert_eq!(grpc_message(&trailers_only, None, false).as_deref(), Some("bad"));
        assert_eq!(grpc_message(&trailers_only, None, true), None);
        assert_eq!(grpc_message(&headers(&[("grpc-status", "3"), ("grpc-message", "")]), None, false), None);
    }
}
