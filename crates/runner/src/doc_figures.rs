//! Every figure in the docs a reader takes for a measurement — README.md, docs/src/run.md and
//! docs/src/seeds.md — is backed by something committed. A figure is a number with a unit of
//! measure in the prose (outside fenced code, inline code spans and the generated blocks, whose
//! generators check them): see [`extract`] for exactly what is read. It is backed when, at the
//! precision it is written with (`2 ms` is 1.5 to 2.5 ms),
//!
//! - a number of a committed results file its paragraph names (`reproductions/NAME`, in a link, a
//!   path or a command) equals it: any numeric leaf of `reproductions/NAME/results.json` but the
//!   raw repetitions (`runs`, `spectrum`: prose quotes a run's summaries), in the unit its key names
//!   (`wall_us_per_call`, `mean_ms`, `total_s`, `/ms/p50`, `throughput_per_s`, `growth_pct`)
//!   converted to the figure's, or as it is when its key names none (a ratio, a count); a fraction
//!   also backs a percentage; the run's wall time (`finished_at` − `started_at`) backs a duration
//!   within 10%;
//! - or a figure of a record the paragraph names (`bench/results/FILE.md`, callbench's own runs);
//! - or a figure of an `article` of `reproductions/seeds.toml` (the seed articles' own figures),
//!   wherever it is quoted;
//! - or `docs/stated-figures.toml` states it, in that file, as no measurement (a configured
//!   duration, a threshold the code applies, arithmetic on other figures) with its reason; when it
//!   names the file that sets it, that file holds its number, and when it gives its arithmetic,
//!   the arithmetic gives it.
//!
//! A number whose key names no unit (a count, a ratio) backs only a ratio (`1.13×`) or a percentage:
//! a figure with a unit needs a number in a unit.
//!
//! A results file's number backs a figure of one significant digit (`2 ms`, `100 ms`) only when
//! equal to it: the setting a run records (its round trip), not a measurement that rounds to it.
//!
//! The same holds for the words of the seed table (`reproductions/seeds.toml`'s `what`, `here`, `why`,
//! rendered into seeds.md's generated block): a figure typed there outside a placeholder is backed
//! by the row's own results, an article, or a stated entry for that file.
//!
//! Backing is scoped to what a paragraph names because a results.json holds thousands of numbers:
//! nearly any figure of three digits equals one of them somewhere.

mod arithmetic;
pub(crate) mod extract;

use extract::{Family, Figure};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// The files whose figures are checked.
pub const CHECKED: &[&str] = &["README.md", "docs/src/run.md", "docs/src/seeds.md"];
/// The committed list of figures that are not measurements.
pub const STATED: &str = "docs/stated-figures.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatedList {
    figure: Vec<Stated>,
}

/// A figure that is no measurement: where it is written, its text as written, why, and the file
/// that sets it (if one does).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stated {
    file: String,
    figure: String,
    why: String,
    #[serde(default)]
    source: Option<String>,
    /// Arithmetic that gives it, in its written unit (`"182 - 102"`), one per value of a range or
    /// list: the test computes each and holds the figure to the result.
    #[serde(default)]
    derived: Vec<String>,
}

/// A number a figure can be backed by: its value, in a family's base unit when its unit is known,
/// how far its own rounding reaches, and how close a figure must come relative to it.
#[derive(Debug, Clone)]
struct Backing {
    family: Option<Family>,
    value: f64,
    half_step: f64,
    relative: f64,
    /// A number of a results file, which backs a figure of one significant digit (`2 ms`) only
    /// when equal to it (a setting the run records, not a measurement that rounds to it).
    measured: bool,
}

/// The problems of the repository's docs, one line each (none when every figure is backed).
pub(crate) fn check(repo_root: &Path) -> Result<Vec<String>, String> {
    let sources = sources(repo_root)?;
    let stated_text = std::fs::read_to_string(repo_root.join(STATED)).map_err(|e| format!("{STATED}: {e}"))?;
    let stated: StatedList = toml::from_str(&stated_text).map_err(|e| format!("{STATED}: {e}"))?;
    let mut used = vec![false; stated.figure.len()];
    let mut problems = vec![];
    for file in CHECKED {
        let text = std::fs::read_to_string(repo_root.join(file)).map_err(|e| format!("{file}: {e}"))?;
        problems.extend(check_text(file, &text, &sources, &stated.figure, &mut used));
    }
    problems.extend(check_seed_rows(repo_root, &sources, &stated.figure, &mut used)?);
    for (s, used) in stated.figure.iter().zip(&used) {
        if s.why.trim().is_empty() {
            problems.push(format!("{STATED}: {} in {} says no why", s.figure, s.file));
        }
        if !used {
            problems
                .push(format!("{STATED}: {} is no longer in {}'s prose: remove it from the list", s.figure, s.file));
        }
        if let Some(source) = &s.source {
            problems.extend(source_holds(repo_root, s, source));
        }
    }
    Ok(problems)
}

