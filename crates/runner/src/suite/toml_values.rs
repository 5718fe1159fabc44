//! Schemas only, never built: how a suite file writes the values serde reads as a `toml::Value` or
//! a link spec, for the suite reference (`reference.rs`) to describe them.

/// A rate: calls/s, or `"50% of <experiment>"`.
#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
pub enum NumberOrText {
    Number(f64),
    Text(String),
}

/// A swept parameter's value.
#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    Number(f64),
    Text(String),
    Flag(bool),
}

/// A link: `{ rtt = "40ms" }` or `"rtt=40ms"`.
#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
pub enum TableOrText {
    Table(std::collections::BTreeMap<String, serde_json::Value>),
    Text(String),
}
