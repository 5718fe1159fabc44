//! The ring's provided buffers (`IORING_REGISTER_PBUF_RING`): the kernel picks one for each
//! message a multishot receive takes, and names it in the completion; the stream copies the bytes
//! out and gives the buffer back at once.

use io_uring::IoUring;
use std::alloc::Layout;
use std::io;
use std::ptr::{addr_of_mut, NonNull};
use std::sync::atomic::{AtomicU16, Ordering};

/// One entry of a buffer ring as the kernel lays it out (`struct io_uring_buf`); the first
/// entry's `resv` is the ring's tail, which the kernel reads at any time.
#[repr(C)]
struct RawEntry {
    addr: u64,
    len: u32,
    bid: u16,
    resv: u16,
}

const _: () = assert!(size_of::<RawEntry>() == size_of::<io_uring::types::BufRingEntry>());

/// The buffer group of the ring's provided buffers (each ring has its own groups).
pub const GROUP: u16 = 0;

/// How many buffers and of which size.
#[derive(Debug, Clone, Copy)]
pub struct BufferShape {
    /// A power of two (the kernel's rule for a buffer ring), at most 32768.
    pub count: u16,
    pub size: u32,
}

impl Default for BufferShape {
    /// 1024 buffers of 4 KiB (4 MiB a ring): a page holds a typical answer whole, and a larger
    /// one takes several buffers (a completion each). 1024 covers every connection's unread
    /// answer at the concurrencies the engine runs a target at; beyond, a receive meets
    /// ENOBUFS and that read falls back to a single-shot receive (see `UringStream`).
    fn default() -> Self {
        BufferShape { count: 1024, size: 4096 }
    }
}

/// Page-aligned memory that is never moved, freed on drop unless leaked.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl Block {
    fn zeroed(size: usize) -> io::Result<Block> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let layout = Layout::from_size_align(size.max(1), page).map_err(io::Error::other)?;
        // SAFETY: the layout's size is not zero.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        Ok(Block { ptr, layout })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, and freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// A registered buffer ring and the buffers it hands out.
pub struct ProvidedBuffers {
    /// `shape.count` entries; the first's reserved field is the tail the kernel reads.
    entries: Block,
    memory: Block,
    shape: BufferShape,
    /// The tail as published (wrapping): the next entry to fill is `tail & (count - 1)`.
    tail: u16,
    /// Buffers the kernel handed to completions and not given back yet.
    lent: usize,
}

// SAFETY: the raw memory is owned by this value alone (the kernel aside), as a Vec's would be.
unsafe impl Send for ProvidedBuffers {}

impl ProvidedBuffers {
    /// Registers `shape.count` buffers with `ring` as [`GROUP`], all given to the kernel.
    pub fn register(ring: &IoUring, shape: BufferShape) -> io::Result<ProvidedBuffers> {
        if !shape.count.is_power_of_two() || shape.count > 32768 || shape.size == 0 {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let buffers = Self::new(shape)?;
        // SAFETY: the entries are page-aligned and `count` long, and live until this value is
        // dropped, which `State` does only after unregistering (or never: `leak`).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(buffers.entries.ptr.as_ptr() as u64, shape.count, GROUP, 0)
        }?;
        Ok(buffers)
    }

    /// `shape.count` buffers, all in the ring's entries and published, not registered yet.
    fn new(shape: BufferShape) -> io::Result<ProvidedBuffers> {
        let entries = Block::zeroed(shape.count as usize * size_of::<RawEntry>())?;
        let memory = Block::zeroed(shape.count as usize * shape.size as usize)?;
        let mut buffers = ProvidedBuffers { entries, memory, shape, tail: 0, lent: 0 };
        (0..shape.count).for_each(|id| buffers.put(id));
        buffers.publish();
        Ok(buffers)
    }

    /// The `len` bytes the kernel received into buffer `id`, which a completion just named.
    /// None for an id this ring never gave out (not from this kernel).
    pub fn received(&self, id: u16, len: usize) -> Option<&[u8]> {
        if id >= self.shape.count || len > self.shape.size as usize {
            return None;
        }
        // SAFETY: in bounds of `memory` (checked above); the kernel wrote these bytes before
        // posting the completion and does not touch the buffer again until `give_back`, which
        // needs `&mut self`, so not while this borrow lives.
        Some(unsafe { std::slice::from_raw_parts(self.buffer_ptr(id), len) })
    }

    /// The kernel named buffer `id` in a completion: it is ours until given back.
    pub fn lend(&mut self, id: u16) {
        if id < self.shape.count {
            self.lent += 1;
        }
    }

    /// Gives buffer `id` back to the kernel, for the next messages.
    pub fn give_back(&mut self, id: u16) {
        if id >= self.shape.count {
            return;
        }
        self.lent = self.lent.saturating_sub(1);
        self.put(id);
        self.publish();
    }

    /// Buffers handed out in completions and not given back yet.
    #[cfg(test)]
    pub fn outstanding(&self) -> usize {
        self.lent
    }

    /// Leaves the memory allocated for good: the kernel may still write it.
    pub fn leak(self) {
        std::mem::forget(self);
    }

    fn buffer_ptr(&self, id: u16) -> *mut u8 {
        // SAFETY: `id < count`, so the offset stays inside `memory`.
        unsafe { self.memory.ptr.as_ptr().add(id as usize * self.shape.size as usize) }
    }

    /// Fills the entry after the tail with buffer `id` (seen by the kernel once published).
    fn put(&mut self, id: u16) {
        let slot = (self.tail & (self.shape.count - 1)) as usize;
        let addr = self.buffer_ptr(id) as u64;
        // SAFETY: `slot < count`, inside `entries`. Raw writes of three fields, no reference:
        // the entries from the tail on are not the kernel's until `publish` moves the tail past
        // them, but the first entry's `resv` is the tail, which the kernel may read meanwhile.
        unsafe {
            let entry = self.entries.ptr.as_ptr().cast::<RawEntry>().add(slot);
            addr_of_mut!((*entry).addr).write(addr);
            addr_of_mut!((*entry).len).write(self.shape.size);
            addr_of_mut!((*entry).bid).write(id);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// The tail the kernel reads: the first entry's `resv`.
    fn tail(&self) -> &AtomicU16 {
        // SAFETY: inside the first entry, aligned for a u16, and only ever accessed atomically:
        // by `publish` (and tests) here, with `smp_load_acquire` by the kernel.
        unsafe { AtomicU16::from_ptr(addr_of_mut!((*self.entries.ptr.as_ptr().cast::<RawEntry>()).resv)) }
    }

    /// Makes the filled entries the kernel's: release, so it sees them filled.
    fn publish(&self) {
        self.tail().store(self.tail, Ordering::Release);
    }
}

#[cfg(test)]
mod tests;
