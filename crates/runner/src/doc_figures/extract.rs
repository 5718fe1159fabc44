//! Figures in Markdown prose: a number (or a list or range of numbers) with a unit of measure.
//!
//! A number is digits with optional thousands separators (`74,184`: a comma before exactly three
//! digits) and an optional decimal part (`0.0819`), standing alone (not part of a word or a name:
//! `seed002`, `v1.2`, `/cells/0` hold none), with an optional `k` for thousands (`16k`). Numbers
//! joined by `–`, `-`, `/`, `,`, `and`, `or`, `to` before one unit share it: `1.29–2.47 ms`,
//! `0, 10, 40 and 100 ms`, `100/20 Mbit/s` are two or four figures. A unit is one of [`UNITS`]
//! right after the number or one space on (`×` only when no number follows it, else it is a
//! product: `9 × 1.2 s` is the figure 1.2 s). `1 min 22 s` and `1 h 05 min` are one duration.
//! A figure's precision is the one it is written with: `2 ms` is anything from 1.5 to 2.5 ms.

/// What a unit measures, with its scale to the family's base (seconds, bytes, bits per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Family {
    Time,
    Percent,
    Times,
    Rate,
    Bytes,
    Bandwidth,
}

/// The units a figure may carry, longest first where one is the start of another.
pub const UNITS: &[(&str, Family, f64)] = &[
    ("CPU-µs/call", Family::Time, 1e-6),
    ("calls/s", Family::Rate, 1.0),
    ("req/s", Family::Rate, 1.0),
    ("rps", Family::Rate, 1.0),
    ("Mbit/s", Family::Bandwidth, 1e6),
    ("Gbit/s", Family::Bandwidth, 1e9),
    ("kbit/s", Family::Bandwidth, 1e3),
    ("seconds", Family::Time, 1.0),
    ("second", Family::Time, 1.0),
    ("minutes", Family::Time, 60.0),
    ("minute", Family::Time, 60.0),
    ("hours", Family::Time, 3600.0),
    ("hour", Family::Time, 3600.0),
    ("min", Family::Time, 60.0),
    ("ms", Family::Time, 1e-3),
    ("µs", Family::Time, 1e-6),
    ("us", Family::Time, 1e-6),
    ("ns", Family::Time, 1e-9),
    ("s", Family::Time, 1.0),
    ("h", Family::Time, 3600.0),
    ("%", Family::Percent, 1.0),
    ("×", Family::Times, 1.0),
    ("bytes", Family::Bytes, 1.0),
    ("KiB", Family::Bytes, 1024.0),
    ("MiB", Family::Bytes, 1048576.0),
    ("GiB", Family::Bytes, 1073741824.0),
    ("kB", Family::Bytes, 1e3),
    ("KB", Family::Bytes, 1e3),
    ("MB", Family::Bytes, 1e6),
    ("GB", Family::Bytes, 1e9),
    ("B", Family::Bytes, 1.0),
];

/// One figure: its value in the family's base unit and how far its rounding reaches either side.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The text it was read from, the whole list or range (`1.29–2.47 ms`).
    pub text: String,
    pub family: Family,
    pub value: f64,
    pub half_step: f64,
    /// Its significant digits as written (`2` and `100` one, `2.0` and `1.7` two).
    pub significant: u32,
    /// The written unit's size in the family's base unit (`ms`: 0.001).
    pub scale: f64,
}

struct Number {
    value: f64,
    thousands: bool,
    half_step: f64,
    significant: u32,
    end: usize,
}

