use super::*;

/// An edition 2023 file in the shape of grpc-go's route_guide.proto (written for this test), with
/// the features that change the text or the wire.
const ROUTES: &str = r#"// Routes.
edition = "2023";

option features.field_presence = IMPLICIT;
option go_package = "example/routes";

package routes;

service Routes {
  rpc Chat(stream Note) returns (stream Note) {}
  rpc Get(Point) returns (Point) { option features.field_presence = EXPLICIT; }
}

message Point {
  int32 latitude = 1;
  int32 longitude = 2 [features.field_presence = EXPLICIT];
}

message Note {
  Point location = 1;
  string message = 2 [features.field_presence = LEGACY_REQUIRED, deprecated = true];
  repeated int32 samples = 3;
  repeated int32 spread = 4 [deprecated = true, features.repeated_field_encoding = EXPANDED];
  map<string, int32> counts = 5;
  oneof kind {
    string text = 6;
    Point at = 7;
  }
  message Inner {
    option features.repeated_field_encoding = EXPANDED;
    repeated int64 ids = 1;
    enum Colour { option features.enum_type = CLOSED; COLOUR_UNSPECIFIED = 0; }
  }
}
"#;

#[test]
fn an_edition_2023_file_becomes_proto2_line_for_line() {
    assert!(declares_edition(ROUTES));
    assert!(!declares_edition("syntax = \"proto3\";\nmessage M {}\n"));
    let lowered = lower(ROUTES).unwrap();
    let text = &lowered.source;
    assert_eq!(text.lines().count(), ROUTES.lines().count(), "{text}");
    assert!(text.contains("syntax = \"proto3\";"), "its presence is IMPLICIT: {text}");
    assert!(!text.contains("features"), "{text}");
    // Blanked options leave runs of spaces: compare with every run as one space.
    let squeezed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for field in [
        "message Point { int32 latitude = 1;",
        "optional int32 longitude = 2 ;",
        "message Note { Point location = 1;",
        "optional string message = 2 [ deprecated = true];",
        "repeated int32 samples = 3;",
        "repeated int32 spread = 4 [deprecated = true ];",
        "map<string, int32> counts = 5;",
        "kind { string text = 6; Point at = 7; }",
        "repeated int64 ids = 1;",
        "rpc Get(Point) returns (Point) { }",
    ] {
        assert!(squeezed.contains(field), "{field:?} not in:\n{text}");
    }
    let packed = |message: &str, field: &str| lowered.packed.get(&(message.to_string(), field.to_string())).copied();
    assert_eq!(packed(".routes.Note", "samples"), Some(true), "edition 2023 packs by default");
    assert_eq!(packed(".routes.Note", "spread"), Some(false));
    assert_eq!(packed(".routes.Note.Inner", "ids"), Some(false), "its message says EXPANDED");
    assert_eq!(lowered.packed.len(), 3, "{:?}", lowered.packed);
}

/// Without IMPLICIT presence for the file, proto2: every label-less field `optional`, a
/// LEGACY_REQUIRED one `required`, those of an IMPLICIT message `optional` too.
#[test]
fn an_explicit_file_becomes_proto2() {
    let source = "edition = \"2023\";\npackage p;\nmessage A {\n  int32 x = 1;\n  int32 y = 2 [features.field_presence = LEGACY_REQUIRED];\n}\n\
                  message B {\n  option features.field_presence = IMPLICIT;\n  string s = 1;\n  repeated double d = 2;\n}\n";
    let lowered = lower(source).unwrap();
    let squeezed = lowered.source.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "syntax = \"proto2\"; package p;",
        "message A { optional int32 x = 1; required int32 y = 2 ; }",
        "message B { optional string s = 1; repeated double d = 2; }",
    ] {
        assert!(squeezed.contains(expected), "{expected:?} not in:\n{}", lowered.source);
    }
    assert_eq!(lowered.packed.get(&(".p.B".to_string(), "d".to_string())), Some(&true));
}

#[test]
fn an_edition_statement_over_several_lines_keeps_the_lines_after_it() {
    let source = "edition\n  =\n  \"2023\"\n;\nmessage M {\n  int32 x = 1;\n}\n";
    let text = lower(source).unwrap().source;
    assert_eq!(text.lines().count(), source.lines().count(), "{text}");
    assert_eq!(text.lines().nth(5), Some("  optional int32 x = 1;"), "{text}");
}

#[test]
fn what_edition_2023_cannot_say_in_proto2_is_an_error_with_its_place() {
    let refused = |source: &str| lower(source).unwrap_err();
    assert!(
        refused("edition = \"2024\";\n").starts_with("1:11: edition \"2024\" is not supported"),
        "{}",
        refused("edition = \"2024\";")
    );
    let delimited = "edition = \"2023\";\nmessage M {\n  M child = 1 [features.message_encoding = DELIMITED];\n}\n";
    assert!(refused(delimited).starts_with("3:16: features.message_encoding = DELIMITED"), "{}", refused(delimited));
    assert!(refused("edition = \"2023\";\nmessage M {\n  int32 x = 1;\n").contains("not closed"));
    assert!(refused("edition = \"2023\"\nmessage M {}\n").contains("expected `edition = \"2023\";`"));
}

#[test]
fn comments_and_strings_are_not_read_as_statements() {
    let source = "edition = \"2023\"; /* message Fake { int32 x = 1; } */\n// option features.x = Y;\n\
                  message M { string s = 1 [default = \"a;b } option\"]; }\n";
    let lowered = lower(source).unwrap();
    assert!(
        lowered.source.contains("message M { optional string s = 1 [default = \"a;b } option\"]; }"),
        "{}",
        lowered.source
    );
    assert!(lowered.source.contains("/* message Fake { int32 x = 1; } */"));
}

