//! The checks protoc and protobuf-go make of a descriptor (protobuf-go's `protodesc`
//! validation, what grpcurl and ghz run on what reflection serves), which prost-reflect leaves
//! out: a server whose descriptors fail here works with callbench but not with stock tools
//! (node-grpcjs served a map entry named `Statuses`, where protoc names it `StatusesEntry`, and
//! grpcurl refused the health service). The messages follow protobuf-go's wording.

use crate::DynprotoError;
use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use prost_reflect::prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorProto};
use prost_reflect::DescriptorPool;
use std::collections::HashSet;

/// The largest field number (2^29 - 1) and the range protobuf keeps for itself.
const MAX_FIELD_NUMBER: i32 = (1 << 29) - 1;
const RESERVED_NUMBERS: std::ops::RangeInclusive<i32> = 19_000..=19_999;

/// Every file of `pool` as stock tools check it; the first problem found (a
/// [`DynprotoError::Descriptors`]).
pub fn check_pool(pool: &DescriptorPool) -> Result<(), DynprotoError> {
    pool.files().try_for_each(|f| check_file(f.file_descriptor_proto()))
}

/// One file: names, field numbers, map entries, and proto3's rules for enums and labels.
pub fn check_file(file: &FileDescriptorProto) -> Result<(), DynprotoError> {
    check(file).map_err(DynprotoError::Descriptors)
}

fn check(file: &FileDescriptorProto) -> Result<(), String> {
    let proto3 = file.syntax() == "proto3";
    let package = file.package();
    if !package.is_empty() && !package.split('.').all(is_identifier) {
        return Err(format!("file {:?}: invalid package name {package:?}", file.name()));
    }
    let scope = if package.is_empty() { String::new() } else { format!("{package}.") };
    for message in &file.message_type {
        check_message(message, &scope, proto3)?;
    }
    for e in &file.enum_type {
        check_enum(e, &scope, proto3)?;
    }
    for service in &file.service {
        let name = format!("{scope}{}", service.name());
        check_name(&name, service.name())?;
        unique_names(&format!("{name}."), service.method.iter().map(|m| m.name()), |method| {
            format!("service {name:?}: method {method:?} declared twice")
        })?;
    }
    Ok(())
}

/// Members of one scope (a service's methods, an enum's values): valid names, none twice.
fn unique_names<'a>(
    scope: &str,
    names: impl Iterator<Item = &'a str>,
    twice: impl Fn(&str) -> String,
) -> Result<(), String> {
    let mut seen = HashSet::new();
    for name in names {
        check_name(&format!("{scope}{name}"), name)?;
        if !seen.insert(name) {
            return Err(twice(name));
        }
    }
    Ok(())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_name(full: &str, name: &str) -> Result<(), String> {
    match is_identifier(name) {
        true => Ok(()),
        false => Err(format!("descriptor {full:?} has an invalid name {name:?}")),
    }
}

/// protoc's name for the entry type of map field `field` (protobuf-go's `strs.MapEntryName`).
pub fn map_entry_name(field: &str) -> String {
    let mut name = String::with_capacity(field.len() + 5);
    let mut upper = true;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            name.extend(c.to_uppercase());
            upper = false;
        } else {
            name.push(c);
        }
    }
    name + "Entry"
}

fn is_map_entry(m: &DescriptorProto) -> bool {
    m.options.as_ref().is_some_and(|o| o.map_entry())
}

fn check_message(m: &DescriptorProto, scope: &str, proto3: bool) -> Result<(), String> {
    let full = format!("{scope}{}", m.name());
    check_name(&full, m.name())?;
    let (mut numbers, mut names) = (HashSet::new(), HashSet::new());
    for f in &m.field {
        let field = format!("{full}.{}", f.name());
        check_name(&field, f.name())?;
        let n = f.number();
        if !(1..=MAX_FIELD_NUMBER).contains(&n) || RESERVED_NUMBERS.contains(&n) {
            return Err(format!("message field {field:?} has an invalid number: {n}"));
        }
        if !numbers.insert(n) {
            return Err(format!("message {full:?} has conflicting fields with number {n}"));
        }
        if !names.insert(f.name()) {
            return Err(format!("message {full:?} has a field {:?} declared twice", f.name()));
        }
        if proto3 && f.label() == Label::Required {
            return Err(format!("message field {field:?} is a required field in a proto3 file"));
        }
        if proto3 && f.default_value.is_some() {
            return Err(format!("message field {field:?} has a default value in a proto3 file"));
        }
        // A field of a map entry type is a map: the entry must be the one protoc makes for it.
        let entry = m.nested_type.iter().find(|t| {
            is_map_entry(t) && (f.type_name() == format!(".{full}.{}", t.name()) || f.type_name() == t.name())
        });
        if let Some(entry) = entry {
            check_map(&field, f.name(), f.label(), entry)?;
        }
    }
    for nested in &m.nested_type {
        if is_map_entry(nested) {
            let used = m.field.iter().any(|f| f.type_name().rsplit('.').next() == Some(nested.name()));
            if !used {
                return Err(format!("message {full:?}: map entry {:?} belongs to no field", nested.name()));
            }
            continue;
        }
        check_message(nested, &format!("{full}."), proto3)?;
    }
    for e in &m.enum_type {
        check_enum(e, &format!("{full}."), proto3)?;
    }
    Ok(())
}

