//! results.json's JSON schema (draft 2020-12), made from the model: the types, their fields, which
//! may be left out and their doc comments come from `model` through schemars; this adds what serde
//! does not say (no key beyond the model's, the `schema` constant, the metric names a summary, a
//! headline and a comparison may use). `schemas/results.schema.json` is what this makes: a test
//! fails when the two differ.

use crate::model::{Results, METRICS, SCHEMA};
use serde_json::{json, Map, Value};

/// Where the committed schema lives, from the repository's root.
pub const SCHEMA_FILE: &str = "schemas/results.schema.json";

/// The fields whose values are metric names, by the type that holds them.
const METRIC_FIELDS: [(&str, &str); 3] =
    [("Experiment", "headline"), ("Comparison", "metric"), ("Reference", "metric")];

/// The schema, as the committed file holds it (two-space indents, a final newline).
pub fn text() -> String {
    serde_json::to_string_pretty(&schema()).expect("a schema serialises") + "\n"
}

pub fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut root = generator.into_root_schema_for::<Results>().to_value();
    no_other_keys(&mut root);
    let top = root.as_object_mut().expect("the root is an object");
    top.insert("$id".into(), json!("https://callbench.dev/schemas/results.schema.json"));
    top.insert("title".into(), json!("callbench results"));
    top["properties"]["schema"] = json!({ "const": SCHEMA });
    let defs = top.get_mut("$defs").and_then(Value::as_object_mut).expect("the model's types are $defs");
    let names: Vec<&str> = METRICS.iter().map(|(name, _, _)| *name).collect();
    defs.insert(
        "Metric".into(),
        json!({ "description": "A metric every cell summarises (model::METRICS).", "enum": names }),
    );
    let metric = json!({ "$ref": "#/$defs/Metric" });
    defs["Cell"]["properties"]["summary"]["propertyNames"] = metric.clone();
    for (ty, field) in METRIC_FIELDS {
        let property = &mut defs[ty]["properties"][field];
        // An optional metric stays optional: the reference to Metric replaces the string it allows.
        replace_string(property, &metric);
    }
    root
}

/// Every object with named properties takes no other key (serde would not write one).
fn no_other_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(no_other_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(no_other_keys),
        _ => {}
    }
}

/// `{"type": "string"}` → the metric; `{"type": ["string", "null"]}` → the metric or null.
fn replace_string(property: &mut Value, metric: &Value) {
    let description = property.get("description").cloned();
    let nullable = property["type"].as_array().is_some_and(|t| t.iter().any(|t| t == "null"));
    let mut replaced = Map::new();
    if let Some(d) = description {
        replaced.insert("description".into(), d);
    }
    if nullable {
        replaced.insert("anyOf".into(), json!([metric, { "type": "null" }]));
    } else {
        replaced.insert("$ref".into(), metric["$ref"].clone());
    }
    *property = Value::Object(replaced);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_schema_is_the_one_the_model_makes() {
        let root = std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("../..");
        let made = text();
        let written = std::fs::read_to_string(root.join(SCHEMA_FILE)).unwrap_or_default();
        if written != made {
            let fresh = std::env::temp_dir().join("callbench-results.schema.json");
            std::fs::write(&fresh, &made).unwrap();
            panic!("{SCHEMA_FILE} is not what the model makes: copy {} over it", fresh.display());
        }
    }

    #[test]
    fn metric_fields_name_metrics() {
        let schema = schema();
        for (ty, field) in METRIC_FIELDS {
            let text = schema["$defs"][ty]["properties"][field].to_string();
            assert!(text.contains("#/$defs/Metric"), "{ty}.{field}: {text}");
        }
        assert_eq!(schema["$defs"]["Metric"]["enum"].as_array().unwrap().len(), METRICS.len());
    }
}
