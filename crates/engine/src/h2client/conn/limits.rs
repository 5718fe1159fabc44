//! How much one HTTP/2 connection takes and holds: its flow-control windows, frame and header
//! list sizes, read sizes and the frames it lets wait for the writer.

/// Windows large enough that a 1 MB answer never waits for a WINDOW_UPDATE round trip.
pub(crate) const STREAM_WINDOW: u32 = 4 << 20;
pub(crate) const CONNECTION_WINDOW: u32 = 16 << 20;
/// The largest frame we accept (advertised in SETTINGS_MAX_FRAME_SIZE).
pub(crate) const MAX_FRAME: u32 = 1 << 20;
/// A read takes up to this much: a busy connection reads many answers in one system call, into a
/// buffer each runtime thread shares among its connections (read.rs).
pub(super) const READ_BUFFER: usize = 64 << 10;
/// Streams we open before the server's SETTINGS say how many it allows (RFC 9113 §6.5.2
/// recommends servers allow at least 100).
pub(super) const ASSUMED_MAX_STREAMS: usize = 100;
/// Header lists (decoded, counted as RFC 9113 §6.5.2 does: 32 bytes per field besides its name
/// and value) and header blocks (encoded) larger than this end the connection.
pub(crate) const MAX_HEADER_LIST: usize = 1 << 20;
/// Frames waiting for the writer beyond this (acknowledgements of SETTINGS and PINGs a server
/// floods us with while not reading) end the connection with ENHANCE_YOUR_CALM.
pub(crate) const MAX_PENDING_OUT: usize = 16 << 20;
