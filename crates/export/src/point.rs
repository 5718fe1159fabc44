//! One value of one series: a metric's name, its labels and a gauge's value or a histogram.

use crate::native::NativeHistogram;

/// Label names and values, in any order (sorted when written).
pub type Labels = Vec<(String, String)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Histogram,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Gauge(f64),
    Histogram(NativeHistogram),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub name: &'static str,
    pub help: &'static str,
    /// The unit in the OpenMetrics sense ("seconds", "bytes"), or empty.
    pub unit: &'static str,
    pub kind: Kind,
    pub labels: Labels,
    pub value: Value,
}

impl Point {
    pub fn gauge(name: &'static str, help: &'static str, unit: &'static str, labels: Labels, value: f64) -> Point {
        Point { name, help, unit, kind: Kind::Gauge, labels, value: Value::Gauge(value) }
    }

    pub fn histogram(
        name: &'static str,
        help: &'static str,
        unit: &'static str,
        labels: Labels,
        h: NativeHistogram,
    ) -> Point {
        Point { name, help, unit, kind: Kind::Histogram, labels, value: Value::Histogram(h) }
    }

    /// `__name__` and the labels, sorted by name as remote write asks.
    pub fn sorted_labels(&self) -> Vec<(&str, &str)> {
        let mut all: Vec<(&str, &str)> = vec![("__name__", self.name)];
        all.extend(self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        all.sort();
        all
    }
}

/// A label name Prometheus takes: `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
pub fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("'{0}': a label is KEY=VALUE")]
    NoValue(String),
    #[error("'{0}': a label name is letters, digits and _, not starting with a digit or __")]
    BadName(String),
    #[error("'{0}': callbench sets this label itself (its own: {own})", own = OWN_LABELS.join(", "))]
    Own(String),
}

/// The labels callbench puts on its series: a label of the user's may not take one of these names
/// (a series with a label twice is refused by the receiver).
pub const OWN_LABELS: [&str; 11] =
    ["suite", "experiment", "cell", "server", "protocol", "workload", "repetition", "target", "outcome", "kind", "le"];

/// `KEY=VALUE` from the command line as a label, or why it is not one.
pub fn parse_label(text: &str) -> Result<(String, String), LabelError> {
    let (name, value) = text.split_once('=').ok_or_else(|| LabelError::NoValue(text.to_string()))?;
    if !valid_label_name(name) {
        return Err(LabelError::BadName(name.to_string()));
    }
    if OWN_LABELS.contains(&name) {
        return Err(LabelError::Own(name.to_string()));
    }
    Ok((name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_the_command_line() {
        assert_eq!(parse_label("branch=main").unwrap(), ("branch".into(), "main".into()));
        assert_eq!(parse_label("commit=a=b").unwrap(), ("commit".into(), "a=b".into()));
        assert_eq!(parse_label("branch"), Err(LabelError::NoValue("branch".into())));
        assert_eq!(parse_label("9x=1"), Err(LabelError::BadName("9x".into())));
        assert!(matches!(parse_label("__name__=x"), Err(LabelError::BadName(_))));
        assert!(matches!(parse_label("a-b=1"), Err(LabelError::BadName(_))));
        assert_eq!(parse_label("cell=x"), Err(LabelError::Own("cell".into())));
    }
}