fn check_map(field: &str, name: &str, label: Label, entry: &DescriptorProto) -> Result<(), String> {
    let invalid = |why: &str| Err(format!("message field {field:?} is an invalid map: {why}"));
    if entry.name() != map_entry_name(name) {
        return invalid("incorrect implicit map entry name");
    }
    if label != Label::Repeated {
        return invalid("must be repeated");
    }
    if entry.field.len() != 2 || !entry.nested_type.is_empty() || !entry.enum_type.is_empty() {
        return invalid("must have exactly two fields and no nested types");
    }
    let (key, value) = (&entry.field[0], &entry.field[1]);
    if (key.name(), key.number(), value.name(), value.number()) != ("key", 1, "value", 2) {
        return invalid("must have a key field numbered 1 and a value field numbered 2");
    }
    if matches!(key.r#type(), Type::Float | Type::Double | Type::Bytes | Type::Message | Type::Enum | Type::Group) {
        return invalid("invalid key kind");
    }
    Ok(())
}

fn check_enum(e: &EnumDescriptorProto, scope: &str, proto3: bool) -> Result<(), String> {
    let full = format!("{scope}{}", e.name());
    check_name(&full, e.name())?;
    if e.value.is_empty() {
        return Err(format!("enum {full:?} must contain at least one value"));
    }
    if proto3 && e.value[0].number() != 0 {
        return Err(format!("enum {full:?} using proto3 semantics must have zero number for the first value"));
    }
    unique_names(scope, e.value.iter().map(|v| v.name()), |value| {
        format!("enum {full:?} has a value {value:?} declared twice")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::prost_types::{FieldDescriptorProto, MessageOptions};

    fn field(name: &str, number: i32, label: Label, kind: Type, type_name: &str) -> FieldDescriptorProto {
        FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            label: Some(label as i32),
            r#type: Some(kind as i32),
            type_name: (!type_name.is_empty()).then(|| type_name.into()),
            ..Default::default()
        }
    }

    /// A message with a map field `statuses`, its entry named `entry` and referred to as `type_name`.
    fn with_map(entry: &str, type_name: &str) -> FileDescriptorProto {
        let entry = DescriptorProto {
            name: Some(entry.into()),
            field: vec![
                field("key", 1, Label::Optional, Type::String, ""),
                field("value", 2, Label::Optional, Type::Int32, ""),
            ],
            options: Some(MessageOptions { map_entry: Some(true), ..Default::default() }),
            ..Default::default()
        };
        FileDescriptorProto {
            name: Some("m.proto".into()),
            package: Some("pkg.v1".into()),
            syntax: Some("proto3".into()),
            message_type: vec![DescriptorProto {
                name: Some("List".into()),
                field: vec![field("statuses", 1, Label::Repeated, Type::Message, type_name)],
                nested_type: vec![entry],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_contract_and_protocs_maps_pass() {
        check_pool(callbench_contract::descriptor_pool()).unwrap();
        check_file(&with_map("StatusesEntry", ".pkg.v1.List.StatusesEntry")).unwrap();
        assert_eq!(map_entry_name("by_user_id"), "ByUserIdEntry");
        assert_eq!(map_entry_name("camelCase"), "CamelCaseEntry");
    }

    #[test]
    fn a_map_entry_named_after_its_field_fails_as_grpcurl_says() {
        // What protobufjs made of grpc.health.v1.HealthListResponse.
        let err = check_file(&with_map("Statuses", "Statuses")).unwrap_err();
        let why = r#"message field "pkg.v1.List.statuses" is an invalid map: incorrect implicit map entry name"#;
        assert_eq!(err, DynprotoError::Descriptors(why.into()));
    }

    #[test]
    fn numbers_names_and_proto3_rules() {
        let mut f = with_map("StatusesEntry", ".pkg.v1.List.StatusesEntry");
        f.message_type[0].field[0].number = Some(19_500);
        assert!(check_file(&f).unwrap_err().to_string().contains("invalid number: 19500"));
        let mut f = with_map("StatusesEntry", ".pkg.v1.List.StatusesEntry");
        f.message_type[0].field[0].label = Some(Label::Optional as i32);
        assert!(check_file(&f).unwrap_err().to_string().contains("must be repeated"));
        let mut f = with_map("StatusesEntry", ".pkg.v1.List.StatusesEntry");
        f.enum_type.push(EnumDescriptorProto {
            name: Some("Kind".into()),
            value: vec![prost_reflect::prost_types::EnumValueDescriptorProto {
                name: Some("KIND_A".into()),
                number: Some(1),
                ..Default::default()
            }],
            ..Default::default()
        });
        assert!(check_file(&f).unwrap_err().to_string().contains("zero number for the first value"));
        let mut f = with_map("StatusesEntry", ".pkg.v1.List.StatusesEntry");
        f.package = Some("pkg.1v".into());
        assert!(check_file(&f).unwrap_err().to_string().contains("invalid package name"));
    }
}