/// Every figure of one line of prose (code spans already taken out).
pub fn figures(line: &str) -> Vec<Figure> {
    let c: Vec<char> = line.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        if !c[i].is_ascii_digit() || (i > 0 && part_of_a_name(c[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        let mut numbers: Vec<Number> = vec![];
        let mut at = i;
        let found = loop {
            let Some(n) = number(&c, at) else { break None };
            numbers.push(n);
            at = numbers.last().map_or(at, |n| n.end);
            if let Some((u, end)) = unit(&c, at) {
                break Some((u, end));
            }
            match joiner(&c, at) {
                Some(next) if next < c.len() && c[next].is_ascii_digit() => at = next,
                _ => break None,
            }
        };
        let Some(((_, family, scale), mut end)) = found else {
            i = at.max(i + 1);
            continue;
        };
        // `20–24k rps`: the thousands of the last number are the whole range's.
        if numbers.last().is_some_and(|n| n.thousands) {
            for n in numbers.iter_mut().filter(|n| !n.thousands) {
                n.value *= 1e3;
                n.half_step *= 1e3;
            }
        }
        let mut values: Vec<(f64, f64, u32)> =
            numbers.iter().map(|n| (n.value * scale, n.half_step * scale, n.significant)).collect();
        // `1 min 22 s`, `1 h 05 min`: one duration.
        let mut compound = false;
        if numbers.len() == 1 && (scale == 60.0 || scale == 3600.0) {
            let smaller = if scale == 60.0 { &["s"][..] } else { &["min"][..] };
            if let Some(n) = (end < c.len() && c[end] == ' ').then(|| number(&c, end + 1)).flatten() {
                if let Some(((_, _, s), e)) = unit(&c, n.end).filter(|((name, _, _), _)| smaller.contains(name)) {
                    values = vec![(values[0].0 + n.value * s, n.half_step * s, values[0].2 + 2)];
                    compound = true;
                    end = e;
                }
            }
        }
        let text: String = c[start..end].iter().collect();
        out.extend(values.into_iter().map(|(value, half_step, significant)| Figure {
            text: text.clone(),
            family,
            value,
            half_step,
            significant,
            scale: if compound { 1.0 } else { scale },
        }));
        i = end;
    }
    out
}

/// A character that makes a following digit part of a word, a name or a path.
fn part_of_a_name(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '/' | '-' | ':' | '#' | '=' | '@' | '\\')
}

fn number(c: &[char], mut i: usize) -> Option<Number> {
    let start = i;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < c.len() && c[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if digits(&mut i) == 0 {
        return None;
    }
    let mut text: String = c[start..i].iter().collect();
    // Thousands: a comma before exactly three digits, after at most three.
    if i - start <= 3 {
        while i + 3 < c.len() && c[i] == ',' && c[i + 1..i + 4].iter().all(char::is_ascii_digit) {
            if i + 4 < c.len() && c[i + 4].is_ascii_digit() {
                break;
            }
            text.extend(&c[i + 1..i + 4]);
            i += 4;
        }
    }
    let mut decimals = 0;
    if i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
        let s = i + 1;
        i += 1;
        decimals = digits(&mut i) as i32;
        text.push('.');
        text.extend(&c[s..i]);
    }
    // A version or an address (`1.2.3`, `127.0.0.1`) is not a figure.
    if i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
        return None;
    }
    let mut value: f64 = text.parse().ok()?;
    let mut half_step = 0.5 * 10f64.powi(-decimals);
    let thousands = i < c.len() && c[i] == 'k' && !(i + 1 < c.len() && c[i + 1].is_alphanumeric());
    if thousands {
        value *= 1e3;
        half_step *= 1e3;
        i += 1;
    }
    if i < c.len() && (c[i].is_alphanumeric() && !starts_unit(c, i)) {
        return None;
    }
    let digits = if text.contains('.') { text.replace('.', "") } else { text.trim_end_matches('0').to_string() };
    let significant = digits.trim_start_matches('0').len().max(1) as u32;
    Some(Number { value, thousands, half_step, significant, end: i })
}

fn starts_unit(c: &[char], i: usize) -> bool {
    unit(c, i).is_some()
}

