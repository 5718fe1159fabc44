//! Keeps `contract/openapi.yaml` (the REST side of the contract) in step with the proto: (a) every schema tagged
//! `x-proto-message` has exactly the message's fields (JSON names) with agreeing types; (b) every message a method
//! reaches has a schema; (c) every operation's `x-grpc-method` exists and takes and returns the messages of its
//! request body and 200 response; (d) every method has an operation, or is listed in `x-grpc-only` with why.
//! Streams: a client-streaming method's body is NDJSON of its input message (one a line), or a JSON batch of
//! them (an object whose one array property holds them); a server-streaming method answers NDJSON of its output
//! message. A GET's input fields are its path and query parameters.

use callbench_contract::descriptor_pool;
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

const CELL: &str = "callbench.v1.Cell";
/// `grpc.health.v1` has no proto in this repository: its operation and schema are not checked.
const SKIPPED: &str = "grpc.health.";
const SCHEMA_REF: &str = "#/components/schemas/";
const JSON: &str = "application/json";
const NDJSON: &str = "application/x-ndjson";
const VERBS: [&str; 5] = ["get", "put", "post", "patch", "delete"];
static NULL: Value = Value::Null;

fn load() -> Value {
    let path = std::path::Path::new(
        &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
    )
    .join("../../contract/openapi.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()))
}

/// Every mismatch between the document and the proto, one readable line each.
fn check(doc: &Value) -> Vec<String> {
    let schemas = doc["components"]["schemas"].as_object().expect("components.schemas is a map");
    let mut checker = Checker { schemas, errors: Vec::new() };
    checker.check_schemas();
    checker.check_reachable();
    let grpc_only: Vec<&str> = doc["x-grpc-only"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| match (entry["method"].as_str(), entry["reason"].as_str()) {
            (Some(method), Some(reason)) if !reason.is_empty() => Some(method),
            _ => None,
        })
        .collect();
    if grpc_only.len() != doc["x-grpc-only"].as_array().map_or(0, Vec::len) {
        checker.errors.push("x-grpc-only: every entry names its method and a reason".into());
    }
    checker.check_operations(doc["paths"].as_object().expect("paths is a map"), &grpc_only);
    checker.errors
}

struct Checker<'a> {
    schemas: &'a Map<String, Value>,
    errors: Vec<String>,
}

