//! Packets in time order, whatever order a capture wrote them in, without holding the capture:
//! a packet is held until one a [`WINDOW`] later was read (or [`HELD_BYTES`] of packets are
//! held), then let go in time order. The link's forwarder writes its packets in time order; other
//! tools (a capture of several queues) write some a little out of it.

use crate::pcap::Packet;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Duration;

/// How far out of time order a packet may be written and still be read in its place.
pub const WINDOW: Duration = Duration::from_secs(1);
/// The most packet bytes held at once, however many a window holds.
pub const HELD_BYTES: usize = 16 << 20;

/// The packets of `packets` in time order (stable: equal times keep the file's order), within
/// the window.
pub fn in_time_order<I: Iterator<Item = Packet>>(packets: I) -> InTimeOrder<I> {
    InTimeOrder { packets: packets.fuse(), held: BinaryHeap::new(), held_bytes: 0, latest: Duration::ZERO, read: 0 }
}

pub struct InTimeOrder<I> {
    packets: std::iter::Fuse<I>,
    held: BinaryHeap<Reverse<Held>>,
    held_bytes: usize,
    /// The latest time read so far.
    latest: Duration,
    /// Packets read so far: each one's place in the file breaks a tie.
    read: u64,
}

impl<I: Iterator<Item = Packet>> InTimeOrder<I> {
    /// The packet bytes held now.
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn release(&mut self) -> Option<Packet> {
        let Reverse(Held(_, packet)) = self.held.pop()?;
        self.held_bytes -= packet.bytes.len();
        Some(packet)
    }
}

impl<I: Iterator<Item = Packet>> Iterator for InTimeOrder<I> {
    type Item = Packet;

    fn next(&mut self) -> Option<Packet> {
        loop {
            let due = self.held.peek().is_some_and(|Reverse(h)| h.1.at + WINDOW <= self.latest);
            if due || self.held_bytes > HELD_BYTES {
                return self.release();
            }
            let Some(packet) = self.packets.next() else { return self.release() };
            self.latest = self.latest.max(packet.at);
            self.held_bytes += packet.bytes.len();
            self.held.push(Reverse(Held(self.read, packet)));
            self.read += 1;
        }
    }
}

/// A packet and its place in the file, ordered by time, then place.
struct Held(u64, Packet);

impl Ord for Held {
    fn cmp(&self, other: &Held) -> Ordering {
        (self.1.at, self.0).cmp(&(other.1.at, other.0))
    }
}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Held) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Held {}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64, size: usize) -> Packet {
        Packet { at: Duration::from_millis(ms), len: size as u32, bytes: vec![0x45; size] }
    }

    fn times(packets: impl Iterator<Item = Packet>) -> Vec<u64> {
        packets.map(|p| p.at.as_millis() as u64).collect()
    }

    #[test]
    fn packets_written_out_of_order_within_the_window_are_read_in_order() {
        let late = WINDOW.as_millis() as u64 / 2;
        let file = vec![at(0, 1), at(late + 10, 1), at(late, 1), at(5, 1), at(late, 2)];
        assert_eq!(times(in_time_order(file.into_iter())), vec![0, 5, late, late, late + 10]);
        // Equal times keep the file's order.
        let file = vec![at(7, 1), at(7, 2), at(3, 3)];
        let sizes: Vec<usize> = in_time_order(file.into_iter()).map(|p| p.bytes.len()).collect();
        assert_eq!(sizes, vec![3, 1, 2]);
    }

    #[test]
    fn a_packet_further_out_of_order_than_the_window_is_read_where_it_was_written() {
        let w = WINDOW.as_millis() as u64;
        // The second is let go once the third is read, a window after it; the fourth comes too late.
        let file = vec![at(0, 1), at(w + 10, 1), at(2 * w + 20, 1), at(5, 1)];
        assert_eq!(times(in_time_order(file.into_iter())), vec![0, w + 10, 5, 2 * w + 20]);
    }

    #[test]
    fn what_is_held_is_bounded_in_bytes_within_one_window() {
        // Packets of a megabyte a millisecond apart: a window's worth is far more than the bound.
        let size = 1 << 20;
        let count = (HELD_BYTES / size * 4) as u64;
        assert!(count < WINDOW.as_millis() as u64, "all within one window");
        let mut ordered = in_time_order((0..count).map(|ms| at(ms, size)));
        let mut most = 0;
        let mut seen = Vec::new();
        while let Some(p) = ordered.next() {
            most = most.max(ordered.held_bytes());
            seen.push(p.at.as_millis() as u64);
        }
        assert!(most <= HELD_BYTES + size, "held {most} bytes");
        assert_eq!(seen, (0..count).collect::<Vec<_>>());
    }
}