/// The unit at `i` or one space on, and where it ends.
fn unit(c: &[char], i: usize) -> Option<((&'static str, Family, f64), usize)> {
    let from = if i < c.len() && (c[i] == ' ' || c[i] == '\u{a0}') { i + 1 } else { i };
    for &(name, family, scale) in UNITS {
        let n: Vec<char> = name.chars().collect();
        let end = from + n.len();
        if end > c.len() || c[from..end] != n[..] {
            continue;
        }
        // A unit ends a word (`5 s` but not `5 seeds`; `%` and `×` end themselves).
        let word = n.last().is_some_and(|l| l.is_alphanumeric());
        if word && end < c.len() && (c[end].is_alphanumeric() || c[end] == '-') {
            continue;
        }
        if name == "×" && c[end..].iter().find(|ch| **ch != ' ').is_some_and(char::is_ascii_digit) {
            return None;
        }
        return Some(((name, family, scale), end));
    }
    None
}

/// Where the next number of a list or range starts, if `i` holds a joiner.
fn joiner(c: &[char], i: usize) -> Option<usize> {
    const JOINERS: &[&str] = &["–", " – ", "-", "/", ", and ", ", ", " and ", " or ", " to "];
    JOINERS.iter().find_map(|j| {
        let j: Vec<char> = j.chars().collect();
        (i + j.len() <= c.len() && c[i..i + j.len()] == j[..]).then_some(i + j.len())
    })
}

/// The markers of the blocks a generator writes and its own test checks; their figures are the
/// generator's, so the prose check passes over them. Any other marked block is an error.
pub const GENERATED: &[(&str, &str, &str)] = &[
    ("<!-- seed table -->", "<!-- /seed table -->", "the seed_table test (reproductions/seeds.toml)"),
    ("<!-- figures: ", "<!-- /figures -->", "reproductions/seed000-clients/run.py --check"),
];

/// A paragraph of prose: its lines (number from 1, text without code spans) and its raw text,
/// which names the committed results it quotes (`reproductions/NAME`, `bench/results/FILE.md`).
pub struct Paragraph {
    pub lines: Vec<(usize, String)>,
    pub raw: String,
}

/// The paragraphs of a Markdown text: runs of prose lines between blank lines, fenced code and
/// generated blocks (which end a paragraph).
pub(crate) fn paragraphs(text: &str) -> Result<Vec<Paragraph>, String> {
    let raw: Vec<&str> = text.lines().collect();
    let mut out: Vec<Paragraph> = vec![];
    let mut last = 0;
    for (n, line) in prose_lines(text)? {
        let blank = line.trim().is_empty();
        let continues = n == last + 1 && out.last().is_some_and(|p| !p.lines.is_empty());
        if blank {
            out.push(Paragraph { lines: vec![], raw: String::new() });
        } else if continues {
            let p = out.last_mut().expect("a paragraph");
            p.lines.push((n, line));
            p.raw.push_str(raw[n - 1]);
            p.raw.push('\n');
        } else {
            out.push(Paragraph { lines: vec![(n, line)], raw: format!("{}\n", raw[n - 1]) });
        }
        last = n;
    }
    out.retain(|p| !p.lines.is_empty());
    Ok(out)
}

/// The committed results a paragraph names: `reproductions/NAME` and `bench/results/FILE.md`.
pub fn named_sources(raw: &str) -> Vec<String> {
    let mut out = vec![];
    for prefix in ["reproductions/", "bench/results/"] {
        for (i, _) in raw.match_indices(prefix) {
            let rest = &raw[i + prefix.len()..];
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
            let name = name.trim_end_matches('.');
            if !name.is_empty() {
                out.push(format!("{prefix}{name}"));
            }
        }
    }
    out
}

/// The prose lines of a Markdown text, numbered from 1: fenced code blocks, generated blocks and
/// inline code spans blanked (a code span becomes a space). A marked block no generator owns is an
/// error, so a figure cannot be hidden from the check by wrapping it in a comment.
pub(crate) fn prose_lines(text: &str) -> Result<Vec<(usize, String)>, String> {
    let mut out = vec![];
    let mut fenced = false;
    let mut generated: Option<&str> = None;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let trimmed = line.trim_start();
        if let Some(end) = generated {
            if trimmed.starts_with(end) {
                generated = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if trimmed.starts_with("<!--") {
            match GENERATED.iter().find(|(start, _, _)| trimmed.starts_with(start)) {
                Some((_, end, _)) => generated = Some(end),
                None => return Err(format!("line {n}: a marked block no generator owns: {trimmed}")),
            }
            continue;
        }
        out.push((n, without_code_spans(line)));
    }
    match generated {
        Some(end) => Err(format!("a generated block is not closed by {end}")),
        None => Ok(out),
    }
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        out.push_str(if i % 2 == 0 { part } else { " " });
    }
    out
}
