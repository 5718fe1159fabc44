//! Editions in compiled descriptors (a protoset, or what a reflection server sends): a file with
//! `syntax = "editions"` is lowered to proto2 with the same wire format before prost-reflect, which
//! knows only proto2 and proto3, sees it.
//!
//! prost-types drops what it does not know of a descriptor (the file's `edition`, field 14, and
//! every `features` option), so those are read from the same bytes by the few messages below, and
//! resolved as the edition says: a field's own features, else its message's (innermost first),
//! else the file's, else the edition's defaults (2023 and 2024: explicit presence, packed repeated
//! scalars, length-prefixed messages). Then in the proto2 file a `LEGACY_REQUIRED` field is
//! `required`, every other singular field `optional` (an `IMPLICIT` one too: the wire is the same,
//! as in [`super::lower`]), and a repeated scalar is packed unless `EXPANDED`. `DELIMITED`
//! message encoding (groups) is refused, as for `.proto` files.

use prost::Message;
use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use prost_reflect::prost_types::{DescriptorProto, FieldDescriptorProto, FieldOptions, FileDescriptorProto};

/// `google.protobuf.Edition` values that this lowering knows the defaults of.
const EDITION_2023: i32 = 1000;
const EDITION_2024: i32 = 1001;

/// `FeatureSet` values (descriptor.proto).
const EXPLICIT: i32 = 1;
const LEGACY_REQUIRED: i32 = 3;
const EXPANDED: i32 = 2;
const DELIMITED: i32 = 2;

/// The file descriptors of a `FileDescriptorSet` (a protoset), each still encoded for
/// [`decode_file`].
pub(crate) fn decode_set(bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    Ok(RawSet::decode(bytes).map_err(|e| e.to_string())?.file)
}

/// A file descriptor from `bytes`, lowered to proto2 when it is an Editions file.
pub(crate) fn decode_file(bytes: &[u8]) -> Result<FileDescriptorProto, String> {
    let mut file = FileDescriptorProto::decode(bytes).map_err(|e| e.to_string())?;
    if file.syntax.as_deref() == Some("editions") {
        let raw = RawFile::decode(bytes).map_err(|e| e.to_string())?;
        lower(&mut file, &raw)?;
    }
    Ok(file)
}

/// Lowers `file` (decoded by prost-types) with the features `raw` (the same bytes) carries.
fn lower(file: &mut FileDescriptorProto, raw: &RawFile) -> Result<(), String> {
    let name = file.name().to_string();
    match raw.edition {
        Some(EDITION_2023 | EDITION_2024) => {}
        Some(other) => return Err(format!("{name}: edition {other} is not supported (2023 and 2024 are)")),
        None => return Err(format!("{name}: syntax \"editions\" without an edition")),
    }
    let defaults = Resolved { presence: EXPLICIT, repeated: 1, message: 1 };
    let file_level = defaults.with(raw.options.as_ref().and_then(|o| o.features.as_ref()));
    file.syntax = Some("proto2".into());
    let at = |what: &str| format!("{name}: {what}");
    for (field, raw_field) in file.extension.iter_mut().zip(&raw.extension) {
        lower_field(field, raw_field, file_level).map_err(|e| at(&e))?;
    }
    for (message, raw_message) in file.message_type.iter_mut().zip(&raw.message_type) {
        lower_message(message, raw_message, file_level, 0).map_err(|e| at(&e))?;
    }
    Ok(())
}

/// Messages inside messages, at most: a descriptor comes from any server.
const MAX_NESTING: usize = 100;

fn lower_message(message: &mut DescriptorProto, raw: &RawMessage, outer: Resolved, depth: usize) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err(format!("messages nested more than {MAX_NESTING} deep"));
    }
    let here = outer.with(raw.options.as_ref().and_then(|o| o.features.as_ref()));
    let name = message.name().to_string();
    for (field, raw_field) in message.field.iter_mut().zip(&raw.field) {
        lower_field(field, raw_field, here).map_err(|e| format!("{name}.{e}"))?;
    }
    for (field, raw_field) in message.extension.iter_mut().zip(&raw.extension) {
        lower_field(field, raw_field, here).map_err(|e| format!("{name}.{e}"))?;
    }
    for (nested, raw_nested) in message.nested_type.iter_mut().zip(&raw.nested_type) {
        lower_message(nested, raw_nested, here, depth + 1).map_err(|e| format!("{name}.{e}"))?;
    }
    Ok(())
}