#[test]
fn the_compiled_descriptor_gets_the_packed_encoding() {
    use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
    use prost_reflect::prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
    let lowered = lower(ROUTES).unwrap();
    let field = |name: &str, r#type: Type| FieldDescriptorProto {
        name: Some(name.into()),
        label: Some(Label::Repeated as i32),
        r#type: Some(r#type as i32),
        ..Default::default()
    };
    let mut file = FileDescriptorProto {
        package: Some("routes".into()),
        message_type: vec![DescriptorProto {
            name: Some("Note".into()),
            field: vec![field("samples", Type::Int32), field("spread", Type::Int32)],
            nested_type: vec![DescriptorProto {
                name: Some("Inner".into()),
                field: vec![field("ids", Type::Int64)],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    lowered.apply(&mut file);
    let packed = |f: &FieldDescriptorProto| f.options.as_ref().and_then(|o| o.packed);
    let note = &file.message_type[0];
    assert_eq!((packed(&note.field[0]), packed(&note.field[1])), (Some(true), Some(false)));
    assert_eq!(packed(&note.nested_type[0].field[0]), Some(false));
}

#[test]
fn hostile_input_is_an_error_not_a_crash() {
    let deep = format!("edition = \"2023\";\n{}", "message M { ".repeat(10_000));
    assert!(lower(&deep).unwrap_err().contains("nested too deeply"));
    for source in [
        "edition",
        "edition = \"2023\"; message",
        "edition = \"2023\"; message M { int32",
        "edition = \"2023\"; \"unclosed",
        "edition = \"2023\"; message M { x [features.a = B",
        "edition = \"2023\"; /* é",
        "edition = \"2023\"; enum E { option features.",
        "edition = \"2023\"; message M { oneof o { int32 x = 1 [features.y = Z] } }",
    ] {
        let _ = lower(source);
    }
}

/// The regression input fuzz/regressions/proto_editions/bare-features-in-message-multibyte-comment:
/// its label and its blanked statement were two edits over the same bytes, and the second one
/// then ended inside an `é`.
const BARE_IN_MESSAGE: &str =
    "edition = \"2023\";\nmessage M {\n  features.field_presence = IMPLICIT /*éééé */;\n  int32 x = 1;\n}\n";

#[test]
fn a_bare_features_statement_is_an_error_with_its_place_in_every_scope() {
    let bare = "features.field_presence = IMPLICIT;";
    let why =
        "`features.field_presence = …;` is not a statement: an option is written `option features.field_presence = …;`";
    for (scope, source) in [
        ("file", format!("edition = \"2023\";\npackage p;\n  {bare}\nmessage M {{}}\n")),
        ("message", format!("edition = \"2023\";\nmessage M {{\n  {bare}\n  int32 x = 1;\n}}\n")),
        ("message, after a field", format!("edition = \"2023\";\nmessage M {{ int32 x = 1;\n  {bare} }}\n")),
        ("nested message", format!("edition = \"2023\";\nmessage M {{ message N {{\n  {bare} }} }}\n")),
        ("enum", format!("edition = \"2023\";\nenum E {{ A = 0;\n  {bare} }}\n")),
        ("service", format!("edition = \"2023\";\nservice S {{\n  {bare}\n}}\n")),
        ("rpc", format!("edition = \"2023\";\nservice S {{ rpc R(M) returns (M) {{\n  {bare} }} }}\n")),
        ("oneof", format!("edition = \"2023\";\nmessage M {{ oneof o {{\n  {bare} }} }}\n")),
        ("extend", format!("edition = \"2023\";\nextend M {{\n  {bare} }}\n")),
    ] {
        let error = lower(&source).expect_err(scope);
        assert_eq!(error, format!("3:3: {why}"), "{scope}:\n{source}");
    }
    assert!(lower(BARE_IN_MESSAGE).unwrap_err().starts_with("3:3: `features.field_presence"));
}

#[test]
fn a_features_name_that_is_not_assigned_is_left_alone() {
    let source = "edition = \"2023\";\nmessage M {\n  features.Point p = 1 [(features.x) = 2];\n}\n\
                  service S { rpc R(features.Point) returns (M); }\n";
    let text = lower(source).unwrap().source;
    assert!(text.contains("optional features.Point p = 1 [(features.x) = 2];"), "{text}");
    assert!(text.contains("rpc R(features.Point) returns (M);"), "{text}");
    let unclosed = "edition = \"2023\";\nmessage M {\n  int32 x = 1 [features.field_presence = IMPLICIT;\n}\n";
    assert!(lower(unclosed).unwrap_err().starts_with("3:15: the option list is not closed"));
}

#[test]
fn overlapping_edits_are_an_error_never_garbage_or_a_panic() {
    let source = "ab\ncdé\n";
    let edit = |start: usize, end: usize, with: &str| (start, end, with.to_string());
    assert_eq!(apply_edits(source, vec![edit(3, 4, "  "), edit(0, 0, "x"), edit(3, 3, "y")]).unwrap(), "xab\ny  dé\n");
    let overlap = apply_edits(source, vec![edit(0, 4, "    "), edit(3, 3, "y")]).unwrap_err();
    assert_eq!(overlap, "2:1: cannot lower this statement (its edits overlap)");
    assert!(apply_edits(source, vec![edit(3, 6, "")]).is_err(), "an end inside `é`");
    assert!(apply_edits(source, vec![edit(4, 3, "")]).is_err(), "an end before its start");
}
