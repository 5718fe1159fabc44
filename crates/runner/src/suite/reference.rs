//! The suite-file reference of the book (docs/src/reference/suite.md, its keys block), made from
//! the serde types a suite file is read into: schemars gives each key, whether it may be left out
//! and its doc comment. A test fails when the chapter and the types differ, and when a key has no
//! doc comment.

use super::Suite;
use serde_json::{Map, Value};

/// The chapter and the markers of its made block.
pub const CHAPTER: &str = "docs/src/reference/suite.md";

/// The types of a suite file, where each sits in it, in the order the chapter gives them.
const SECTIONS: [(&str, &str); 10] = [
    ("Suite", "The top level"),
    ("LoadFields", "Load settings: `[defaults]`, and any experiment's own"),
    ("ExperimentSpec", "`[[experiment]]`"),
    ("Sweep", "`sweep = { param = …, values = […] }`"),
    ("ReferenceSpec", "`[[experiment.reference]]`: a seed article's figure beside a cell"),
    ("ClusterSpec", "`cluster = { ray = …, workers = … }`"),
    ("UserServer", "`[[server]]`: a server of yours, started by a command or running at a URL"),
    ("CallSpec", "`[[call]]`: what one call to your servers sends"),
    ("RestCall", "`rest = { … }` of a `[[call]]`"),
    ("GrpcCall", "`grpc = { … }` of a `[[call]]`"),
];

/// The keys block: a table per section.
pub fn keys_block() -> Result<String, Vec<String>> {
    let schema = schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<Suite>();
    let mut root = schema.to_value();
    let defs = match root.as_object_mut().and_then(|r| r.remove("$defs")) {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut out = Vec::new();
    let mut undocumented = Vec::new();
    for (name, title) in SECTIONS {
        let spec = if name == "Suite" { &root } else { &defs[name] };
        // A flattened LoadFields shows as one row: its keys are the table above.
        let load = defs["LoadFields"]["properties"].as_object().cloned().unwrap_or_default();
        let properties = spec["properties"].as_object().cloned().unwrap_or_default();
        let flattened = name != "LoadFields" && !load.is_empty() && load.keys().all(|k| properties.contains_key(k));
        let required: Vec<&str> =
            spec["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let mut rows = vec!["| key | type | meaning |".to_string(), "|---|---|---|".to_string()];
        if flattened {
            rows.push("| every load key | | the keys of the table above, for this experiment alone |".into());
        }
        for (key, property) in &properties {
            if flattened && load.contains_key(key) {
                continue;
            }
            let meaning = property["description"].as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>();
            if meaning.is_empty() {
                undocumented.push(format!("{name}.{key}"));
            }
            let marker = if required.contains(&key.as_str()) { " (required)" } else { "" };
            let meaning = meaning.join(" ").replace('|', "\\|");
            rows.push(format!("| `{key}`{marker} | {} | {meaning} |", kind(property, &defs)));
        }
        out.push(format!("## {title}\n\n{}\n", rows.join("\n")));
    }
    if undocumented.is_empty() {
        Ok(out.join("\n"))
    } else {
        Err(undocumented)
    }
}

/// A key's type as a suite's writer reads it: `string`, `integer`, `array of table`, `number or string`.
fn kind(spec: &Value, defs: &Map<String, Value>) -> String {
    if let Some(c) = spec.get("const") {
        return format!("`{}`", c.as_str().map_or(c.to_string(), str::to_string));
    }
    if let Some(values) = spec.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect();
        return format!("string ({})", names.join(", "));
    }
    if let Some(target) = spec.get("$ref").and_then(Value::as_str) {
        let def = &defs[target.rsplit('/').next().unwrap_or_default()];
        return if def.get("properties").is_some() { "table".into() } else { kind(def, defs) };
    }
    for alternatives in ["anyOf", "oneOf"] {
        if let Some(options) = spec.get(alternatives).and_then(Value::as_array) {
            // Named strings (an enum's variants, some with doc comments of their own) read as one list.
            let named: Vec<&str> = options
                .iter()
                .flat_map(|o| match (o.get("enum"), o.get("const")) {
                    (Some(Value::Array(values)), _) => values.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
                    (_, Some(value)) => vec![value.as_str()],
                    _ => vec![None],
                })
                .collect::<Option<Vec<&str>>>()
                .unwrap_or_default();
            if !named.is_empty() {
                return format!("string ({})", named.join(", "));
            }
            let kinds: Vec<String> =
                options.iter().filter(|o| o["type"] != "null").map(|o| kind(o, defs)).collect::<Vec<_>>();
            let mut unique: Vec<String> = Vec::new();
            for k in kinds {
                if !unique.contains(&k) {
                    unique.push(k);
                }
            }
            return unique.join(" or ");
        }
    }
    let types: Vec<&str> = match &spec["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => vec![],
    };
    match types.as_slice() {
        ["array"] => format!("array of {}", kind(&spec["items"], defs)),
        ["object"] => match spec.get("additionalProperties") {
            Some(inner @ Value::Object(_)) => format!("table of {}", kind(inner, defs)),
            _ => "table".into(),
        },
        [] => "any".into(),
        ts => ts.join(" or "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "<!-- suite keys: made from the suite's types (crates/runner/src/suite/reference.rs) -->\n";
    const END: &str = "<!-- /suite keys -->";

    #[test]
    fn the_books_suite_keys_are_the_suite_types() {
        let root = std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("../..");
        let made = keys_block().unwrap_or_else(|keys| {
            panic!("suite keys without a doc comment (say what each is for): {}", keys.join(", "))
        });
        let text = std::fs::read_to_string(root.join(CHAPTER)).expect("the chapter");
        let (a, b) = match (text.find(START), text.find(END)) {
            (Some(a), Some(b)) => (a + START.len(), b),
            _ => panic!("{CHAPTER}: no block between {START:?} and {END:?}"),
        };
        if text[a..b] != made {
            let fresh = std::env::temp_dir().join("callbench-suite-reference.md");
            std::fs::write(&fresh, format!("{}{made}{}", &text[..a], &text[b..])).unwrap();
            panic!("{CHAPTER}'s suite keys are not what the suite's types say: copy {} over it", fresh.display());
        }
    }

    #[test]
    fn types_read_as_a_suite_writer_writes_them() {
        let block = keys_block().unwrap();
        for row in [
            "| `name` (required) | string |",
            "| `rate` | number or string |",
            "| `network` | table or string |",
            "| `experiment` (required) | array of table |",
            "| `values` (required) | array of number or string or boolean |",
        ] {
            assert!(block.contains(row), "{row} not in:\n{block}");
        }
    }
}
