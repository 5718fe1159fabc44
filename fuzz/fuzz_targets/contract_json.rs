//! JSON <-> protobuf for the contract's messages, as `callbench load -d` and gRPC checks use it.
//! Byte 0: the method (bits 0-6: its place among the contract's methods sorted by full name,
//! modulo their number) and the direction (bit 7: 0 = a request
//! as JSON text, 1 = an answer as protobuf bytes); then the text or bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::sync::OnceLock;

fn methods() -> &'static [MethodDescriptor] {
    static METHODS: OnceLock<Vec<MethodDescriptor>> = OnceLock::new();
    METHODS.get_or_init(|| {
        let mut all: Vec<MethodDescriptor> =
            callbench_contract::descriptor_pool().services().flat_map(|s| s.methods().collect::<Vec<_>>()).collect();
        all.sort_by(|a, b| a.full_name().cmp(b.full_name()));
        all
    })
}

fuzz_target!(|data: &[u8]| {
    let [select, rest @ ..] = data else { return };
    let method = &methods()[(select & 0x7f) as usize % methods().len()];
    if select & 0x80 == 0 {
        // A request in JSON: what encodes decodes, prints, and encodes again to the same bytes.
        let Ok(json) = std::str::from_utf8(rest) else { return };
        if let Ok(bytes) = callbench_transcode::encode_request(method, json) {
            let message = DynamicMessage::decode(method.input(), bytes.as_slice()).expect("our own encoding decodes");
            let printed = callbench_transcode::to_json(&message);
            let again =
                callbench_transcode::encode_request(method, &printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
            assert_eq!(bytes, again, "{json:?} printed as {printed}");
        }
    } else if let Ok(message) = callbench_transcode::decode_response(method, rest) {
        // An answer's bytes: what decodes prints as JSON that reads back to the same JSON.
        let printed = callbench_transcode::to_json(&message);
        let mut reader = serde_json::Deserializer::from_str(&printed);
        let back =
            DynamicMessage::deserialize(method.output(), &mut reader).unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(callbench_transcode::to_json(&back), printed);
    }
});
