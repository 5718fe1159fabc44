use super::*;

fn varint(v: u64) -> Vec<u8> {
    match v {
        0..=0x3f => vec![v as u8],
        0x40..=0x3fff => ((v as u16) | 0x4000).to_be_bytes().to_vec(),
        0x4000..=0x3fff_ffff => ((v as u32) | 0x8000_0000).to_be_bytes().to_vec(),
        _ => (v | 0xc000_0000_0000_0000).to_be_bytes().to_vec(),
    }
}

/// A frame's head: its type and length.
fn head(ty: u64, length: u64) -> Vec<u8> {
    [varint(ty), varint(length)].concat()
}

fn guard(role: Role) -> (FrameGuard, Arc<AtomicBool>) {
    let draining = Arc::new(AtomicBool::new(false));
    (FrameGuard::new(role, draining.clone()), draining)
}

/// The same bytes whole and a byte at a time: the same verdict.
fn both_ways(role: Role, bytes: &[u8]) -> Result<(), Breach> {
    let whole = guard(role).0.check(bytes);
    let mut pieces = guard(role).0;
    let by_byte = bytes.chunks(1).try_for_each(|b| pieces.check(b));
    assert_eq!(whole, by_byte, "whole and byte by byte");
    whole
}

#[test]
fn a_header_section_over_its_bound_breaks_the_stream_at_its_head() {
    let limit = MAX_HEADER_LIST as u64;
    assert!(both_ways(Role::Request, &head(HEADERS, limit)).is_ok());
    let breach = both_ways(Role::Request, &head(HEADERS, limit + 1)).unwrap_err();
    assert!(!breach.connection, "a request's stream, not the connection: {breach:?}");
    assert!(breach.why.contains("header section"), "{breach:?}");
    // A HEADERS frame of the protocol's largest length, known from its head alone.
    assert!(both_ways(Role::Request, &head(HEADERS, (1 << 62) - 1)).is_err());
}

#[test]
fn data_of_any_length_passes_and_frames_after_it_are_read() {
    let mut bytes = head(HEADERS, 3);
    bytes.extend([0, 0, 0]);
    bytes.extend(head(DATA, 5));
    bytes.extend([7; 5]);
    bytes.extend(head(0x21, 2)); // a reserved frame type (0x1f * N + 0x21)
    bytes.extend([0; 2]);
    bytes.extend(head(HEADERS, 1)); // trailers
    bytes.push(0);
    assert!(both_ways(Role::Request, &bytes).is_ok());
    assert!(both_ways(Role::Request, &head(DATA, 1 << 40)).is_ok(), "the call counts DATA, holding none");
    // The payload of a long DATA frame is skipped, not read as frames.
    let mut long = head(DATA, 4);
    long.extend(head(HEADERS, u64::from(u32::MAX)));
    assert!(both_ways(Role::Request, &long).is_ok());
}

#[test]
fn an_unknown_frame_over_its_bound_breaks_the_stream() {
    let limit = u64::from(MAX_FRAME);
    assert!(both_ways(Role::Request, &head(0x21, limit)).is_ok());
    assert!(both_ways(Role::Request, &head(0x21, limit + 1)).is_err());
}

#[test]
fn a_control_stream_frame_over_its_bound_breaks_the_connection() {
    let mut bytes = varint(0x00); // the control stream's type
    bytes.extend(head(0x4, 2)); // SETTINGS
    bytes.extend([0x06, 0x10]);
    bytes.extend(head(0x1f * 7 + 0x21, (1 << 62) - 1));
    let breach = both_ways(Role::Unidirectional, &bytes).unwrap_err();
    assert!(breach.connection, "{breach:?}");
}

#[test]
fn a_control_stream_of_small_frames_is_bounded_in_all() {
    let (mut control, _) = guard(Role::Unidirectional);
    control.check(&varint(0x00)).unwrap();
    let mut frame = head(0x21, 1000);
    frame.extend([0; 1000]);
    let mut sent = 1u64;
    let breach = loop {
        match control.check(&frame) {
            Ok(()) => sent += frame.len() as u64,
            Err(breach) => break breach,
        }
        assert!(sent <= MAX_CONTROL_BYTES, "still taking frames past {MAX_CONTROL_BYTES} bytes");
    };
    assert!(breach.connection && sent + frame.len() as u64 > MAX_CONTROL_BYTES, "{breach:?} after {sent}");
}

#[test]
fn a_goaway_marks_the_connection_draining() {
    let (mut control, draining) = guard(Role::Unidirectional);
    let mut bytes = varint(0x00);
    bytes.extend(head(0x4, 0));
    control.check(&bytes).unwrap();
    assert!(!draining.load(Ordering::Relaxed));
    control.check(&[head(GOAWAY, 1), vec![8]].concat()).unwrap();
    assert!(draining.load(Ordering::Relaxed));
    // On a request stream the same type is no GOAWAY (h3 refuses it there).
    let (mut request, draining) = guard(Role::Request);
    let _ = request.check(&head(GOAWAY, 1));
    assert!(!draining.load(Ordering::Relaxed));
}

#[test]
fn qpack_and_unknown_streams_are_counted_after_their_type() {
    for ty in [0x01, 0x02, 0x03, 0x21] {
        let (mut stream, _) = guard(Role::Unidirectional);
        let mut first = varint(ty);
        first.extend(vec![0xff; MAX_OPAQUE_BYTES as usize]);
        assert!(stream.check(&first).is_ok(), "type {ty:#x}: at the bound");
        let breach = stream.check(&[0]).unwrap_err();
        assert!(breach.connection, "{breach:?}");
    }
}
