//! A connection's streams with a slot: the slots side by side in one vector (as many places as
//! streams were ever alive at once), found by stream id through a small index.
//!
//! A map holding the slots themselves kept twice the streams' room: with calls ending and starting
//! all the time, its deleted places filled it and it doubled its room
//! (bench/results/h2-stream-memory-2026-12-06.md). Here only the index's small places grow.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Stream ids are consecutive odd numbers: hashing them is a waste.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u32 keys")
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(super) struct Streams<Slot> {
    /// Stream id → its place in `slots` and `ids`.
    index: HashMap<u32, u32, BuildHasherDefault<IdHasher>>,
    slots: Vec<Slot>,
    /// The id of each slot, place for place.
    ids: Vec<u32>,
}

impl<Slot> Default for Streams<Slot> {
    fn default() -> Self {
        Streams { index: HashMap::default(), slots: Vec::new(), ids: Vec::new() }
    }
}

impl<Slot> Streams<Slot> {
    pub(super) fn insert(&mut self, id: u32, slot: Slot) {
        if let Some(&at) = self.index.get(&id) {
            self.slots[at as usize] = slot;
            return;
        }
        if self.slots.len() == self.slots.capacity() {
            // Room for an eighth more, not twice as many: 100 streams take 109 places, not 128.
            let more = (self.slots.len() / 8).max(4);
            self.slots.reserve_exact(more);
            self.ids.reserve_exact(more);
        }
        self.index.insert(id, self.slots.len() as u32);
        self.slots.push(slot);
        self.ids.push(id);
    }

    pub(super) fn get(&self, id: &u32) -> Option<&Slot> {
        self.index.get(id).map(|&at| &self.slots[at as usize])
    }

    pub(super) fn get_mut(&mut self, id: &u32) -> Option<&mut Slot> {
        self.index.get(id).map(|&at| &mut self.slots[at as usize])
    }

    /// Takes stream `id`'s slot out; the last slot moves into its place.
    pub(super) fn remove(&mut self, id: &u32) -> Option<Slot> {
        let at = self.index.remove(id)? as usize;
        let slot = self.slots.swap_remove(at);
        self.ids.swap_remove(at);
        if let Some(&moved) = self.ids.get(at) {
            self.index.insert(moved, at as u32);
        }
        Some(slot)
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        self.slots.iter_mut()
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&u32, &mut Slot)> {
        self.ids.iter().zip(self.slots.iter_mut())
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot: what the tests tell apart.
    struct Slot {
        received: u64,
    }

    fn slot(received: u64) -> Slot {
        Slot { received }
    }

    #[test]
    fn a_removed_stream_leaves_the_others_found_by_their_ids() {
        let mut streams = Streams::<Slot>::default();
        for id in [1, 3, 5, 7] {
            streams.insert(id, slot(u64::from(id)));
        }
        assert_eq!(streams.remove(&3).map(|s| s.received), Some(3));
        assert!(streams.remove(&3).is_none());
        assert!(streams.get(&3).is_none());
        for id in [1, 5, 7] {
            assert_eq!(streams.get(&id).map(|s| s.received), Some(u64::from(id)));
        }
        streams.get_mut(&7).unwrap().received = 70;
        assert_eq!(streams.remove(&7).map(|s| s.received), Some(70)); // the last one, nothing moves
        assert_eq!(streams.remove(&1).map(|s| s.received), Some(1));
        assert_eq!(streams.get(&5).map(|s| s.received), Some(5));
        assert_eq!(streams.len(), 1);
        let seen: Vec<u32> = streams.iter_mut().map(|(&id, _)| id).collect();
        assert_eq!(seen, [5]);
    }

    #[test]
    fn streams_coming_and_going_keep_as_many_places_as_were_alive_at_once() {
        let mut streams = Streams::<Slot>::default();
        let mut id = 1;
        for _ in 0..100 {
            streams.insert(id, slot(0));
            id += 2;
        }
        let room = streams.slots.capacity();
        for oldest in (1..20_000).step_by(2) {
            streams.remove(&oldest);
            streams.insert(id, slot(0));
            id += 2;
        }
        assert_eq!(streams.len(), 100);
        assert_eq!(streams.slots.capacity(), room);
        assert!(streams.index.capacity() <= 4 * 100, "{}", streams.index.capacity());
    }

    #[test]
    fn inserting_an_id_again_replaces_its_slot() {
        let mut streams = Streams::<Slot>::default();
        streams.insert(1, slot(1));
        streams.insert(1, slot(2));
        assert_eq!(streams.len(), 1);
        assert_eq!(streams.get(&1).map(|s| s.received), Some(2));
    }
}
