//! The DATA of a gRPC answer: length-prefixed messages, compressed or not. Byte 0: bit 7 = the
//! first message is kept for a check, bits 0-6 the size of the pieces (0 = whole); then the data,
//! repeats expanded (`fuzzing::expand`: a kept message at and past its 16 MiB cap).
#![no_main]
use callbench_engine::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let [flags, messages @ ..] = data {
        let step = (flags & 0x7f) as usize;
        let step = if step == 0 { usize::MAX } else { step };
        fuzzing::grpc_messages(&fuzzing::expand(messages, fuzzing::most::KEPT), step, flags & 0x80 != 0);
    }
});