impl<'a> Checker<'a> {
    /// Follows a `$ref` (or an `allOf` of one schema) to the schema it names; Null when dangling.
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        if let Some(r) = schema["$ref"].as_str() {
            return r.strip_prefix(SCHEMA_REF).and_then(|name| self.schemas.get(name)).unwrap_or(&NULL);
        }
        match schema["allOf"].as_array().map(Vec::as_slice) {
            Some([only]) => self.resolve(only),
            _ => schema,
        }
    }

    /// The proto message a schema stands for (through `$ref`).
    fn message_of(&self, schema: &'a Value) -> Option<&'a str> {
        self.resolve(schema)["x-proto-message"].as_str()
    }

    /// (a) Tagged schemas have exactly the message's fields, with agreeing types.
    fn check_schemas(&mut self) {
        for (name, schema) in self.schemas {
            let Some(message) = schema["x-proto-message"].as_str() else { continue };
            if message.starts_with(SKIPPED) {
                continue;
            }
            match descriptor_pool().get_message_by_name(message) {
                None => self.errors.push(format!("schema {name}: x-proto-message {message} is not a proto message")),
                Some(_) if message == CELL => {
                    if let Err(e) = check_pair(schema) {
                        self.errors.push(format!("schema {name} ({CELL}): {e}"));
                    }
                }
                Some(desc) => self.check_properties(name, &desc, schema),
            }
        }
    }

    fn check_properties(&mut self, name: &str, desc: &MessageDescriptor, schema: &'a Value) {
        let empty = Map::new();
        let props = schema["properties"].as_object().unwrap_or(&empty);
        let expected: BTreeSet<String> = desc.fields().map(|f| f.json_name().to_string()).collect();
        let actual: BTreeSet<String> = props.keys().cloned().collect();
        if expected != actual {
            let (missing, extra) = (expected.difference(&actual), actual.difference(&expected));
            self.errors.push(format!(
                "schema {name} ({}): properties differ from the fields: missing {:?}, not in the proto {:?}",
                desc.full_name(),
                missing.collect::<Vec<_>>(),
                extra.collect::<Vec<_>>()
            ));
        }
        for field in desc.fields() {
            let Some(prop) = props.get(field.json_name()) else { continue };
            if let Err(e) = self.check_field(&field, prop) {
                self.errors.push(format!("schema {name}: property {}: {e}", field.json_name()));
            }
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            if !required.as_str().is_some_and(|r| props.contains_key(r)) {
                self.errors.push(format!("schema {name}: required {required} is not a property"));
            }
        }
    }

    fn check_field(&self, field: &FieldDescriptor, schema: &'a Value) -> Result<(), String> {
        if !field.is_list() {
            return self.check_value(&field.kind(), schema);
        }
        if schema["type"] != "array" {
            return Err(format!("a repeated field must be `type: array`, got {schema}"));
        }
        self.check_value(&field.kind(), &schema["items"]).map_err(|e| format!("items: {e}"))
    }

    /// One value of kind `kind` against its schema.
    fn check_value(&self, kind: &Kind, schema: &'a Value) -> Result<(), String> {
        match kind {
            Kind::Message(m) if m.full_name() == CELL => check_pair(self.resolve(schema)),
            Kind::Message(m) => match self.message_of(schema) {
                Some(found) if found == m.full_name() && schema.get("$ref").is_some() => Ok(()),
                found => Err(format!("expected a $ref to the schema of {}, found {found:?}", m.full_name())),
            },
            Kind::Enum(e) => {
                let schema = self.resolve(schema);
                let names: Vec<String> = e.values().map(|v| v.name().to_string()).collect();
                let listed: Option<Vec<String>> = serde_json::from_value(schema["enum"].clone()).ok();
                let tag_ok = schema.get("x-proto-enum").is_none_or(|tag| tag == e.full_name());
                match (schema["type"].as_str(), listed) {
                    (Some("string"), Some(listed)) if listed == names && tag_ok => Ok(()),
                    _ => Err(format!("expected `type: string, enum: {names:?}` ({}), got {schema}", e.full_name())),
                }
            }
            scalar => {
                let (ty, formats) = scalar_type(scalar);
                let format_ok = formats.is_empty() || schema["format"].as_str().is_some_and(|f| formats.contains(&f));
                if schema["type"] != ty || !format_ok {
                    return Err(format!(
                        "a {scalar:?} field must be `type: {ty}`, format in {formats:?}, got {schema}"
                    ));
                }
                Ok(())
            }
        }
    }

    /// (b) Every message a contract method reaches has a schema.
    fn check_reachable(&mut self) {
        let tagged: BTreeSet<&str> = self.schemas.values().filter_map(|s| s["x-proto-message"].as_str()).collect();
        let mut seen = BTreeSet::new();
        let mut todo: Vec<MessageDescriptor> = contract_methods().flat_map(|m| [m.input(), m.output()]).collect();
        while let Some(desc) = todo.pop() {
            if !seen.insert(desc.full_name().to_string()) {
                continue;
            }
            if !tagged.contains(desc.full_name()) {
                self.errors.push(format!("message {} has no schema with x-proto-message", desc.full_name()));
            }
            todo.extend(desc.fields().filter_map(|f| f.kind().as_message().cloned()));
        }
    }

    /// (c) Operations match their methods; (d) every method has an operation, but those listed as gRPC only.
    fn check_operations(&mut self, paths: &'a Map<String, Value>, grpc_only: &[&str]) {
        let mut covered = BTreeSet::new();
        for (path, item) in paths {
            for verb in VERBS.into_iter().filter(|v| item.get(*v).is_some()) {
                let at = format!("{} {path}", verb.to_uppercase());
                let Some(name) = item[verb]["x-grpc-method"].as_str() else {
                    self.errors.push(format!("{at}: no x-grpc-method"));
                    continue;
                };
                match find_method(name) {
                    _ if name.starts_with(SKIPPED) => {}
                    Some(method) => self.check_operation(&at, verb, &item[verb], &method),
                    None => self.errors.push(format!("{at}: x-grpc-method {name} is not a method of the proto")),
                }
                covered.insert(name.to_string());
            }
        }
        for name in grpc_only {
            if find_method(name).is_none() {
                self.errors.push(format!("x-grpc-only: {name} is not a method of the proto"));
            } else if covered.contains(*name) {
                self.errors.push(format!("x-grpc-only: {name} has a REST operation"));
            }
        }
        for method in contract_methods() {
            let name = format!("{}/{}", method.parent_service().full_name(), method.name());
            if !covered.contains(&name) && !grpc_only.contains(&name.as_str()) {
                self.errors.push(format!("method {name} has no REST operation (x-grpc-method)"));
            }
        }
    }

    fn check_operation(&mut self, at: &str, verb: &str, op: &'a Value, method: &MethodDescriptor) {
        let (input, output) = (method.input(), method.output());
        let body = &op["requestBody"]["content"];
        if !body[JSON]["schema"].is_null() {
            match method.is_client_streaming() {
                false => self.expect_message(at, "request body", &body[JSON]["schema"], &input),
                true => self.expect_batch(at, &body[JSON]["schema"], &input),
            }
        }
        if !body[NDJSON]["schema"].is_null() {
            if !method.is_client_streaming() {
                self.errors.push(format!("{at}: an NDJSON request body, but the method takes one message"));
            }
            self.expect_message(at, "NDJSON request line", &body[NDJSON]["schema"], &input);
        }
        let answer = &op["responses"]["200"]["content"];
        match method.is_server_streaming() {
            false => self.expect_message(at, "200 response", &answer[JSON]["schema"], &output),
            true => self.expect_message(at, "200 response's NDJSON line", &answer[NDJSON]["schema"], &output),
        }
        let parameters: Vec<&Value> = op["parameters"].as_array().into_iter().flatten().collect();
        if verb == "get" {
            let named: BTreeSet<&str> = parameters.iter().filter_map(|p| p["name"].as_str()).collect();
            if let Some(field) = input.fields().find(|f| !named.contains(f.json_name())) {
                self.errors.push(format!(
                    "{at}: a GET has no body, but {} has the field {}",
                    input.full_name(),
                    field.json_name()
                ));
            }
        }
        for param in parameters.into_iter().filter(|p| p["in"] == "path" || p["in"] == "query") {
            let name = param["name"].as_str().unwrap_or_default();
            let result = match input.get_field_by_json_name(name) {
                Some(field) => self.check_field(&field, &param["schema"]),
                None => Err(format!("not a field of {}", input.full_name())),
            };
            if let Err(e) = result {
                self.errors.push(format!("{at}: {} parameter {name}: {e}", param["in"].as_str().unwrap_or_default()));
            }
        }
    }

    /// A JSON batch of a client stream's messages: an object whose one property is an array of them.
    fn expect_batch(&mut self, at: &str, schema: &'a Value, desc: &MessageDescriptor) {
        let schema = self.resolve(schema);
        let props: Vec<&Value> = schema["properties"].as_object().into_iter().flat_map(|p| p.values()).collect();
        let batch = matches!(props.as_slice(), [only] if only["type"] == "array"
            && self.message_of(&only["items"]) == Some(desc.full_name()));
        if !batch {
            self.errors
                .push(format!("{at}: the request body of a stream of {} is not a batch of them", desc.full_name()));
        }
    }

    fn expect_message(&mut self, at: &str, what: &str, schema: &'a Value, desc: &MessageDescriptor) {
        let found = self.message_of(schema);
        if found != Some(desc.full_name()) {
            self.errors
                .push(format!("{at}: the {what} is the message {found:?}, the method's is {}", desc.full_name()));
        }
    }
}

