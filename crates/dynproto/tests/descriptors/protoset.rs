//! Protoset files, written here from protox's FileDescriptorSet as protoc or
//! buf would write them, and broken ones.

use crate::common;

use callbench_dynproto::{decode_protoset, load_protoset, resolve, Source};
use callbench_transcode::encode_request;
use common::{contract_protos, scratch};
use prost::Message;
use prost_reflect::prost_types::FileDescriptorSet;

fn contract_set() -> FileDescriptorSet {
    let (files, includes) = contract_protos();
    protox::compile(files, includes).expect("the contract compiles")
}

#[tokio::test]
async fn a_protoset_file_resolves_like_the_protos() {
    let path = scratch("protoset").join("contract.protoset");
    std::fs::write(&path, contract_set().encode_to_vec()).unwrap();
    let method = resolve(&Source::Protoset(path), "callbench.v1.Auth/Test", None).await.expect("resolves");
    assert_eq!(method.input().full_name(), "callbench.v1.AuthRequest");
    let bytes = encode_request(&method, r#"{"id": "42", "password": "pw"}"#).unwrap();
    assert_eq!(bytes, [0x08, 42, 0x12, 2, b'p', b'w']);
}

#[test]
fn well_known_imports_may_be_left_out() {
    let dir = scratch("protoset-wkt");
    std::fs::write(
        dir.join("t.proto"),
        "syntax = \"proto3\";\npackage t;\nimport \"google/protobuf/duration.proto\";\n\
         message M { google.protobuf.Duration d = 1; }\nservice S { rpc Do(M) returns (M); }\n",
    )
    .unwrap();
    let set = protox::Compiler::new([&dir]).unwrap().open_file("t.proto").unwrap().file_descriptor_set();
    assert_eq!(set.file.len(), 1, "built without imports, as protoc without --include_imports");
    let pool = decode_protoset(&set.encode_to_vec(), "test").expect("duration.proto comes from the built-in copy");
    assert!(pool.get_message_by_name("google.protobuf.Duration").is_some());
}

#[test]
fn a_missing_import_names_it() {
    let set = contract_set();
    // Keep only a file that imports nothing... then make it import something absent.
    let mut file = set.file.into_iter().find(|f| f.name() == "callbench/v1/auth.proto").unwrap();
    file.dependency.push("other/thing.proto".into());
    let bytes = FileDescriptorSet { file: vec![file] }.encode_to_vec();
    let err = decode_protoset(&bytes, "protoset x.protoset").unwrap_err().to_string();
    assert_eq!(
        err,
        "protoset x.protoset: callbench/v1/auth.proto imports other/thing.proto, which is missing \
         (build the protoset with --include_imports)"
    );
}

#[test]
fn truncated_or_garbled_protosets_are_errors_not_panics() {
    let bytes = contract_set().encode_to_vec();
    let path = scratch("protoset-cut").join("cut.protoset");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = load_protoset(&path).unwrap_err().to_string();
    assert!(err.starts_with(&format!("protoset {} is not a FileDescriptorSet", path.display())), "{err}");

    // Every prefix, and a byte flipped at many places: Err or Ok, never a panic.
    for cut in 0..bytes.len() {
        let _ = decode_protoset(&bytes[..cut], "cut");
    }
    for at in (0..bytes.len()).step_by(7) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut garbled = bytes.clone();
            garbled[at] ^= flip;
            if let Err(err) = decode_protoset(&garbled, "garbled") {
                assert!(!err.to_string().contains('\n'), "{err}");
            }
        }
    }
    assert_eq!(decode_protoset(&[], "empty").unwrap_err().to_string(), "empty holds no file descriptors");
    let err = load_protoset(&path.with_file_name("absent.protoset")).unwrap_err().to_string();
    assert!(err.starts_with("cannot read protoset "), "{err}");
}

#[test]
fn an_unknown_syntax_is_an_error_not_a_panic() {
    // prost-reflect 0.16 panics on this one; we check it first.
    let mut set = contract_set();
    set.file[0].syntax = Some("proto4".into());
    let err = decode_protoset(&set.encode_to_vec(), "p").unwrap_err().to_string();
    assert_eq!(err, format!("p: {} has syntax \"proto4\": only proto2 and proto3 are supported", set.file[0].name()));
    // Editions are lowered (src/editions/descriptors.rs); one that names no edition cannot be.
    set.file[0].syntax = Some("editions".into());
    let err = decode_protoset(&set.encode_to_vec(), "p").unwrap_err().to_string();
    assert_eq!(err, format!("p: {}: syntax \"editions\" without an edition", set.file[0].name()));
    // An empty syntax is proto2, as protoc writes it.
    let mut set = contract_set();
    for file in &mut set.file {
        file.syntax = Some(String::new());
    }
    assert!(decode_protoset(&set.encode_to_vec(), "p").is_ok());
}
