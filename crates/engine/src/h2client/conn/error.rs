//! Why a call on an HTTP/2 connection failed, and what that means for it: counted how, sent
//! again or not, the connection kept or not.

use crate::h2client::frame;

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Error {
    /// The server reset this stream (RST_STREAM with this code); the connection goes on.
    Reset(u32),
    /// The server is going away (GOAWAY) and did not take this stream, or the stream ids ran out.
    GoAway,
    /// The connection broke (closed, I/O error).
    Broken,
    /// The server broke the protocol (a malformed frame, a flow-control or compression error, a
    /// flood): we ended the connection with GOAWAY and the error's code.
    Protocol,
    /// The connection had already ended when the call came: nothing was sent.
    Closed,
    /// The server broke the protocol on this stream only (a malformed answer, RFC 9113 §8.1.1,
    /// or a frame on a stream it had reset): we reset the stream; the connection goes on.
    Malformed,
}

impl H2Error {
    /// Whether the connection can take further calls.
    pub fn connection_survives(self) -> bool {
        matches!(self, H2Error::Reset(_) | H2Error::Malformed)
    }

    /// How a call that failed this way is counted.
    pub fn error_kind(self) -> crate::record::ErrorKind {
        match self {
            H2Error::Protocol | H2Error::Malformed => crate::record::ErrorKind::Protocol,
            H2Error::Reset(code) => crate::record::ErrorKind::Reset(code),
            _ => crate::record::ErrorKind::Io,
        }
    }

    /// Whether the server did not process the call, so it may be sent again (RFC 9113 §8.7):
    /// a stream above a GOAWAY's last-stream-id, or one reset with REFUSED_STREAM.
    pub fn unprocessed(self) -> bool {
        matches!(self, H2Error::GoAway | H2Error::Closed | H2Error::Reset(frame::REFUSED_STREAM))
    }
}

impl std::fmt::Display for H2Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            H2Error::Reset(code) => write!(f, "the server reset the stream (HTTP/2 error code {code})"),
            H2Error::GoAway => f.write_str("the server is going away (GOAWAY)"),
            H2Error::Broken => f.write_str("the connection closed"),
            H2Error::Protocol => f.write_str("the server broke the HTTP/2 protocol"),
            H2Error::Closed => f.write_str("the connection had already ended"),
            H2Error::Malformed => f.write_str("the server sent a malformed answer"),
        }
    }
}
