//! The buffer ring's bookkeeping without a kernel: what `put` and `publish` leave in the entries
//! the kernel reads. No system call but sysconf, so Miri runs these too
//! (`cargo +nightly miri test -p callbench-engine --lib uring::buffers`).

use super::*;
use std::ptr::addr_of;

/// Entry `slot` as the kernel reads it: address, length, buffer id.
fn entry(buffers: &ProvidedBuffers, slot: usize) -> (u64, u32, u16) {
    assert!(slot < buffers.shape.count as usize);
    // SAFETY: inside `entries`; plain reads of the fields the kernel only reads, no reference.
    unsafe {
        let entry = buffers.entries.ptr.as_ptr().cast::<RawEntry>().add(slot);
        (addr_of!((*entry).addr).read(), addr_of!((*entry).len).read(), addr_of!((*entry).bid).read())
    }
}

fn published(buffers: &ProvidedBuffers) -> u16 {
    buffers.tail().load(Ordering::Acquire)
}

#[test]
fn every_buffer_starts_in_the_ring_and_the_tail_counts_them() {
    let buffers = ProvidedBuffers::new(BufferShape { count: 8, size: 64 }).unwrap();
    for id in 0..8u16 {
        assert_eq!(entry(&buffers, id as usize), (buffers.buffer_ptr(id) as u64, 64, id));
    }
    assert_eq!(published(&buffers), 8);
}

#[test]
fn a_buffer_given_back_fills_the_slot_after_the_tail() {
    let mut buffers = ProvidedBuffers::new(BufferShape { count: 4, size: 16 }).unwrap();
    // The kernel took buffers 2 and 0 (in that order): they come back into slots 0 and 1.
    buffers.lend(2);
    buffers.lend(0);
    assert_eq!(buffers.outstanding(), 2);
    buffers.give_back(2);
    assert_eq!(entry(&buffers, 0), (buffers.buffer_ptr(2) as u64, 16, 2));
    assert_eq!(published(&buffers), 5, "the tail is the first entry's last field, and survives its refill");
    buffers.give_back(0);
    assert_eq!(entry(&buffers, 1), (buffers.buffer_ptr(0) as u64, 16, 0));
    assert_eq!(published(&buffers), 6);
    assert_eq!(buffers.outstanding(), 0);
    // An id the ring never gave out changes nothing.
    buffers.give_back(4);
    assert_eq!(published(&buffers), 6);
}

#[test]
fn the_tail_wraps_and_the_slots_with_it() {
    let mut buffers = ProvidedBuffers::new(BufferShape { count: 4, size: 16 }).unwrap();
    buffers.tail = u16::MAX;
    buffers.give_back(3);
    assert_eq!(entry(&buffers, 3).2, 3);
    assert_eq!(published(&buffers), 0);
    buffers.give_back(1);
    assert_eq!(entry(&buffers, 0).2, 1);
    assert_eq!(published(&buffers), 1);
}

/// A pointer to the tail that a thread standing for the kernel can hold.
struct Tail(*const AtomicU16);
// SAFETY: it points to an atomic the test keeps alive until the thread is joined.
unsafe impl Send for Tail {}

#[test]
fn the_kernel_may_read_the_tail_while_the_first_entry_is_refilled() {
    // The kernel reads the tail (an acquire load) whenever a receive picks a buffer, also while
    // the ring refills the first entry, which holds the tail: the refill must not claim the whole
    // entry (a `&mut` over it would race with that read, which Miri reports).
    let mut buffers = ProvidedBuffers::new(BufferShape { count: 2, size: 16 }).unwrap();
    let tail = Tail(buffers.tail());
    let kernel = std::thread::spawn(move || {
        let tail = tail;
        // SAFETY: the buffers outlive this thread (joined below).
        let tail = unsafe { &*tail.0 };
        (0..200).map(|_| tail.load(Ordering::Acquire)).max().unwrap()
    });
    for round in 0..20u16 {
        buffers.lend(round % 2);
        buffers.give_back(round % 2);
    }
    let seen = kernel.join().unwrap();
    assert!((2..=22).contains(&seen), "the kernel read a tail never published: {seen}");
    assert_eq!(published(&buffers), 22);
}
