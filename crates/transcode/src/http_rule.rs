//! gRPC transcoding: the REST call that a method's `google.api.http` rule names as its twin, for a
//! request message given as JSON. The rule's verb and path template give the method and path: each
//! `{field}` is filled from the message (a `{field=a/*/b/**}` variable keeps its slashes); `body: "*"`
//! sends the rest of the message as the JSON body, `body: "field"` that field, and every field
//! bound neither to the path nor to the body goes into the query (`a.b=1&tags=x&tags=y`), as
//! grpc-gateway, Envoy and Cloud Endpoints map them.

use crate::TranscodeError;
use callbench_primitives::error_text::one_line;
use prost_reflect::{DynamicMessage, ExtensionDescriptor, MessageDescriptor, MethodDescriptor, SerializeOptions};
use serde_json::{Map, Value};

/// The REST call a method's rule maps a request to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    pub method: String,
    /// The path with its query: `/v1/shelves/1/books?view=FULL`.
    pub path: String,
    /// The JSON body, when the rule sends one.
    pub body: Option<String>,
    /// The field of the gRPC answer that the REST answer is (`response_body`), if the rule names one.
    pub response_body: Option<String>,
}

/// The REST twin of a call to `method` with `request` (JSON); the error is one line: a method
/// without a rule is a [`TranscodeError::Method`], a rule that cannot be used
/// [`TranscodeError::Rule`], a request it cannot map [`TranscodeError::Message`].
pub fn rest_twin(method: &MethodDescriptor, request: &str) -> Result<RestCall, TranscodeError> {
    let name = method.full_name();
    let rule = rule(method).ok_or_else(|| {
        TranscodeError::Method(format!("{name} has no google.api.http rule: its .proto says no REST twin (option (google.api.http) = {{ get: \"/…\" }})"))
    })?;
    let text =
        |field: &str| rule.get_field_by_name(field).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let (verb, template) = ["get", "put", "post", "delete", "patch"]
        .iter()
        .find(|verb| rule.has_field_by_name(verb))
        .map(|verb| (verb.to_uppercase(), text(verb)))
        .or_else(|| {
            let custom = rule.get_field_by_name("custom")?;
            let custom = custom.as_message()?;
            let field =
                |f: &str| custom.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            Some((field("kind").to_uppercase(), field("path")))
        })
        .filter(|(verb, template)| !verb.is_empty() && template.starts_with('/'))
        .ok_or_else(|| TranscodeError::Rule(format!("{name}: its google.api.http rule names no method and path")))?;
    let input = method.input();
    let given = parse_request(&input, request).map_err(TranscodeError::Message)?;
    // Canonical proto3 JSON by proto field names: what the path and the query are filled from.
    let options = SerializeOptions::new().use_proto_field_name(true).stringify_64_bit_integers(false);
    let canonical = given
        .serialize_with_options(serde_json::value::Serializer, &options)
        .map_err(|e| TranscodeError::Message(format!("{name}: cannot read the request: {e}")))?;
    let (mut path, bound) =
        fill_template(&template, &canonical).map_err(|e| e.map(|e| format!("{name} ({verb} {template}): {e}")))?;
    let body_rule = text("body");
    let user: Value = if request.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(request).map_err(|e| TranscodeError::Message(e.to_string()))?
    };
    let body = match body_rule.as_str() {
        "" => None,
        "*" => {
            let mut rest = user.clone();
            for field in &bound {
                remove_path(&mut rest, field, &input);
            }
            Some(rest.to_string())
        }
        field => {
            let value = lookup_user(&user, field, &input).cloned().unwrap_or(Value::Object(Map::new()));
            Some(value.to_string())
        }
    };
    let mut query = Vec::new();
    if body_rule != "*" {
        let mut skip = bound.clone();
        if !body_rule.is_empty() {
            skip.push(body_rule.clone());
        }
        flatten_query(&canonical, "", &skip, &mut query);
    }
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query.join("&"));
    }
    let response_body = Some(text("response_body")).filter(|f| !f.is_empty());
    Ok(RestCall { method: verb, path, body, response_body })
}

/// The method's `google.api.http` rule, if its .proto gives one.
fn rule(method: &MethodDescriptor) -> Option<DynamicMessage> {
    let extension: ExtensionDescriptor = method.parent_pool().get_extension_by_name("google.api.http")?;
    let options = method.options();
    if !options.has_extension(&extension) {
        return None;
    }
    options.get_extension(&extension).as_message().cloned()
}

