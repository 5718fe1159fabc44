//! gRPC's rules for an answer (`crates/engine/src/grpc_rules.rs`), fed arbitrary heads, trailers
//! and message counts: an ok verdict only for an answer that keeps every rule (checked against
//! the rules restated in `callbench_engine::fuzzing::grpc_rules`), never a failing status 0.
#![no_main]
use arbitrary::Arbitrary;
use callbench_engine::grpc::Shape;
use callbench_engine::h2pool::HeaderList;
use libfuzzer_sys::fuzz_target;

/// The names the rules read, and any other.
#[derive(Arbitrary, Debug)]
enum Name {
    ContentType,
    GrpcStatus,
    GrpcEncoding,
    GrpcMessage,
    Other(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Answer {
    shape: u8,
    http_status: u16,
    head: Vec<(Name, Vec<u8>)>,
    trailers: Option<Vec<(Name, Vec<u8>)>>,
    count: u8,
    any_data: bool,
    whole: bool,
    compressed: bool,
}

fn list(fields: &[(Name, Vec<u8>)]) -> HeaderList {
    let mut list = HeaderList::default();
    for (name, value) in fields {
        let name: &[u8] = match name {
            Name::ContentType => b"content-type",
            Name::GrpcStatus => b"grpc-status",
            Name::GrpcEncoding => b"grpc-encoding",
            Name::GrpcMessage => b"grpc-message",
            Name::Other(name) => name,
        };
        list.push(name, value);
    }
    list
}

fuzz_target!(|answer: Answer| {
    let shape = Shape::of(answer.shape & 1 != 0, answer.shape & 2 != 0);
    let trailers = answer.trailers.as_deref().map(list);
    let received = (u64::from(answer.count), answer.any_data, answer.whole, answer.compressed);
    let _ = callbench_engine::fuzzing::grpc_rules(
        shape,
        answer.http_status,
        &list(&answer.head),
        trailers.as_ref(),
        received,
    );
});
