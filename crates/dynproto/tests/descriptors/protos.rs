//! Descriptors from .proto files (the repo's contract and files written here),
//! method lookup and JSON <-> protobuf.

use crate::common;

use callbench_dynproto::{grpc_path, is_server_streaming, load_protos, resolve, DynprotoError, Source};
use callbench_transcode::{decode_response, encode_request, to_json, TranscodeError};
use common::{contract_protos, scratch};
use prost_reflect::DynamicMessage;
use std::path::PathBuf;

fn contract() -> Source {
    let (files, import_paths) = contract_protos();
    Source::Protos { files, import_paths }
}

#[tokio::test]
async fn life_step_from_the_contract_round_trips_json() {
    let method = resolve(&contract(), "callbench.v1.Life/Step", None).await.expect("resolves");
    assert_eq!(method.input().full_name(), "callbench.v1.StepRequest");
    assert_eq!(method.output().full_name(), "callbench.v1.Board");
    assert_eq!(grpc_path(&method), "/callbench.v1.Life/Step");
    assert!(!is_server_streaming(&method));

    let json = r#"{"ntimes": 3, "board": [{"x": 0, "y": 1}, {"x": "1", "y": 1}, {"x": 2, "y": -1}]}"#;
    let bytes = encode_request(&method, json).expect("encodes");
    let request = DynamicMessage::decode(method.input(), bytes.as_slice()).expect("decodes as StepRequest");
    assert_eq!(request.get_field_by_name("ntimes").unwrap().as_u32(), Some(3));
    let board = request.get_field_by_name("board").unwrap();
    let cells = board.as_list().unwrap();
    assert_eq!(cells.len(), 3);
    assert_eq!(cells[2].as_message().unwrap().get_field_by_name("y").unwrap().as_i64(), Some(-1));

    // sint64 prints as a string in proto3 JSON; zero fields are left out.
    let answer = decode_response(&method, &[0x0a, 0x02, 0x08, 0x0a]).expect("a Board with one cell x=5");
    assert_eq!(to_json(&answer), r#"{"board":[{"x":"5"}]}"#);
}

/// A double in request JSON is the one its text names, and prints back as that text (found by
/// fuzz/fuzz_targets/contract_json.rs: serde_json's default parser read 3.449999046325684 one ulp
/// off, so the answer printed 3.4499990463256838).
#[tokio::test]
async fn doubles_are_read_exactly() {
    let method = resolve(&contract(), "callbench.v1.Echo/Echo", None).await.unwrap();
    for text in ["3.449999046325684", "0.1", "2.2250738585072014e-308", "1.7976931348623157e308", "9007199254740993"] {
        let json = format!(r#"{{"records": [{{"score": {text}}}]}}"#);
        let message =
            DynamicMessage::decode(method.input(), encode_request(&method, &json).unwrap().as_slice()).unwrap();
        let records = message.get_field_by_name("records").unwrap();
        let score = records.as_list().unwrap()[0].as_message().unwrap().get_field_by_name("score").unwrap().as_f64();
        assert_eq!(score, Some(text.parse::<f64>().unwrap()), "{text}");
        let printed = to_json(&message);
        assert_eq!(encode_request(&method, &printed).unwrap(), encode_request(&method, &json).unwrap(), "{printed}");
    }
}

#[tokio::test]
async fn both_name_forms_and_empty_json() {
    let by_dot = resolve(&contract(), "callbench.v1.Students.List", None).await.expect("dot form");
    let by_slash = resolve(&contract(), "callbench.v1.Students/List", None).await.expect("slash form");
    assert_eq!(by_dot.full_name(), by_slash.full_name());
    assert_eq!(encode_request(&by_dot, "").unwrap(), Vec::<u8>::new());
    assert_eq!(encode_request(&by_dot, "  \n").unwrap(), Vec::<u8>::new());
    assert_eq!(encode_request(&by_dot, "{}").unwrap(), Vec::<u8>::new());
}

#[tokio::test]
async fn json_names_and_proto_names_both_work() {
    let method = resolve(&contract(), "callbench.v1.Cars/Send", None).await.unwrap();
    let camel = encode_request(&method, r#"{"driver": {"driverId": "D1"}}"#).unwrap();
    let snake = encode_request(&method, r#"{"driver": {"driver_id": "D1"}}"#).unwrap();
    assert_eq!(camel, snake);
    let back = decode_response(&method, &camel).unwrap();
    assert_eq!(to_json(&back), r#"{"driver":{"driverId":"D1"}}"#);
}

#[tokio::test]
async fn bad_json_errors_name_the_problem() {
    let method = resolve(&contract(), "callbench.v1.Auth/Test", None).await.unwrap();
    let unknown = encode_request(&method, r#"{"id": 1, "passwd": "x"}"#).unwrap_err();
    assert!(matches!(unknown, TranscodeError::Message(_)), "{unknown:?}");
    let unknown = unknown.to_string();
    assert!(unknown.contains("callbench.v1.AuthRequest") && unknown.contains("passwd"), "{unknown}");
    let wrong_type = encode_request(&method, r#"{"id": "one"}"#).unwrap_err().to_string();
    assert!(wrong_type.contains("callbench.v1.AuthRequest"), "{wrong_type}");
    for bad in ["{", "[1]", "null", r#"{"id": 1} {"id": 2}"#, "\u{0}"] {
        let err = encode_request(&method, bad).unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
    }
    let enum_method = resolve(&contract(), "callbench.v1.Echo/Echo", None).await.unwrap();
    let bad_enum = encode_request(&enum_method, r#"{"records": [{"kind": "KIND_HUGE"}]}"#).unwrap_err().to_string();
    assert!(bad_enum.contains("KIND_HUGE"), "{bad_enum}");
    let good_enum = encode_request(&enum_method, r#"{"records": [{"kind": "KIND_LARGE", "id": "9007199254740993"}]}"#);
    assert!(good_enum.is_ok(), "{good_enum:?}");
}

#[tokio::test]
async fn garbage_responses_are_errors() {
    let method = resolve(&contract(), "callbench.v1.Auth/Test", None).await.unwrap();
    let err = decode_response(&method, &[0x0a, 0x05, b'a']).unwrap_err().to_string();
    assert!(err.contains("callbench.v1.AuthResponse"), "{err}");
    assert!(decode_response(&method, &[0xff; 16]).is_err());
}

#[tokio::test]
async fn lookup_errors_list_what_exists() {
    let err = resolve(&contract(), "callbench.v1.Nope/Test", None).await.unwrap_err().to_string();
    assert_eq!(
        err,
        "service callbench.v1.Nope not found (services: callbench.v1.Auth, callbench.v1.Cars, \
         callbench.v1.Echo, callbench.v1.Life, callbench.v1.Records, callbench.v1.Students)"
    );
    let err = resolve(&contract(), "callbench.v1.Life/Jump", None).await.unwrap_err();
    assert_eq!(err, DynprotoError::Method("method Jump not found in callbench.v1.Life (methods: Setup, Step)".into()));
    let err = resolve(&contract(), "Life", None).await.unwrap_err().to_string();
    assert!(err.contains("expected package.Service/Method"), "{err}");
}

/// A service of every call shape, importing well-known types the user never gives.
const STREAMS_PROTO: &str = r#"
syntax = "proto3";
package demo.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/empty.proto";

message Tick { google.protobuf.Timestamp at = 1; string note = 2; }

service Clock {
  rpc Now(google.protobuf.Empty) returns (Tick);
  rpc Watch(google.protobuf.Empty) returns (stream Tick);
  rpc Upload(stream Tick) returns (google.protobuf.Empty);
  rpc Chat(stream Tick) returns (stream Tick);
}
"#;

#[tokio::test]
async fn well_known_imports_and_call_shapes() {
    let dir = scratch("streams");
    std::fs::write(dir.join("clock.proto"), STREAMS_PROTO).unwrap();
    let source = Source::Protos { files: vec![PathBuf::from("clock.proto")], import_paths: vec![dir.clone()] };

    let now = resolve(&source, "demo.v1.Clock/Now", None).await.expect("unary resolves");
    assert_eq!(now.input().full_name(), "google.protobuf.Empty");
    let watch = resolve(&source, "demo.v1.Clock/Watch", None).await.expect("server-streaming is allowed");
    assert!(is_server_streaming(&watch));

    // Timestamps take their RFC 3339 JSON form.
    let tick = watch.output();
    let json = r#"{"at": "2024-05-01T12:00:00.500Z", "note": "hi"}"#;
    let bytes = {
        let mut de = serde_json::Deserializer::from_str(json);
        let message = DynamicMessage::deserialize(tick, &mut de).unwrap();
        prost::Message::encode_to_vec(&message)
    };
    let decoded = decode_response(&watch, &bytes).unwrap();
    assert_eq!(to_json(&decoded), r#"{"at":"2024-05-01T12:00:00.500Z","note":"hi"}"#);

    let upload = resolve(&source, "demo.v1.Clock/Upload", None).await.expect("client-streaming resolves");
    assert!(upload.is_client_streaming() && !upload.is_server_streaming());
    let chat = resolve(&source, "demo.v1.Clock/Chat", None).await.expect("bidi-streaming resolves");
    assert!(chat.is_client_streaming() && chat.is_server_streaming());

    // No import path: the file's own directory is searched.
    let alone = Source::Protos { files: vec![dir.join("clock.proto")], import_paths: vec![] };
    assert!(resolve(&alone, "demo.v1.Clock/Now", None).await.is_ok());
}

#[test]
fn proto_errors_are_one_line_with_a_place() {
    let dir = scratch("bad-protos");
    std::fs::write(dir.join("syntax.proto"), "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n").unwrap();
    std::fs::write(dir.join("import.proto"), "syntax = \"proto3\";\nimport \"nowhere/missing.proto\";\n").unwrap();
    std::fs::write(dir.join("types.proto"), "syntax = \"proto3\";\nmessage A {\n  Missing m = 1;\n}\n").unwrap();
    std::fs::write(dir.join("binary.proto"), [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let load = |name: &str| load_protos(&[PathBuf::from(name)], std::slice::from_ref(&dir)).unwrap_err().to_string();

    let err = load("syntax.proto");
    assert!(err.starts_with("syntax.proto:4:1: "), "{err}");
    let err = load("import.proto");
    assert!(err.contains("import.proto:2:") && err.contains("nowhere/missing.proto"), "{err}");
    let err = load("types.proto");
    assert!(err.contains("types.proto:3:") && err.contains("Missing"), "{err}");
    let err = load("binary.proto");
    assert!(err.contains("binary.proto"), "{err}");
    let err = load("absent.proto");
    assert!(err.starts_with("proto file absent.proto not found (import paths: "), "{err}");
    for err in [load("syntax.proto"), load("import.proto"), load("types.proto"), load("binary.proto")] {
        assert!(!err.contains('\n'), "{err}");
    }

    let err = load_protos(&[], &[]).unwrap_err();
    assert_eq!(err, DynprotoError::Descriptors("no .proto file given".into()));
    let err = load_protos(&[PathBuf::from("x.proto")], &[dir.join("no-such-dir")]).unwrap_err().to_string();
    assert!(err.starts_with("import path ") && err.ends_with("is not a directory"), "{err}");
    // A real file outside every import path.
    let other = scratch("outside");
    std::fs::write(other.join("o.proto"), "syntax = \"proto3\";\n").unwrap();
    let err = load_protos(&[other.join("o.proto")], std::slice::from_ref(&dir)).unwrap_err().to_string();
    assert!(err.contains("not in any include path") && err.contains("import paths: "), "{err}");
}

/// Maps, oneofs, enums and the well-known types with special JSON forms.
const EVERYTHING_PROTO: &str = r#"
syntax = "proto3";
package f;
import "google/protobuf/any.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/field_mask.proto";
message M {
  map<string, M> m = 1;
  google.protobuf.Any a = 2;
  google.protobuf.Struct s = 3;
  google.protobuf.Timestamp t = 4;
  google.protobuf.Duration d = 5;
  google.protobuf.Int64Value w = 6;
  google.protobuf.FieldMask fm = 7;
  repeated sint64 r = 8;
  oneof o { string x = 9; bytes y = 10; M z = 11; }
  optional double q = 12;
  repeated E e = 13;
  google.protobuf.Value v = 14;
  map<int64, E> me = 15;
}
enum E { E0 = 0; E1 = 1; }
service S { rpc Do(M) returns (M); }
"#;

#[tokio::test]
async fn special_json_forms_round_trip_and_garbled_answers_never_panic() {
    let dir = scratch("everything");
    std::fs::write(dir.join("f.proto"), EVERYTHING_PROTO).unwrap();
    let source = Source::Protos { files: vec![PathBuf::from("f.proto")], import_paths: vec![dir] };
    let method = resolve(&source, "f.S/Do", None).await.unwrap();
    let json = r#"{"m": {"k": {"r": ["1", "-2"], "x": "s"}}, "a": {"@type": "type.googleapis.com/google.protobuf.Duration",
        "value": "1.5s"}, "s": {"a": [1, "b", null, {"c": true}]}, "t": "2020-01-01T00:00:00Z", "d": "-3.000000001s",
        "w": "7", "fm": "a.b,cD", "y": "AAEC", "q": "NaN", "e": ["E1", 0], "v": 3.5, "me": {"5": "E1"}}"#;
    let bytes = encode_request(&method, json).expect("encodes");
    let printed = to_json(&decode_response(&method, &bytes).unwrap());
    assert_eq!(encode_request(&method, &printed).unwrap(), bytes, "{printed}");
    assert!(printed.contains(r#""fm":"a.b,cD""#) && printed.contains(r#""q":"NaN""#), "{printed}");

    // Answers garbled at random: an error or a message, never a panic.
    let mut rng = callbench_primitives::rng::Rng::new(1);
    let mut next = move || rng.next_u64();
    for _ in 0..5_000 {
        let mut garbled = bytes.clone();
        for _ in 0..1 + next() % 3 {
            let at = next() as usize % garbled.len();
            garbled[at] = next() as u8;
        }
        if let Ok(message) = decode_response(&method, &garbled) {
            let _ = encode_request(&method, &to_json(&message));
        }
    }
}

/// An Editions file (written here in the shape grpc-go's examples now use) compiles, and its
/// messages are encoded as edition 2023 says: repeated scalars packed, an imported proto3 file
/// beside it as before, and an error in it pointed at its line.
#[tokio::test]
async fn an_edition_2023_file_loads_and_encodes_as_its_edition_says() {
    let dir = scratch("editions");
    std::fs::write(
        dir.join("point.proto"),
        "syntax = \"proto3\";\npackage geo;\nmessage Point { int32 latitude = 1; }\n",
    )
    .unwrap();
    let chat = "edition = \"2023\";\n\noption features.field_presence = IMPLICIT;\n\npackage chat;\n\
                import \"point.proto\";\n\nservice Chat {\n  rpc Talk(stream Note) returns (stream Note) {}\n}\n\n\
                message Note {\n  geo.Point at = 1;\n  string text = 2;\n  repeated int32 marks = 3;\n}\n";
    std::fs::write(dir.join("chat.proto"), chat).unwrap();
    let source = Source::Protos { files: vec![dir.join("chat.proto")], import_paths: vec![dir.clone()] };
    let method = resolve(&source, "chat.Chat/Talk", None).await.expect("an edition 2023 file resolves");
    assert!(method.is_client_streaming() && method.is_server_streaming());
    let bytes = encode_request(&method, r#"{"at": {"latitude": 5}, "text": "hi", "marks": [1, 2]}"#).unwrap();
    // at: field 1 {latitude 5}; text: field 2 "hi"; marks: field 3, packed (0x1a, 2 bytes: 1, 2).
    assert_eq!(bytes, [0x0a, 0x02, 0x08, 0x05, 0x12, 0x02, b'h', b'i', 0x1a, 0x02, 0x01, 0x02]);

    std::fs::write(
        dir.join("bad.proto"),
        "edition = \"2023\";\nmessage M {\n  M child = 1 [features.message_encoding = DELIMITED];\n}\n",
    )
    .unwrap();
    let err = load_protos(&[dir.join("bad.proto")], std::slice::from_ref(&dir)).unwrap_err().to_string();
    assert!(err.contains("bad.proto:3:16") && err.contains("DELIMITED"), "{err}");
}
