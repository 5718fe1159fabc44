//! What a run's calls send: `-d` (one body, or one gRPC message as JSON), or `--data-lines FILE`
//! (an NDJSON file, a line per call, used in turn); with `--template`, each is a template filled in
//! per call ([`crate::template`]), its random values drawn from `--seed`: REST and gRPC endpoints
//! of one run get the same values, call by call.

use crate::spec::LoadSpec;
use crate::template::Template;
use callbench_engine::call_data::{CallData, Turn};
use serde::Serialize;
use std::sync::Arc;

/// What the calls of a run sent, for its report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataUsed {
    /// `one` (every call the same), `in-turn` (call i sends request i mod n) or `per-call` (a template).
    pub kind: &'static str,
    /// The requests given: 1 for `-d`, the file's lines for `--data-lines`.
    pub requests: usize,
    /// Whether they were templates, filled in per call (by the client, during the run).
    pub template: bool,
    /// The `--data-lines` file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl DataUsed {
    pub fn one() -> DataUsed {
        DataUsed { kind: "one", requests: 1, template: false, file: None }
    }

    /// `n` requests in turn (a life-run's boards).
    pub fn in_turn(n: usize) -> DataUsed {
        DataUsed { kind: "in-turn", requests: n, template: false, file: None }
    }

    /// What a built-in workload's calls send.
    pub fn of_preset(p: &crate::preset::Preset) -> DataUsed {
        p.in_turn().map_or_else(DataUsed::one, DataUsed::in_turn)
    }

    /// A line for a person: `3 requests in turn from calls.ndjson, templates filled in per call`.
    pub fn describe(&self) -> String {
        let from = self.file.as_ref().map(|f| format!(" from {f}")).unwrap_or_default();
        let requests = if self.requests == 1 { "1 request".to_string() } else { format!("{} requests", self.requests) };
        match (self.kind, self.template) {
            ("one", _) => "the same request every call".into(),
            (_, true) if self.requests == 1 => format!("a template{from}, filled in per call"),
            (_, true) => format!("{requests} in turn{from}, templates filled in per call"),
            _ => format!("{requests} in turn{from}"),
        }
    }
}

/// The most calls a template is checked for: `-n`, or 2^30 for a run bounded by time (a `{{call}}`
/// then fits a 32-bit field).
pub fn longest_run(spec: &LoadSpec) -> u64 {
    spec.calls.unwrap_or(1 << 30)
}

/// The most callers a run of `spec` has (`{{caller}}`'s highest value, plus one).
pub fn most_callers(spec: &LoadSpec) -> usize {
    let multiplexed = spec.connections.unwrap_or(1) * spec.streams.unwrap_or(1);
    spec.concurrency.unwrap_or(crate::spec::DEFAULT_CONCURRENCY.max(multiplexed))
}

/// The texts the calls send, before they become requests.
struct Texts {
    texts: Vec<Vec<u8>>,
    /// What to call text `i` in an error: `-d`, `line 3 of calls.ndjson`.
    names: Vec<String>,
    file: Option<String>,
}

fn texts(spec: &LoadSpec) -> Result<Texts, String> {
    let Some(path) = &spec.data_lines else {
        return Ok(Texts { texts: vec![spec.body()?.unwrap_or_default()], names: vec!["-d".into()], file: None });
    };
    if spec.data.is_some() {
        return Err("give -d or --data-lines, not both".into());
    }
    let shown = path.display().to_string();
    let all = std::fs::read(path).map_err(|e| format!("cannot read --data-lines file {shown}: {e}"))?;
    let mut texts = Vec::new();
    let mut names = Vec::new();
    for (i, line) in all.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            texts.push(line.to_vec());
            names.push(format!("line {} of {shown}", i + 1));
        }
    }
    if texts.is_empty() {
        return Err(format!("--data-lines {shown} has no request: one per line (NDJSON)"));
    }
    Ok(Texts { texts, names, file: Some(shown) })
}

