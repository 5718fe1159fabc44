//! How the recent streams ended, for the frames that still name them once their call is gone
//! (RFC 9113 §5.1): after the server's END_STREAM, HEADERS or DATA is a connection error
//! STREAM_CLOSED; after the server's RST_STREAM, a stream error STREAM_CLOSED; after our own
//! RST_STREAM the frames already in flight are ignored. Two bits per stream for the last
//! `WINDOW` streams opened; older ones are ignored as ours would be.

/// Streams remembered (a connection keeps 512 bytes for them).
const WINDOW: u32 = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// We reset it, or it is older than the window: its frames are ignored.
    Unknown,
    /// The server ended it with END_STREAM.
    ByServer,
    /// The server reset it with RST_STREAM.
    ResetByServer,
}

pub struct EndedStreams {
    bits: Box<[u64; (WINDOW / 32) as usize]>,
}

impl Default for EndedStreams {
    fn default() -> Self {
        EndedStreams { bits: Box::new([0; (WINDOW / 32) as usize]) }
    }
}

impl EndedStreams {
    /// The word and the shift of client stream `id` (odd ids, one place each, in a ring).
    fn place(id: u32) -> (usize, u32) {
        let n = (id / 2) % WINDOW;
        ((n / 32) as usize, (n % 32) * 2)
    }

    /// A new stream takes the place of the one `WINDOW` streams before it.
    pub fn opened(&mut self, id: u32) {
        self.record(id, Ended::Unknown);
    }

    pub fn record(&mut self, id: u32, how: Ended) {
        let (word, shift) = Self::place(id);
        let bits = match how {
            Ended::Unknown => 0,
            Ended::ByServer => 1,
            Ended::ResetByServer => 2,
        };
        self.bits[word] = (self.bits[word] & !(3 << shift)) | (bits << shift);
    }

    /// How stream `id` ended, `next_id` being the id the next stream will take.
    pub fn get(&self, id: u32, next_id: u32) -> Ended {
        if next_id.saturating_sub(id) > 2 * WINDOW {
            return Ended::Unknown;
        }
        let (word, shift) = Self::place(id);
        match (self.bits[word] >> shift) & 3 {
            1 => Ended::ByServer,
            2 => Ended::ResetByServer,
            _ => Ended::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_remembered_for_a_window_then_forgotten() {
        let mut ended = EndedStreams::default();
        let mut next = 1;
        let open = |ended: &mut EndedStreams, next: &mut u32| {
            ended.opened(*next);
            *next += 2;
            *next - 2
        };
        let (a, b, c) = (open(&mut ended, &mut next), open(&mut ended, &mut next), open(&mut ended, &mut next));
        ended.record(a, Ended::ByServer);
        ended.record(b, Ended::ResetByServer);
        assert_eq!(ended.get(a, next), Ended::ByServer);
        assert_eq!(ended.get(b, next), Ended::ResetByServer);
        assert_eq!(ended.get(c, next), Ended::Unknown, "ours to reset, or still open");
        for _ in 0..WINDOW - 3 {
            open(&mut ended, &mut next);
        }
        assert_eq!(ended.get(a, next), Ended::ByServer, "the oldest of the window");
        let d = open(&mut ended, &mut next);
        assert_eq!(d / 2 % WINDOW, a / 2 % WINDOW, "the new stream takes the oldest's place");
        assert_eq!(ended.get(a, next), Ended::Unknown, "forgotten");
        assert_eq!(ended.get(d, next), Ended::Unknown);
        assert_eq!(ended.get(b, next), Ended::ResetByServer);
    }
}
