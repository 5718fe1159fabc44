//! The raw target's echo as a server sends it, read from memory through the code a run uses.

use super::pieces::{at_once, Pieces};
use crate::raw::{message, read_echo, ROOM};
use crate::record::Outcome;

/// Calls of `size` bytes on one connection whose server sends `data`, `step` bytes at a time,
/// until one ends the connection (16 at most): a call is ok only when the bytes it took are its
/// message, and none takes more than its message and the room read beyond it. Gives the outcomes.
pub fn raw_echo(data: &[u8], step: usize, size: usize) -> Vec<Outcome> {
    let message = message(size);
    let mut echo = vec![0; message.len() + ROOM];
    let mut stream = Pieces::new(data, step);
    let (mut outcomes, mut taken) = (Vec::new(), 0);
    for _ in 0..16 {
        let reply = at_once(read_echo(&mut stream, &mut echo, &message));
        let received = reply.bytes.received as usize;
        assert!(received <= message.len() + ROOM, "took {received} bytes");
        if reply.outcome == Outcome::Ok {
            assert_eq!(&data[taken..taken + received], &message[..], "an ok call's echo is its message");
        }
        taken += received;
        outcomes.push(reply.outcome);
        if !reply.keep_connection {
            break;
        }
    }
    outcomes
}
