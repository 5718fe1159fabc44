//! The seed table of a run's answer: `reproductions/seeds.toml` lists, for each seed article's
//! figure, the committed results that reproduce it under the article's conditions; its `here`
//! and `why` texts name figures of those results by placeholder, so a quoted figure is always
//! the committed one:
//!
//! - `{/cells/0/ms/p50}`: a JSON pointer into the row's results file, the value as it is there;
//! - `{quotient /a /b}`: two such numbers divided, as a ratio (`1.03×`); `{difference /a /b}`:
//!   one less the other;
//! - `{median CELL METRIC}`: a callbench results.json cell's median, with its unit (`20.7 µs`);
//!   `{difference CELL_A CELL_B METRIC}`: one median less the other, with its unit;
//! - `{ratio CELL_A CELL_B METRIC}`: the run's comparison of two cells with its 95% interval
//!   (`0.77× [0.75 – 0.79]`), or their medians' quotient when it compared none.

use callbench_results::format;
use callbench_results::model::{Results, SeedRow};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// Where the table is, relative to the repository.
pub const FILE: &str = "reproductions/seeds.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    row: Vec<RowSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RowSpec {
    seed: String,
    what: String,
    article: String,
    /// The results file the placeholders read, relative to `reproductions/`; none when the
    /// figure cannot be measured here (`here` says why, with no placeholder).
    #[serde(default)]
    results: Option<String>,
    here: String,
    why: String,
    command: String,
}

/// The table's rows with their figures filled in from the committed results; the error names
/// the row and the placeholder that could not be read.
pub(crate) fn read(repo_root: &Path) -> Result<Vec<SeedRow>, String> {
    let path = repo_root.join(FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let table: Table = toml::from_str(&text).map_err(|e| format!("{FILE}: {}", one_line(&e.to_string())))?;
    let dir = repo_root.join("reproductions");
    table
        .row
        .iter()
        .map(|row| {
            let source = row.results.as_deref().unwrap_or("no results");
            let json = match &row.results {
                Some(name) => {
                    let data = std::fs::read_to_string(dir.join(name))
                        .map_err(|e| format!("{FILE}, seed {}: {name}: {e}", row.seed))?;
                    serde_json::from_str(&data).map_err(|e| format!("{name}: {e}"))?
                }
                None => Value::Null,
            };
            let fill = |text: &str| fill(text, &json).map_err(|e| format!("{FILE}, seed {} ({source}): {e}", row.seed));
            Ok(SeedRow {
                seed: row.seed.clone(),
                what: row.what.clone(),
                article: row.article.clone(),
                here: fill(&row.here)?,
                why: fill(&row.why)?,
                command: row.command.clone(),
            })
        })
        .collect()
}

/// `text` with every `{…}` replaced by the figure it names in `json`.
pub(crate) fn fill(text: &str, json: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').ok_or_else(|| format!("an unclosed '{{' in: {text}"))? + start;
        out.push_str(&figure(&rest[start + 1..end], json)?);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn figure(placeholder: &str, json: &Value) -> Result<String, String> {
    let words: Vec<&str> = placeholder.split_whitespace().collect();
    match words.as_slice() {
        [pointer] if pointer.starts_with('/') => match at(json, pointer)? {
            Value::String(s) => Ok(s.clone()),
            other => Ok(other.to_string()),
        },
        ["quotient", a, b] => Ok(format::ratio_value(number(json, a)? / number(json, b)?)),
        ["difference", a, b] => Ok(format::significant(number(json, a)? - number(json, b)?)),
        ["difference", a, b, metric] => {
            let r = results(json)?;
            Ok(format::value_with_unit(metric, median(&r, a, metric)? - median(&r, b, metric)?))
        }
        ["median", cell, metric] => Ok(format::value_with_unit(metric, median(&results(json)?, cell, metric)?)),
        ["ratio", a, b, metric] => ratio(&results(json)?, a, b, metric),
        _ => Err(format!(
            "'{{{placeholder}}}' is none of {{/pointer}}, {{quotient /a /b}}, {{difference /a /b}}, {{median CELL METRIC}}, \
             {{difference A B METRIC}}, {{ratio A B METRIC}}"
        )),
    }
}

fn at<'a>(json: &'a Value, pointer: &str) -> Result<&'a Value, String> {
    json.pointer(pointer).ok_or_else(|| format!("{pointer} is not in the results"))
}

fn number(json: &Value, pointer: &str) -> Result<f64, String> {
    at(json, pointer)?.as_f64().ok_or_else(|| format!("{pointer} is not a number"))
}

fn results(json: &Value) -> Result<Results, String> {
    serde_json::from_value(json.clone()).map_err(|e| format!("not a callbench results.json: {e}"))
}

fn median(r: &Results, cell: &str, metric: &str) -> Result<f64, String> {
    let c = r.cell(cell).ok_or_else(|| format!("no cell {cell} in the results"))?;
    c.summary.get(metric).map(|e| e.median).ok_or_else(|| format!("cell {cell} has no {metric}"))
}

fn ratio(r: &Results, a: &str, b: &str, metric: &str) -> Result<String, String> {
    let compared = r.comparisons.iter().find(|c| c.metric == metric && c.a == a && c.b == b);
    if let Some(c) = compared {
        return Ok(callbench_results::format::comparison_figure(c, &c.ratio));
    }
    let inverse = r.comparisons.iter().find(|c| c.metric == metric && c.a == b && c.b == a);
    if let Some(c) = inverse.filter(|c| !c.exact) {
        return Ok(callbench_results::format::comparison_figure(c, &c.ratio.inverse()));
    }
    Ok(format::ratio_value(median(r, a, metric)? / median(r, b, metric)?))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