/// The unbacked figures of one file's text, each a line naming the file, the line, the figure and
/// how to fix it; `used` marks the stated figures met.
fn check_text(file: &str, text: &str, sources: &Sources, stated: &[Stated], used: &mut [bool]) -> Vec<String> {
    let paragraphs = match extract::paragraphs(text) {
        Ok(paragraphs) => paragraphs,
        Err(e) => return vec![format!("{file}: {e}")],
    };
    let mut problems = vec![];
    for paragraph in paragraphs {
        let named = extract::named_sources(&paragraph.raw);
        let backings: Vec<&Backing> =
            sources.anywhere.iter().chain(named.iter().filter_map(|n| sources.named.get(n)).flatten()).collect();
        let lines: Vec<(String, String)> =
            paragraph.lines.into_iter().map(|(n, line)| (format!("{file}:{n}"), line)).collect();
        problems.extend(check_paragraph(file, &lines, &backings, stated, used));
    }
    problems
}

fn check_paragraph(
    file: &str,
    lines: &[(String, String)],
    backings: &[&Backing],
    stated: &[Stated],
    used: &mut [bool],
) -> Vec<String> {
    let mut problems = vec![];
    for (at, line) in lines {
        let mut reported: Vec<String> = vec![];
        for figure in extract::figures(line) {
            if let Some(i) = stated.iter().position(|s| s.file == file && s.figure == figure.text) {
                used[i] = true;
                if !reported.contains(&figure.text) {
                    if let Some(p) = derived_problem(&stated[i], &figure, &extract::figures(line)) {
                        reported.push(figure.text.clone());
                        problems.push(format!("{at}: {p}"));
                    }
                }
                continue;
            }
            if reported.contains(&figure.text) || backings.iter().any(|b| backs(b, &figure)) {
                continue;
            }
            reported.push(figure.text.clone());
            problems.push(format!(
                "{at}: \"{}\" is a figure no committed result backs: quote it from its results through a \
                 placeholder of reproductions/seeds.toml or a generated block, or correct it to the committed \
                 figure and name its results in the paragraph (reproductions/NAME, bench/results/FILE.md; the \
                 articles' figures are in reproductions/seeds.toml), or state in {STATED} why it is no \
                 measurement",
                figure.text
            ));
        }
    }
    problems
}