fn lower_field(field: &mut FieldDescriptorProto, raw: &RawField, outer: Resolved) -> Result<(), String> {
    let f = outer.with(raw.options.as_ref().and_then(|o| o.features.as_ref()));
    let is_message = matches!(field.r#type(), Type::Message | Type::Group);
    if is_message && f.message == DELIMITED {
        return Err(format!("{}: DELIMITED message encoding (groups) is not supported", field.name()));
    }
    if field.label() == Label::Repeated {
        let packable = !matches!(field.r#type(), Type::Message | Type::Group | Type::String | Type::Bytes);
        if packable {
            field.options.get_or_insert_with(FieldOptions::default).packed = Some(f.repeated != EXPANDED);
        }
    } else if f.presence == LEGACY_REQUIRED {
        field.label = Some(Label::Required as i32);
    } else {
        field.label = Some(Label::Optional as i32);
    }
    Ok(())
}

/// The features in force at one place of the file.
#[derive(Debug, Clone, Copy)]
struct Resolved {
    presence: i32,
    repeated: i32,
    message: i32,
}

impl Resolved {
    /// These, with what `set` says over them (an unset or zero feature inherits).
    fn with(self, set: Option<&Features>) -> Resolved {
        let over = |own: Option<i32>, inherited: i32| own.filter(|v| *v != 0).unwrap_or(inherited);
        match set {
            None => self,
            Some(s) => Resolved {
                presence: over(s.field_presence, self.presence),
                repeated: over(s.repeated_field_encoding, self.repeated),
                message: over(s.message_encoding, self.message),
            },
        }
    }
}

// What prost-types leaves out of a descriptor: the same messages, with only the fields read here.

/// `google.protobuf.FileDescriptorSet`, each file left encoded.
#[derive(Clone, PartialEq, Message)]
struct RawSet {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct RawFile {
    #[prost(message, repeated, tag = "4")]
    message_type: Vec<RawMessage>,
    #[prost(message, repeated, tag = "7")]
    extension: Vec<RawField>,
    #[prost(message, optional, tag = "8")]
    options: Option<RawFileOptions>,
    #[prost(int32, optional, tag = "14")]
    edition: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct RawMessage {
    #[prost(message, repeated, tag = "2")]
    field: Vec<RawField>,
    #[prost(message, repeated, tag = "3")]
    nested_type: Vec<RawMessage>,
    #[prost(message, repeated, tag = "6")]
    extension: Vec<RawField>,
    #[prost(message, optional, tag = "7")]
    options: Option<RawMessageOptions>,
}

#[derive(Clone, PartialEq, Message)]
struct RawField {
    #[prost(message, optional, tag = "8")]
    options: Option<RawFieldOptions>,
}

#[derive(Clone, PartialEq, Message)]
struct RawFileOptions {
    #[prost(message, optional, tag = "50")]
    features: Option<Features>,
}

#[derive(Clone, PartialEq, Message)]
struct RawMessageOptions {
    #[prost(message, optional, tag = "12")]
    features: Option<Features>,
}

#[derive(Clone, PartialEq, Message)]
struct RawFieldOptions {
    #[prost(message, optional, tag = "21")]
    features: Option<Features>,
}

/// `google.protobuf.FeatureSet`, the features that change the wire.
#[derive(Clone, PartialEq, Message)]
struct Features {
    #[prost(int32, optional, tag = "1")]
    field_presence: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    repeated_field_encoding: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    message_encoding: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    // An Editions descriptor as protoc writes one: prost-types cannot say `edition` or `features`,
    // so the tests write the descriptor's fields with messages of their own.

    #[derive(Clone, PartialEq, Message)]
    struct File {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
        #[prost(string, optional, tag = "2")]
        package: Option<String>,
        #[prost(message, repeated, tag = "4")]
        message_type: Vec<Msg>,
        #[prost(message, optional, tag = "8")]
        options: Option<RawFileOptions>,
        #[prost(string, optional, tag = "12")]
        syntax: Option<String>,
        #[prost(int32, optional, tag = "14")]
        edition: Option<i32>,
    }

    #[derive(Clone, PartialEq, Message)]
    struct Msg {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
        #[prost(message, repeated, tag = "2")]
        field: Vec<Field>,
    }

    #[derive(Clone, PartialEq, Message)]
    struct Field {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
        #[prost(int32, optional, tag = "3")]
        number: Option<i32>,
        #[prost(int32, optional, tag = "4")]
        label: Option<i32>,
        #[prost(int32, optional, tag = "5")]
        r#type: Option<i32>,
        #[prost(string, optional, tag = "6")]
        type_name: Option<String>,
        #[prost(message, optional, tag = "8")]
        options: Option<RawFieldOptions>,
    }

    fn file(edition: i32, features: Option<Features>, fields: Vec<Field>) -> Vec<u8> {
        File {
            name: Some("p.proto".into()),
            package: Some("p".into()),
            message_type: vec![Msg { name: Some("Point".into()), field: fields }],
            options: features.map(|f| RawFileOptions { features: Some(f) }),
            syntax: Some("editions".into()),
            edition: Some(edition),
        }
        .encode_to_vec()
    }

    fn field(name: &str, number: i32, label: Label, kind: Type, features: Option<Features>) -> Field {
        Field {
            name: Some(name.into()),
            number: Some(number),
            label: Some(label as i32),
            r#type: Some(kind as i32),
            type_name: (kind == Type::Message).then(|| ".p.Point".into()),
            options: features.map(|f| RawFieldOptions { features: Some(f) }),
        }
    }

    fn features(presence: Option<i32>, repeated: Option<i32>, message: Option<i32>) -> Option<Features> {
        Some(Features { field_presence: presence, repeated_field_encoding: repeated, message_encoding: message })
    }

    #[test]
    fn an_editions_descriptor_becomes_proto2_with_its_features_on_the_wire() {
        // IMPLICIT for the whole file, as grpc-go's route_guide.proto says.
        let bytes = file(
            EDITION_2023,
            features(Some(2), None, None),
            vec![
                field("latitude", 1, Label::Optional, Type::Int32, None),
                field("id", 2, Label::Optional, Type::Int64, features(Some(LEGACY_REQUIRED), None, None)),
                field("tags", 3, Label::Repeated, Type::Int32, None),
                field("raw", 4, Label::Repeated, Type::Int32, features(None, Some(EXPANDED), None)),
                field("names", 5, Label::Repeated, Type::String, None),
            ],
        );
        let lowered = decode_file(&bytes).unwrap();
        assert_eq!(lowered.syntax(), "proto2");
        let f = &lowered.message_type[0].field;
        assert_eq!((f[0].label(), f[1].label()), (Label::Optional, Label::Required));
        let packed = |i: usize| f[i].options.as_ref().and_then(|o| o.packed);
        assert_eq!((packed(2), packed(3), packed(4)), (Some(true), Some(false), None));
        let pool = crate::pool::build_pool(vec![lowered], "test").unwrap();
        let point = pool.get_message_by_name("p.Point").unwrap();
        assert!(point.get_field_by_name("tags").unwrap().is_packed());
        assert!(!point.get_field_by_name("raw").unwrap().is_packed());
        assert!(point.get_field_by_name("id").unwrap().is_required());
    }

    #[test]
    fn what_cannot_be_lowered_is_a_message() {
        let inner = field("inner", 1, Label::Optional, Type::Message, None);
        let e = decode_file(&file(EDITION_2023, features(None, None, Some(DELIMITED)), vec![inner])).unwrap_err();
        assert_eq!(e, "p.proto: Point.inner: DELIMITED message encoding (groups) is not supported");
        let e = decode_file(&file(99_999, None, vec![])).unwrap_err();
        assert_eq!(e, "p.proto: edition 99999 is not supported (2023 and 2024 are)");
        let proto3 =
            FileDescriptorProto { name: Some("q.proto".into()), syntax: Some("proto3".into()), ..Default::default() };
        assert_eq!(decode_file(&proto3.encode_to_vec()).unwrap(), proto3, "proto2 and proto3 pass as they are");
    }
}
