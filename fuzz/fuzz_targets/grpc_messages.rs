//! The DATA of a gRPC answer: length-prefixed messages, compressed or not. Byte 0: bit 7 = the
//! first message is kept for a check, bits 0-6 the size of the pieces (0 = whole); then the data.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [flags, messages @ ..] = data {
        let step = (flags & 0x7f) as usize;
        let step = if step == 0 { usize::MAX } else { step };
        callbench_engine::fuzzing::grpc_messages(messages, step, flags & 0x80 != 0);
    }
});