/// The OpenAPI type and accepted formats (empty: any) of a scalar field kind.
fn scalar_type(kind: &Kind) -> (&'static str, &'static [&'static str]) {
    match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => ("integer", &["int32"]),
        Kind::Uint32 | Kind::Fixed32 => ("integer", &["int32", "int64"]),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64 => ("integer", &["int64"]),
        Kind::Double => ("number", &["double"]),
        Kind::Float => ("number", &["float", "double"]),
        Kind::Bool => ("boolean", &[]),
        Kind::Bytes => ("string", &["byte"]),
        _ => ("string", &[]),
    }
}

/// A `Cell` in REST JSON: the pair `[x, y]` of 64-bit integers.
fn check_pair(schema: &Value) -> Result<(), String> {
    let items = &schema["items"];
    let ok = schema["type"] == "array"
        && schema["minItems"] == 2
        && schema["maxItems"] == 2
        && items["type"] == "integer"
        && items["format"] == "int64";
    ok.then_some(()).ok_or_else(|| {
        format!("a Cell must be the pair `type: array, items: integer/int64, minItems: 2, maxItems: 2`, got {schema}")
    })
}

fn contract_methods() -> impl Iterator<Item = MethodDescriptor> {
    descriptor_pool().services().flat_map(|s| s.methods().collect::<Vec<_>>())
}

/// `package.Service/Method`, as gRPC writes it.
fn find_method(name: &str) -> Option<MethodDescriptor> {
    let (service, method) = name.split_once('/')?;
    descriptor_pool().get_service_by_name(service)?.methods().find(|m| m.name() == method)
}

#[test]
fn openapi_matches_the_proto() {
    let errors = check(&load());
    assert!(errors.is_empty(), "contract/openapi.yaml is out of step with the proto:\n  {}", errors.join("\n  "));
}

#[test]
fn a_renamed_or_retyped_property_is_reported() {
    let mut doc = load();
    let student = &mut doc["components"]["schemas"]["Student"]["properties"];
    let first_name = student.as_object_mut().unwrap().remove("firstName").expect("Student.firstName");
    student["givenName"] = first_name;
    doc["components"]["schemas"]["CarMessage.Car"]["properties"]["year"]["type"] = "string".into();
    let errors = check(&doc);
    let reported = |words: &[&str]| errors.iter().any(|e| words.iter().all(|w| e.contains(w)));
    assert!(reported(&["callbench.v1.Student", "\"firstName\"", "\"givenName\""]), "rename not reported: {errors:?}");
    assert!(reported(&["CarMessage.Car", "year", "uint32"]), "retype not reported: {errors:?}");
    assert_eq!(errors.len(), 2, "{errors:?}");
}
