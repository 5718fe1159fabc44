//! Ping-pong through io_uring: a receive is always posted on every connection; when one completes
//! with a whole answer, the next call's send (and, single-shot, the receive after it) is queued,
//! and one io_uring_enter per loop submits everything queued and waits for the next completion.
//! A call costs no system call of its own when several connections' answers arrive together.
//! - `defer`: SINGLE_ISSUER + DEFER_TASKRUN, the kernel finishes completions only inside that
//!   enter, on this thread, instead of interrupting it;
//! - `multishot`: one receive per connection for the whole run, into buffers the kernel picks
//!   from a provided-buffer ring ([`BufRing`]), instead of one receive posted per answer.

use crate::buf_ring::BufRing;
use crate::outcome::{Outcome, Plan, Window};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

const RECV: u64 = 0;
const SEND: u64 = 1;
const BUFFER_GROUP: u16 = 1;

#[derive(Clone, Copy)]
pub struct Mode {
    pub defer: bool,
    pub multishot: bool,
}

pub fn run(streams: &[TcpStream], plan: &Plan, mode: Mode) -> Result<Outcome, String> {
    let (message, size, answer) = (&plan.request, plan.request.len(), plan.answer);
    // Declared before the ring, so dropped after it: the kernel may use both until then.
    let mut bufs = vec![vec![0u8; answer]; streams.len()];
    let mut provided = mode.multishot.then(|| {
        let entries = (4 * streams.len()).next_power_of_two().clamp(64, 32768) as u16;
        BufRing::new(entries, answer.max(64).next_power_of_two().min(65536))
    });
    let entries = (2 * streams.len() + 8).next_power_of_two() as u32;
    let mut builder = IoUring::builder();
    if mode.defer {
        builder.setup_single_issuer().setup_defer_taskrun();
    }
    let mut ring = builder.build(entries).map_err(|e| format!("io_uring is not available here: {e}"))?;
    if let Some(p) = &provided {
        p.register(&ring, BUFFER_GROUP).map_err(|e| format!("cannot register a buffer ring: {e}"))?;
    }
    let mut got = vec![0usize; streams.len()];
    let mut unsent = vec![0usize; streams.len()];
    let mut window = Window::new(plan);
    let mut sent = vec![Instant::now(); streams.len()];
    let mut queued: Vec<squeue::Entry> = Vec::with_capacity(2 * streams.len());
    let fd = |i: usize| types::Fd(streams[i].as_raw_fd());
    let send = |i: usize, from: usize| {
        opcode::Send::new(fd(i), message[from..].as_ptr(), (size - from) as u32)
            .build()
            .user_data((i as u64) << 1 | SEND)
    };
    let recv = |i: usize, buf: &mut Vec<u8>, from: usize| {
        opcode::Recv::new(fd(i), buf[from..].as_mut_ptr(), (answer - from) as u32)
            .build()
            .user_data((i as u64) << 1 | RECV)
    };
    let recv_multi = |i: usize| opcode::RecvMulti::new(fd(i), BUFFER_GROUP).build().user_data((i as u64) << 1 | RECV);
    for (i, buf) in bufs.iter_mut().enumerate() {
        unsent[i] = size;
        queued.push(send(i, 0));
        queued.push(if mode.multishot { recv_multi(i) } else { recv(i, buf, 0) });
    }
    let mut completions: Vec<(u64, i32, u32)> = Vec::with_capacity(2 * streams.len());
    let mut running = true;
    // Operations submitted whose last completion has not come (a multishot receive is one).
    let mut in_flight = 0usize;
    while running {
        in_flight += queued.len();
        for entry in queued.drain(..) {
            // SAFETY: every buffer an entry points at (the message, each connection's receive
            // buffer, the provided buffers) lives until after the ring is dropped, and each
            // connection has at most one send and one receive in flight.
            while unsafe { ring.submission().push(&entry) }.is_err() {
                ring.submit().map_err(|e| format!("io_uring_enter: {e}"))?;
            }
        }
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("io_uring_enter: {e}")),
        }
        completions.clear();
        completions.extend(ring.completion().map(|c: cqueue::Entry| (c.user_data(), c.result(), c.flags())));
        in_flight -= completions.iter().filter(|c| !cqueue::more(c.2)).count();
        let now = Instant::now();
        for &(data, result, flags) in &completions {
            let i = (data >> 1) as usize;
            if data & 1 == SEND {
                if result < 0 {
                    return Err(format!("send: {}", std::io::Error::from_raw_os_error(-result)));
                }
                unsent[i] -= result as usize;
                if unsent[i] > 0 {
                    queued.push(send(i, size - unsent[i]));
                }
                continue;
            }
            if let (Some(p), Some(bid)) = (provided.as_mut(), cqueue::buffer_select(flags)) {
                p.add(bid);
            }
            if mode.multishot && !cqueue::more(flags) {
                queued.push(recv_multi(i)); // ended (out of buffers, or a short one): posted again
            }
            if result == -libc::ENOBUFS && mode.multishot {
                continue;
            }
            if result < 0 {
                return Err(format!("receive: {}", std::io::Error::from_raw_os_error(-result)));
            }
            if result == 0 {
                return Err("the server closed a connection".into());
            }
            got[i] += result as usize;
            while got[i] >= answer {
                got[i] -= answer;
                running &= window.answered(sent[i], now);
                sent[i] = now;
                unsent[i] = size;
                queued.push(send(i, 0));
            }
            if !mode.multishot {
                queued.push(recv(i, &mut bufs[i], got[i]));
            }
        }
        if let Some(p) = &provided {
            p.publish();
        }
        running &= !window.over(now);
    }
    let outcome = window.finish();
    // The buffers must outlive what is in flight: shut the connections so that every receive and
    // send left ends now, and collect those completions before the buffers go.
    for s in streams {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    for _ in 0..1000 {
        if in_flight == 0 {
            break;
        }
        ring.submit_and_wait(1).map_err(|e| format!("io_uring_enter: {e}"))?;
        in_flight -= ring.completion().filter(|c| !cqueue::more(c.flags())).count();
    }
    if in_flight > 0 {
        // Leaking is what keeps the kernel from writing into freed memory if it never answered.
        std::mem::forget(bufs);
        std::mem::forget(provided.take());
    }
    Ok(outcome)
}