fn parse_request(input: &MessageDescriptor, request: &str) -> Result<DynamicMessage, String> {
    let text = request.trim();
    if text.is_empty() {
        return Ok(DynamicMessage::new(input.clone()));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    DynamicMessage::deserialize(input.clone(), &mut reader)
        .and_then(|message| reader.end().map(|()| message))
        .map_err(|e| one_line(&format!("request JSON for {}: {e}", input.full_name())))
}

/// The template with every `{field}` filled from `message`; the fields bound to the path. A
/// template that cannot be filled is the rule's fault (`Descriptors`), a field it needs the
/// message's (`Message`).
fn fill_template(template: &str, message: &Value) -> Result<(String, Vec<String>), TranscodeError> {
    let wildcard = || TranscodeError::Rule("a wildcard outside a {variable} cannot be filled from the message".into());
    let mut out = String::new();
    let mut bound = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let literal = &rest[..start];
        if literal.contains('*') {
            return Err(wildcard());
        }
        out.push_str(literal);
        let end = rest[start..]
            .find('}')
            .map(|e| start + e)
            .ok_or_else(|| TranscodeError::Rule("a '{' without its '}'".into()))?;
        let variable = &rest[start + 1..end];
        let (field, pattern) = variable.split_once('=').unwrap_or((variable, "*"));
        let field = field.trim();
        let value = lookup(message, field)
            .ok_or_else(|| TranscodeError::Message(format!("the path needs field '{field}': give it in -d")))?;
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                let why = format!("field '{field}' is not a single value: it cannot be a path segment");
                return Err(TranscodeError::Message(why));
            }
        };
        if text.is_empty() {
            return Err(TranscodeError::Message(format!("the path needs field '{field}': it is empty")));
        }
        // A variable of one segment escapes '/'; one of several (`a/*`, `**`) keeps the slashes.
        let multi = pattern.contains('/') || pattern.contains("**");
        out.push_str(&escape(&text, multi));
        bound.push(field.to_string());
        rest = &rest[end + 1..];
    }
    if rest.contains('*') {
        return Err(wildcard());
    }
    out.push_str(rest);
    Ok((out, bound))
}

/// The value at a dotted path of proto field names.
fn lookup<'a>(message: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(message, |value, key| value.as_object()?.get(key))
}

/// The value at a dotted path in the user's JSON, each step by proto or JSON name.
fn lookup_user<'a>(user: &'a Value, path: &str, input: &MessageDescriptor) -> Option<&'a Value> {
    let mut value = user;
    let mut message = Some(input.clone());
    for key in path.split('.') {
        let field = message.as_ref().and_then(|m| m.get_field_by_name(key));
        let object = value.as_object()?;
        value = object.get(key).or_else(|| field.as_ref().and_then(|f| object.get(f.json_name())))?;
        message = field.and_then(|f| f.kind().as_message().cloned());
    }
    Some(value)
}

/// Removes a dotted path from the user's JSON (each step by proto or JSON name).
fn remove_path(user: &mut Value, path: &str, input: &MessageDescriptor) {
    let keys: Vec<&str> = path.split('.').collect();
    let mut value = user;
    let mut message = Some(input.clone());
    for (i, key) in keys.iter().enumerate() {
        let field = message.as_ref().and_then(|m| m.get_field_by_name(key));
        let json_name = field.as_ref().map(|f| f.json_name().to_string());
        let Some(object) = value.as_object_mut() else { return };
        if i + 1 == keys.len() {
            object.remove(*key);
            if let Some(json) = json_name {
                object.remove(&json);
            }
            return;
        }
        let next = if object.contains_key(*key) { key.to_string() } else { json_name.unwrap_or_default() };
        let Some(child) = object.get_mut(&next) else { return };
        value = child;
        message = field.and_then(|f| f.kind().as_message().cloned());
    }
}

/// `key=value` pairs of every leaf not under a skipped path, nested messages as `a.b`, repeated
/// values as repeated keys.
fn flatten_query(value: &Value, prefix: &str, skip: &[String], out: &mut Vec<String>) {
    let Some(object) = value.as_object() else { return };
    for (key, value) in object {
        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        if skip.contains(&path) {
            continue;
        }
        match value {
            Value::Object(_) => flatten_query(value, &path, skip, out),
            Value::Array(items) => {
                for item in items.iter().filter(|i| !i.is_object() && !i.is_array()) {
                    out.push(format!("{}={}", escape(&path, false), escape(&scalar(item), false)));
                }
            }
            Value::Null => {}
            scalar_value => out.push(format!("{}={}", escape(&path, false), escape(&scalar(scalar_value), false))),
        }
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters (and '/' when `keep_slash`).
fn escape(text: &str, keep_slash: bool) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(byte as char),
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests;
