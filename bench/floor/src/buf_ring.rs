//! A ring of provided buffers (IORING_REGISTER_PBUF_RING): the kernel picks a buffer for each
//! multishot receive's completion and names it in the CQE; the buffer goes back once read.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicU16, Ordering};

pub struct BufRing {
    base: *mut BufRingEntry,
    layout: Layout,
    mask: u16,
    tail: u16,
    bufs: Vec<u8>,
    buf_len: usize,
}

impl BufRing {
    /// `entries` (a power of two, at most 32768) buffers of `buf_len` bytes, all given to the kernel.
    pub fn new(entries: u16, buf_len: usize) -> BufRing {
        assert!(entries.is_power_of_two() && entries <= 32768);
        let layout = Layout::from_size_align(entries as usize * std::mem::size_of::<BufRingEntry>(), 4096)
            .expect("a page-aligned layout");
        // SAFETY: a non-zero size.
        let base = unsafe { alloc_zeroed(layout) } as *mut BufRingEntry;
        assert!(!base.is_null(), "out of memory for the buffer ring");
        let mut ring =
            BufRing { base, layout, mask: entries - 1, tail: 0, bufs: vec![0; entries as usize * buf_len], buf_len };
        for bid in 0..entries {
            ring.add(bid);
        }
        ring.publish();
        ring
    }

    /// Registers the ring as buffer group `bgid` of `ring`.
    pub fn register(&self, ring: &IoUring, bgid: u16) -> std::io::Result<()> {
        // SAFETY: the ring's memory is page-aligned and lives until `self` drops, after the
        // io_uring that uses it (the caller drops that first).
        unsafe { ring.submitter().register_buf_ring_with_flags(self.base as u64, self.mask + 1, bgid, 0) }
    }

    /// Gives buffer `bid` back (seen by the kernel at the next [`BufRing::publish`]).
    pub fn add(&mut self, bid: u16) {
        // SAFETY: the index is masked into the ring; `bid` names a buffer within `bufs`.
        unsafe {
            let entry = &mut *self.base.add((self.tail & self.mask) as usize);
            entry.set_addr(self.bufs.as_ptr().add(bid as usize * self.buf_len) as u64);
            entry.set_len(self.buf_len as u32);
            entry.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    pub fn publish(&self) {
        // SAFETY: the tail field of the first entry, 2-byte aligned, shared with the kernel.
        unsafe {
            let tail = BufRingEntry::tail(self.base) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base as *mut u8, self.layout) }
    }
}