/// The seed table's own words: the figures its rows' `what`, `here` and `why` type outside their
/// placeholders (the placeholders' are the results' by construction), each backed by the row's
/// results, an article or a stated entry for `reproductions/seeds.toml`.
fn check_seed_rows(
    repo_root: &Path,
    sources: &Sources,
    stated: &[Stated],
    used: &mut [bool],
) -> Result<Vec<String>, String> {
    let file = crate::seed_table::FILE;
    let text = std::fs::read_to_string(repo_root.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let table: toml::Value = toml::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let mut problems = vec![];
    for row in table.get("row").and_then(|r| r.as_array()).into_iter().flatten() {
        let field = |key: &str| row.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        let results = field("results");
        let name = format!("{}/{}", crate::reproductions::DIR, results.split('/').next().unwrap_or_default());
        let backings: Vec<&Backing> =
            sources.anywhere.iter().chain(sources.named.get(&name).into_iter().flatten()).collect();
        let lines: Vec<(String, String)> = ["what", "here", "why"]
            .iter()
            .map(|key| {
                (
                    format!("{file}, seed {}'s row on {results} ({key})", field("seed")),
                    without_placeholders(&field(key)),
                )
            })
            .collect();
        problems.extend(check_paragraph(file, &lines, &backings, stated, used));
    }
    Ok(problems)
}

/// The text with every `{…}` placeholder a space.
fn without_placeholders(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => {
                depth -= 1;
                out.push(' ');
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether `b` backs `f`: equal at the figure's precision (and the backing's own), or within the
/// backing's relative tolerance.
fn backs(b: &Backing, f: &Figure) -> bool {
    if b.family.is_some_and(|family| family != f.family) {
        return false;
    }
    // A number whose key names no unit (a count, a ratio) backs a ratio or a percentage, never a
    // figure with a unit: `12 ms` is not backed by twelve calls of the same run.
    if b.family.is_none() && !matches!(f.family, Family::Times | Family::Percent) {
        return false;
    }
    if b.measured && f.significant < 2 {
        let exact = |x: f64| (x - f.value).abs() <= 1e-9 * f.value.abs().max(1e-12);
        return exact(b.value) || (b.family.is_none() && f.family == Family::Percent && exact(b.value * 100.0));
    }
    let tolerance = f.half_step + b.half_step + b.relative * b.value.abs() + 1e-9 * f.value.abs().max(1e-12);
    if (b.value - f.value).abs() <= tolerance {
        return true;
    }
    // A fraction backs a percentage.
    b.family.is_none() && f.family == Family::Percent && (b.value * 100.0 - f.value).abs() <= f.half_step + 1e-9
}

/// The committed numbers a figure may be backed by: the articles' anywhere, a results file's or a
/// record's where a paragraph names it (`reproductions/NAME`, `bench/results/FILE.md`).
struct Sources {
    anywhere: Vec<Backing>,
    named: std::collections::BTreeMap<String, Vec<Backing>>,
}

fn sources(repo_root: &Path) -> Result<Sources, String> {
    let mut named = std::collections::BTreeMap::new();
    for name in crate::reproductions::names(repo_root)? {
        let path = crate::reproductions::results_file(repo_root, &name).ok_or(name.clone())?;
        let json = crate::reproductions::read(&path)?;
        let mut out = vec![];
        leaves(&json, None, &mut out);
        if let Ok(seconds) = crate::reproductions::wall_seconds(&json) {
            out.push(Backing {
                family: Some(Family::Time),
                value: seconds,
                half_step: 0.0,
                relative: 0.1,
                measured: false,
            });
        }
        named.insert(format!("{}/{name}", crate::reproductions::DIR), out);
    }
    let bench = repo_root.join("bench/results");
    for entry in std::fs::read_dir(&bench).map_err(|e| format!("{}: {e}", bench.display()))? {
        let record = entry.map_err(|e| e.to_string())?.path();
        if record.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&record).map_err(|e| format!("{}: {e}", record.display()))?;
        let figures = text.lines().flat_map(extract::figures).map(from_figure).collect();
        named.insert(format!("bench/results/{}", record.file_name().unwrap_or_default().to_string_lossy()), figures);
    }
    let seeds = std::fs::read_to_string(repo_root.join(crate::seed_table::FILE))
        .map_err(|e| format!("{}: {e}", crate::seed_table::FILE))?;
    let seeds: toml::Value = toml::from_str(&seeds).map_err(|e| format!("{}: {e}", crate::seed_table::FILE))?;
    let mut articles = vec![];
    strings_named(&seeds, "article", &mut articles);
    // A suite's references quote the articles too (`[[experiment.reference]]`'s `article`).
    let suites = repo_root.join("suites");
    for entry in std::fs::read_dir(&suites).map_err(|e| format!("{}: {e}", suites.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let suite: toml::Value = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            strings_named(&suite, "article", &mut articles);
        }
    }
    let anywhere = articles.iter().flat_map(|a| extract::figures(a)).map(from_figure).collect();
    Ok(Sources { anywhere, named })
}

/// What is wrong with a stated figure's arithmetic, if anything: each value of the figure (a
/// range or list has several, `line_figures` holds them) must be what one of its `derived`
/// expressions gives, at the precision written.
fn derived_problem(s: &Stated, figure: &Figure, line_figures: &[Figure]) -> Option<String> {
    if s.derived.is_empty() {
        return None;
    }
    let values: Vec<&Figure> = line_figures.iter().filter(|f| f.text == figure.text).collect();
    let mut results = vec![];
    for expression in &s.derived {
        match arithmetic::evaluate(expression) {
            Ok(v) => results.push((expression, v)),
            Err(e) => return Some(format!("{STATED}: {}: derived \"{expression}\": {e}", s.figure)),
        }
    }
    let unmatched: Vec<String> = values
        .iter()
        .filter(|f| !results.iter().any(|(_, v)| (v * f.scale - f.value).abs() <= f.half_step + 1e-9 * f.value.abs()))
        .map(|f| format!("{}", f.value / f.scale))
        .collect();
    (!unmatched.is_empty() || values.len() != results.len()).then(|| {
        let gives: Vec<String> = results.iter().map(|(e, v)| format!("{e} = {v}")).collect();
        format!(
            "\"{}\" is not what its stated arithmetic in {STATED} gives ({}): correct the figure or the arithmetic",
            s.figure,
            gives.join(", ")
        )
    })
}

/// Every string of `toml` under a key called `key`, at any depth.
fn strings_named(toml: &toml::Value, key: &str, out: &mut Vec<String>) {
    match toml {
        toml::Value::Table(t) => {
            for (k, v) in t {
                match v.as_str() {
                    Some(s) if k == key => out.push(s.to_string()),
                    _ => strings_named(v, key, out),
                }
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| strings_named(v, key, out)),
        _ => {}
    }
}

fn from_figure(f: Figure) -> Backing {
    Backing { family: Some(f.family), value: f.value, half_step: f.half_step, relative: 0.0, measured: false }
}

/// Every numeric leaf of `json`, in the unit the nearest key that names one gives it.
fn leaves(json: &Value, unit: Option<(Family, f64)>, out: &mut Vec<Backing>) {
    match json {
        Value::Object(map) => {
            // A cell's raw repetitions and latency spectrum: prose quotes its summaries.
            for (key, v) in map.iter().filter(|(k, _)| !matches!(k.as_str(), "runs" | "spectrum")) {
                leaves(v, key_unit(key).or(unit), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| leaves(v, unit, out)),
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                let (family, scale) = unit.map_or((None, 1.0), |(f, s)| (Some(f), s));
                out.push(Backing { family, value: x * scale, half_step: 0.0, relative: 0.0, measured: true });
            }
        }
        _ => {}
    }
}

/// The unit a results.json key names: `ms`, `rtt_ms`, `wall_us_per_call`, `mean_ms_per_1000`,
/// `total_s`, `throughput_per_s`, `growth_pct`, `bytes_per_call`.
fn key_unit(key: &str) -> Option<(Family, f64)> {
    let words: Vec<&str> = key.split('_').collect();
    if key.ends_with("per_s") {
        return Some((Family::Rate, 1.0));
    }
    for (word, family, scale) in [
        ("ns", Family::Time, 1e-9),
        ("us", Family::Time, 1e-6),
        ("ms", Family::Time, 1e-3),
        ("s", Family::Time, 1.0),
        ("pct", Family::Percent, 1.0),
        ("bytes", Family::Bytes, 1.0),
    ] {
        if words.contains(&word) {
            return Some((family, scale));
        }
    }
    None
}

/// A stated figure's source file exists and holds its numbers (as written, or a percentage as a
/// fraction), so the list points at what sets it.
fn source_holds(repo_root: &Path, s: &Stated, source: &str) -> Option<String> {
    let Ok(text) = std::fs::read_to_string(repo_root.join(source)) else {
        return Some(format!("{STATED}: {} in {}: its source {source} is not a file", s.figure, s.file));
    };
    let missing: Vec<String> = numbers_of(&s.figure)
        .into_iter()
        .filter(|n| {
            let fraction = n.parse::<f64>().map(|v| format!("{}", v / 100.0)).unwrap_or_default();
            let as_fraction = s.figure.ends_with('%') && holds_number(&text, &fraction);
            !as_fraction && !holds_number(&text, n)
        })
        .collect();
    (!missing.is_empty())
        .then(|| format!("{STATED}: {} in {}: its source {source} holds no {}", s.figure, s.file, missing.join(", ")))
}

/// The numbers written in a figure's text, thousands separators dropped.
fn numbers_of(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !current.is_empty()) {
            current.push(c);
        } else if c == ',' && !current.is_empty() {
            // A thousands separator: the number goes on.
        } else if !current.is_empty() {
            out.push(current.trim_end_matches('.').to_string());
            current.clear();
        }
    }
    out
}

/// Whether `text` holds `number` standing alone (not inside a longer number; trailing zeros
/// allowed: `20.0` holds 20, `0.90` holds 0.9).
fn holds_number(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_digit() || c == '.') {
            return false;
        }
        let mut rest = &text[i + number.len()..];
        if rest.starts_with('.') && !number.contains('.') && rest[1..].starts_with('0') {
            rest = &rest[1..];
        }
        if number.contains('.') || text[i + number.len()..].starts_with(".0") {
            rest = rest.trim_start_matches('0');
        }
        !rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests;
