//! Ping-pong through io_uring: a receive is always posted on every connection; when one completes
//! with a whole answer, the next call's send and the receive after it are queued, and one
//! io_uring_enter per loop submits everything queued and waits for the next completion. A call
//! costs no system call of its own when several connections' answers arrive together.
//! With `defer`, the ring is SINGLE_ISSUER + DEFER_TASKRUN: the kernel finishes completions only
//! inside that enter, on this thread, instead of interrupting it.

use crate::outcome::{Outcome, Plan, Window};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

const RECV: u64 = 0;
const SEND: u64 = 1;

pub fn run(streams: &[TcpStream], plan: &Plan, defer: bool) -> Result<Outcome, String> {
    let entries = (2 * streams.len() + 8).next_power_of_two() as u32;
    let mut builder = IoUring::builder();
    if defer {
        builder.setup_single_issuer().setup_defer_taskrun();
    }
    let mut ring = builder.build(entries).map_err(|e| format!("io_uring is not available here: {e}"))?;
    let (message, size) = (&plan.request, plan.request.len());
    let answer = plan.answer;
    let mut bufs = vec![vec![0u8; answer]; streams.len()];
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
    for (i, buf) in bufs.iter_mut().enumerate() {
        unsent[i] = size;
        queued.push(send(i, 0));
        queued.push(recv(i, buf, 0));
    }
    let mut completions: Vec<(u64, i32)> = Vec::with_capacity(2 * streams.len());
    let mut running = true;
    let mut in_flight = 0usize;
    while running {
        in_flight += queued.len();
        for entry in queued.drain(..) {
            // SAFETY: every buffer an entry points at (the message, each connection's receive
            // buffer) lives until the ring is dropped at the end of this function, and each
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
        completions.extend(ring.completion().map(|c: cqueue::Entry| (c.user_data(), c.result())));
        in_flight -= completions.len();
        let now = Instant::now();
        for &(data, result) in &completions {
            let i = (data >> 1) as usize;
            if result < 0 {
                return Err(format!("{}: {}", op_name(data), std::io::Error::from_raw_os_error(-result)));
            }
            let n = result as usize;
            if data & 1 == SEND {
                unsent[i] -= n;
                if unsent[i] > 0 {
                    queued.push(send(i, size - unsent[i]));
                }
                continue;
            }
            if n == 0 {
                return Err("the server closed a connection".into());
            }
            got[i] += n;
            if got[i] == answer {
                got[i] = 0;
                running &= window.answered(sent[i], now);
                sent[i] = now;
                unsent[i] = size;
                queued.push(send(i, 0));
            }
            queued.push(recv(i, &mut bufs[i], got[i]));
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
        in_flight -= ring.completion().count();
    }
    if in_flight > 0 {
        // Leaking is what keeps the kernel from writing into freed memory if it never answered.
        std::mem::forget(bufs);
    }
    Ok(outcome)
}

fn op_name(data: u64) -> &'static str {
    if data & 1 == SEND {
        "send"
    } else {
        "receive"
    }
}