/// The requests of a run's calls, each made from its text by `make` (its error names the text).
/// A template is checked before the run at its values' extremes, for a run of at most `calls`
/// calls by `callers` callers: a request it cannot make then is the error, not a failed call.
pub(crate) fn call_data<R: 'static>(
    spec: &LoadSpec,
    calls: u64,
    callers: usize,
    make: impl Fn(&[u8]) -> Result<R, String> + Send + Sync + 'static,
) -> Result<(CallData<R>, DataUsed), String> {
    let Texts { texts, names, file } = texts(spec)?;
    let made = |i: usize, text: &[u8]| make(text).map_err(|e| format!("{}: {e}", names[i]));
    let requests = texts.len();
    if !spec.template {
        let mut all = texts.iter().enumerate().map(|(i, t)| made(i, t)).collect::<Result<Vec<R>, _>>()?;
        if all.len() == 1 {
            let used = DataUsed { file, ..DataUsed::one() };
            return Ok((CallData::One(all.remove(0)), used));
        }
        return Ok((CallData::InTurn(all), DataUsed { kind: "in-turn", requests, template: false, file }));
    }
    let mut templates = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let text = std::str::from_utf8(text).map_err(|_| format!("{}: a template is text (UTF-8)", names[i]))?;
        let template = Template::parse(text).map_err(|e| format!("{}: {e}", names[i]))?;
        for extreme in template.extremes(calls, callers) {
            made(i, extreme.as_bytes())?;
        }
        templates.push(template);
    }
    let used = DataUsed { kind: "per-call", requests, template: true, file };
    let seed = spec.seed;
    let make = Arc::new(move |turn: Turn| {
        let template = &templates[(turn.call % templates.len() as u64) as usize];
        make(template.render(turn, seed).as_bytes())
    });
    Ok((CallData::PerCall(make), used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file of the test's, removed when dropped.
    struct Scratch(Option<std::path::PathBuf>);

    impl Drop for Scratch {
        fn drop(&mut self) {
            if let Some(path) = &self.0 {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn spec(data: Option<&str>, lines: Option<&str>, template: bool) -> (LoadSpec, Scratch) {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let data_lines = lines.map(|text| {
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("callbench-data-{}-{n}.ndjson", std::process::id()));
            std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
            path
        });
        let spec = LoadSpec {
            data: data.map(str::to_string),
            data_lines: data_lines.clone(),
            template,
            ..LoadSpec::default()
        };
        (spec, Scratch(data_lines))
    }

    fn as_text(b: &[u8]) -> Result<String, String> {
        let t = String::from_utf8(b.to_vec()).unwrap();
        if t.contains("bad") {
            return Err("not a request".into());
        }
        Ok(t)
    }

    #[test]
    fn one_body_is_one_request() {
        let (s, _d) = spec(Some("{}"), None, false);
        let (data, used) = call_data(&s, 10, 1, as_text).unwrap();
        assert!(matches!(data, CallData::One(ref t) if t == "{}"));
        assert_eq!(used, DataUsed::one());
        assert_eq!(used.describe(), "the same request every call");
    }

    #[test]
    fn lines_are_requests_in_turn_and_blank_lines_are_skipped() {
        let (s, _d) = spec(None, Some("{\"a\":1}\r\n\n  \n{\"a\":2}\n"), false);
        let (data, used) = call_data(&s, 10, 1, as_text).unwrap();
        let CallData::InTurn(all) = data else { panic!("in turn") };
        assert_eq!(all, ["{\"a\":1}", "{\"a\":2}"]);
        assert_eq!((used.kind, used.requests, used.template), ("in-turn", 2, false));
        assert!(used.describe().starts_with("2 requests in turn from "), "{}", used.describe());
    }

    #[test]
    fn a_bad_line_is_named() {
        let (s, _d) = spec(None, Some("ok\n\nbad\n"), false);
        let e = call_data(&s, 10, 1, as_text).err().unwrap();
        assert!(e.starts_with("line 3 of ") && e.ends_with(": not a request"), "{e}");
        let (s, _d) = spec(None, Some("\n \n"), false);
        assert!(call_data(&s, 10, 1, as_text).err().unwrap().contains("has no request"));
        let (s, _d) = spec(Some("x"), Some("y"), false);
        assert_eq!(call_data(&s, 10, 1, as_text).err().unwrap(), "give -d or --data-lines, not both");
    }

    #[tokio::test]
    async fn a_template_is_made_per_call() {
        let (s, _d) = spec(Some("n={{call}} by={{caller}}"), None, true);
        let (data, used) = call_data(&s, 10, 2, as_text).unwrap();
        let CallData::PerCall(make) = data else { panic!("per call") };
        assert_eq!(make(Turn { call: 7, caller: 1 }).unwrap(), "n=7 by=1");
        assert_eq!(used.describe(), "a template, filled in per call");
    }

    #[test]
    fn a_template_that_cannot_make_a_request_at_an_extreme_is_refused_before_the_run() {
        let (s, _d) = spec(None, Some("fine {{int 1 2}}\nbad {{call}}\n"), true);
        let e = call_data(&s, 10, 2, as_text).err().unwrap();
        assert!(e.starts_with("line 2 of "), "{e}");
        let (s, _d) = spec(Some("{{nope}}"), None, true);
        assert!(call_data(&s, 10, 2, as_text).err().unwrap().starts_with("-d: template: unknown placeholder"));
    }
}
