//! Large inputs from small ones: a fuzz input copied through, except that `MARK, count (3 bytes),
//! length (3 bytes)` repeats the last `length` bytes written so far `count` more times (big-endian;
//! a length of 0 or past what is written takes all of it). A few dozen bytes thus make a DATA frame
//! of 1 MiB, a header block past its cap or a 16 MiB body, which raw inputs of libFuzzer's
//! `-max_len` never reach, and the fuzzer mutates the counts as easily as any other byte.

use std::borrow::Cow;

/// Starts a repeat. Absent from the corpora of raw bytes, whose inputs keep their meaning.
pub const MARK: [u8; 4] = *b"\xF3rpt";
/// `input` with its repeats expanded, to `most` bytes at most (borrowed when it has none).
pub fn expand(input: &[u8], most: usize) -> Cow<'_, [u8]> {
    let Some(mut at) = find(input, 0) else { return Cow::Borrowed(input) };
    let mut out = Vec::with_capacity(input.len());
    let mut from = 0;
    loop {
        out.extend_from_slice(&input[from..at]);
        let Some(op) = input.get(at + MARK.len()..at + MARK.len() + 6) else {
            out.extend_from_slice(&input[at..]); // a mark cut short is plain bytes
            break;
        };
        let u24 = |b: &[u8]| (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize;
        repeat(&mut out, u24(&op[3..]), u24(&op[..3]), most);
        from = at + MARK.len() + 6;
        match find(input, from) {
            Some(next) => at = next,
            None => {
                out.extend_from_slice(&input[from..]);
                break;
            }
        }
    }
    out.truncate(most);
    Cow::Owned(out)
}

fn find(input: &[u8], from: usize) -> Option<usize> {
    input.get(from..)?.windows(MARK.len()).position(|w| w == MARK).map(|i| from + i)
}

/// Appends `count` copies of the last `length` bytes (up to `most` in all), doubling the copied
/// run at each step.
fn repeat(out: &mut Vec<u8>, length: usize, count: usize, most: usize) {
    let length = if length == 0 { out.len() } else { length.min(out.len()) };
    let total = (length * count).min(most.saturating_sub(out.len()));
    let start = out.len() - length;
    let mut added = 0;
    while added < total {
        // out[start..] repeats the pattern whole, so any prefix of it continues it.
        let n = (length + added).min(total - added);
        out.extend_from_within(start..start + n);
        added += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOST: usize = 20 << 20;

    fn op(count: usize, length: usize) -> Vec<u8> {
        let mut v = MARK.to_vec();
        v.extend_from_slice(&count.to_be_bytes()[5..]);
        v.extend_from_slice(&length.to_be_bytes()[5..]);
        v
    }

    #[test]
    fn inputs_without_a_mark_are_themselves() {
        assert!(matches!(expand(b"plain", MOST), Cow::Borrowed(b"plain")));
    }

    #[test]
    fn a_mark_repeats_the_bytes_before_it() {
        let input = [b"xab".to_vec(), op(3, 2), b"!".to_vec()].concat();
        assert_eq!(&*expand(&input, MOST), b"xabababab!");
        let input = [b"xy".to_vec(), op(2, 0), op(1, 1)].concat();
        assert_eq!(&*expand(&input, MOST), b"xyxyxyy", "length 0 is all written so far");
        assert_eq!(&*expand(&op(5, 1), MOST), b"", "nothing to repeat");
        let cut = [b"a".to_vec(), op(1, 1)[..6].to_vec()].concat();
        assert_eq!(&*expand(&cut, MOST), &cut[..], "a cut mark is plain bytes");
    }

    #[test]
    fn a_few_bytes_make_megabytes_and_no_more_than_the_most() {
        let input = [b"z".to_vec(), op((1 << 20) - 1, 1)].concat();
        assert_eq!(*expand(&input, MOST), vec![b'z'; 1 << 20]);
        let input = [b"abc".to_vec(), op(0xff_ffff, 3), op(0xff_ffff, 0)].concat();
        let out = expand(&input, MOST);
        assert_eq!(out.len(), MOST);
        assert!(out.chunks(3).all(|c| b"abc".starts_with(c)));
    }
}
