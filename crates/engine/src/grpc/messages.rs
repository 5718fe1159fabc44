//! The messages of a gRPC answer, split from its DATA as it streams in: a 5-byte prefix
//! (compressed flag, big-endian length) and the message, counted and, when checked, the first
//! one kept.

/// Splits the answer's data into length-prefixed messages as chunks arrive, holding only the
/// prefix being read and, when checked, the first message: a length prefix of 4 GiB costs
/// nothing until its bytes come, and a message to keep beyond `limits::MAX_KEPT_BODY` is refused.
#[derive(Default)]
pub(crate) struct Messages {
    /// The 5-byte prefix of the next message, as far as it has come.
    prefix: Vec<u8>,
    /// The message being read: its length and the bytes of it still to come.
    current: Option<(usize, usize)>,
    pub(crate) count: u64,
    pub(crate) payload: u64,
    /// The first message and whether it was compressed, kept only when checked.
    pub(crate) first: Option<(bool, Vec<u8>)>,
    /// Whether any message came with the compressed flag.
    pub(crate) compressed: bool,
    keeping: bool,
    pub(crate) broken: bool,
    /// Whether any byte of DATA came (a trailers-only answer has none).
    pub(crate) any_data: bool,
}

impl Messages {
    pub(crate) fn push(&mut self, mut chunk: &[u8], keep_first: bool) {
        self.any_data |= !chunk.is_empty();
        while !chunk.is_empty() && !self.broken {
            let Some((len, left)) = self.current else {
                let n = (5 - self.prefix.len()).min(chunk.len());
                self.prefix.extend_from_slice(&chunk[..n]);
                chunk = &chunk[n..];
                if self.prefix.len() == 5 {
                    self.start_message(keep_first);
                }
                continue;
            };
            let n = left.min(chunk.len());
            if self.keeping {
                if let Some((_, kept)) = &mut self.first {
                    kept.extend_from_slice(&chunk[..n]);
                }
            }
            chunk = &chunk[n..];
            self.current = Some((len, left - n));
            if left == n {
                self.count += 1;
                self.payload += len as u64;
                self.current = None;
                self.keeping = false;
            }
        }
        if let Some((len, 0)) = self.current {
            // An empty message ends with its prefix.
            self.count += 1;
            self.payload += len as u64;
            self.current = None;
            self.keeping = false;
        }
    }

    fn start_message(&mut self, keep_first: bool) {
        let compressed = match self.prefix[0] {
            0 => false,
            1 => true,
            _ => {
                self.broken = true;
                return;
            }
        };
        self.compressed |= compressed;
        let len = u32::from_be_bytes(self.prefix[1..5].try_into().expect("five bytes")) as usize;
        self.prefix.clear();
        self.keeping = keep_first && self.first.is_none();
        if self.keeping {
            if len > crate::limits::MAX_KEPT_BODY {
                self.broken = true;
                return;
            }
            self.first = Some((compressed, Vec::new()));
        }
        self.current = Some((len, len));
    }

    /// Whether the data ended between messages.
    pub(crate) fn complete(&self) -> bool {
        self.prefix.is_empty() && self.current.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(flag: u8, body: &[u8]) -> Vec<u8> {
        let mut f = vec![flag];
        f.extend_from_slice(&(body.len() as u32).to_be_bytes());
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn messages_split_across_chunks() {
        let data = [frame(0, b"first"), frame(0, b""), frame(1, b"zz")].concat();
        for split in 0..data.len() {
            let mut m = Messages::default();
            m.push(&data[..split], true);
            m.push(&data[split..], true);
            assert_eq!((m.count, m.payload, m.broken), (3, 7, false), "split at {split}");
            assert!(m.complete());
            assert_eq!(m.first, Some((false, b"first".to_vec())));
        }
        let mut m = Messages::default();
        m.push(&frame(7, b"x"), false);
        assert!(m.broken);
        // Cut short: the data ends inside a prefix or a message.
        for cut in [3, 7] {
            let mut m = Messages::default();
            m.push(&frame(0, b"first")[..cut], true);
            assert!(!m.complete() && !m.broken, "cut at {cut}");
        }
    }

    #[test]
    fn a_huge_length_prefix_holds_nothing_until_its_bytes_come() {
        let mut huge = vec![0u8];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        let mut m = Messages::default();
        m.push(&huge, false);
        m.push(&[7u8; 1000], false);
        assert!(!m.broken && !m.complete() && m.first.is_none() && m.prefix.is_empty());
        // Kept (checked), it is refused at once: beyond what the engine keeps.
        let mut m = Messages::default();
        m.push(&huge, true);
        assert!(m.broken);
    }
}
