//! What a server sends a reflection call, and protoset files, as `--reflect` and `--protoset`
//! read them. Byte 0 picks the reader (modulo 5): 0, gRPC messages in DATA (byte 1: the size of
//! the pieces, 0 = whole; then the data); 1, an answer's head (bytes 1-2: the HTTP status; then
//! content-type, grpc-status and grpc-message, separated by NUL bytes); 2, a reflection answer
//! (`ServerReflectionResponse`) whose files make a pool; 3, a protoset (`FileDescriptorSet`); 4,
//! one resolution's reflection answers within its bounds (`[3-byte length, answer]...`, repeats
//! expanded).
#![no_main]
use callbench_dynproto::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [select, rest @ ..] = data else { return };
    match select % 5 {
        0 => {
            if let [step, data @ ..] = rest {
                fuzzing::messages(data, if *step == 0 { usize::MAX } else { *step as usize });
            }
        }
        1 => {
            if let [high, low, head @ ..] = rest {
                let mut fields = head.splitn(3, |&b| b == 0).chain([&[][..]; 3]);
                let mut next = || fields.next().unwrap_or_default();
                let (content_type, status, message) = (next(), next(), next());
                fuzzing::answer_head(u16::from_be_bytes([*high, *low]), content_type, status, message);
            }
        }
        2 => drop(fuzzing::reflection_answer(rest)),
        3 => drop(fuzzing::protoset(rest)),
        _ => drop(fuzzing::reflection_answers(rest)),
    }
});
