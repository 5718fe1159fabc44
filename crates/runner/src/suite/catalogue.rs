//! The suites' catalogue: every suite file's name, what it runs (its `description`), its cells,
//! repetitions and its time, as a Markdown table. The time is the wall time of the suite's
//! committed run (`reproductions/<suite name>/results.json`) when there is one, labelled `run:`,
//! else what its plan measures, labelled `plan:`. The book quotes it, and a test keeps the quote
//! what the files say, so no count or time in the docs is typed by hand.

use super::Suite;
use crate::plan::{self, CellKind, CellPlan};
use crate::progress::clock;
use crate::reproductions;
use crate::RunError;
use std::path::Path;

/// The table of every `*.toml` in `dir` (sorted by name, `default` first); the committed runs
/// are read from `reproductions/` beside `dir`.
pub fn table(dir: &Path) -> Result<String, RunError> {
    let repo_root = dir.parent().unwrap_or(Path::new("."));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| RunError::Files(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort_by_key(|p| (p.file_stem().is_none_or(|s| s != "default"), p.clone()));
    let mut out =
        String::from("| suite | what it runs | cells | repetitions | time | root |\n|---|---|---:|---:|---|---|\n");
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|e| RunError::Files(format!("{}: {e}", path.display())))?;
        let suite = Suite::parse(&text).map_err(|e| RunError::Settings(format!("{}: {e}", path.display())))?;
        let file = format!("suites/{}", path.file_name().unwrap_or_default().to_string_lossy());
        out.push_str(&row(&file, &suite, &measured(repo_root, &suite.name))?);
    }
    Ok(out)
}

/// The wall time of the suite's committed run, `None` when it has none; the reason when its
/// results.json does not say (a run made before the times were recorded).
fn measured(repo_root: &Path, name: &str) -> Option<Result<f64, RunError>> {
    let path = reproductions::results_file(repo_root, name)?;
    Some(reproductions::read(&path).and_then(|json| reproductions::wall_seconds(&json)))
}

/// The time column: the committed run's wall time, or the plan's measuring time when there is no
/// committed run (or it records no times, said beside it).
fn time(plan: &Plan, name: &str, measured: &Option<Result<f64, RunError>>) -> String {
    match measured {
        Some(Ok(seconds)) => format!("run: {} (reproductions/{name})", clock(*seconds)),
        Some(Err(_)) => format!("plan: {} (reproductions/{name} records no run time)", plan.text()),
        None => format!("plan: {}", plan.text()),
    }
}

fn row(file: &str, suite: &Suite, measured: &Option<Result<f64, RunError>>) -> Result<String, RunError> {
    let mut plan = Plan::default();
    let mut repetitions: Vec<usize> = vec![];
    for e in &suite.experiments {
        let cells = plan::cells(suite, e)?;
        for p in &cells {
            plan.add(p);
            if !repetitions.contains(&p.repetitions) {
                repetitions.push(p.repetitions);
            }
        }
        if let Some(w) = e.server_warmup.as_deref().and_then(|w| callbench_load::parse::duration(w).ok()) {
            let servers: std::collections::BTreeSet<String> = cells.iter().map(|p| p.server.label()).collect();
            plan.seconds += w.as_secs_f64() * servers.len() as f64;
        }
        plan.cells += cells.len();
    }
    repetitions.sort_unstable();
    let reps: Vec<String> = repetitions.iter().map(usize::to_string).collect();
    let networks: Vec<bool> = suite
        .experiments
        .iter()
        .filter(|e| e.load.over(&suite.defaults).network.is_some())
        .map(|e| e.optional)
        .collect();
    let root = match (networks.is_empty(), networks.iter().all(|optional| *optional)) {
        (true, _) => "",
        (false, true) => "for its network experiment (left out without)",
        (false, false) => "yes (an emulated link)",
    };
    let what = suite.description.replace('|', "\\|").replace('\n', " ");
    Ok(format!(
        "| `{file}` | {what} | {} | {} | {} | {root} |\n",
        plan.cells,
        reps.join(", "),
        time(&plan, &suite.name, measured)
    ))
}

/// What a suite's plan fixes: the time of its timed repetitions (and warm-ups), and the calls and
/// processes of those counted instead, whose time depends on the server and the machine.
#[derive(Default)]
struct Plan {
    cells: usize,
    seconds: f64,
    calls: u64,
    processes: u64,
}

impl Plan {
    fn add(&mut self, p: &CellPlan) {
        if p.kind == CellKind::Processing {
            self.processes += p.repetitions as u64;
            return;
        }
        self.add_runs(p, p.repetitions as u64);
        // Load cells against a server also run once, unrecorded, in the warm-up round.
        if p.in_warm_up_round() {
            self.add_runs(&p.warm_up_round(), 1);
        }
    }

    fn add_runs(&mut self, p: &CellPlan, runs: u64) {
        let seconds = |d: &Option<String>| {
            d.as_deref().and_then(|t| callbench_load::parse::duration(t).ok()).map_or(0.0, |d| d.as_secs_f64())
        };
        self.seconds += runs as f64 * seconds(&p.fields.warmup);
        // A count of calls wins over a duration (one the defaults give, say).
        match p.fields.calls.or(p.fields.iterations) {
            Some(calls) => self.calls += calls * runs,
            None => self.seconds += runs as f64 * seconds(&p.fields.duration),
        }
    }

    fn text(&self) -> String {
        let mut parts = vec![];
        if self.seconds > 0.0 {
            parts.push(clock(self.seconds));
        }
        if self.calls > 0 {
            parts.push(format!("{} calls", thousands(self.calls)));
        }
        if self.processes > 0 {
            parts.push(format!("{} processes", thousands(self.processes)));
        }
        parts.join(" + ")
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTED_IN: &str = "docs/src/suites.md";

    fn root() -> std::path::PathBuf {
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
            .join("../..")
    }

    /// The book quotes the catalogue between `<!-- suites -->` and `<!-- /suites -->` as the
    /// suite files make it now: a suite added or changed and not quoted fails here.
    #[test]
    fn the_book_quotes_the_catalogue_of_the_suite_files() {
        let readme = std::fs::read_to_string(root().join(QUOTED_IN)).unwrap();
        let (start, end) = ("<!-- suites -->\n", "<!-- /suites -->");
        let from = readme.find(start).expect("the chapter has a suites block") + start.len();
        let to = readme[from..].find(end).expect("the block ends") + from;
        let table = table(&root().join("suites")).unwrap();
        assert_eq!(
            readme[from..to].trim(),
            table.trim(),
            "{QUOTED_IN}'s suites table is not what suites/*.toml make; paste this:\n{table}"
        );
    }

    #[test]
    fn a_row_counts_the_cells_and_plans_their_repetitions() {
        let suite = Suite::parse(
            "name='t'\ndescription='two | cells'\nrepetitions=3\n[defaults]\nduration='1s'\n\
             [[experiment]]\nid='a'\ntitle='a'\nservers=['rust-actix', 'inproc']\nworkloads=['auth']\n\
             network={rtt='10ms'}\noptional=true",
        )
        .unwrap();
        // rust-actix: 3 repetitions and a warm-up round; inproc: 3; a second each.
        assert_eq!(
            row("suites/t.toml", &suite, &None).unwrap(),
            "| `suites/t.toml` | two \\| cells | 2 | 3 | plan: 7 s | for its network experiment (left out without) |\n"
        );
        let counted = Suite::parse(
            "name='t'\nrepetitions=2\n[[experiment]]\nid='a'\ntitle='a'\nservers=['rust-actix']\nworkloads=['auth']\n\
             calls=1500\nwarmup='1s'\nserver_warmup='10s'",
        )
        .unwrap();
        // 3 runs of 1500 calls, each after a second's warm-up, and the server's 10 s.
        assert!(row("suites/c.toml", &counted, &None).unwrap().contains("| 1 | 2 | plan: 13 s + 4,500 calls |"));
        // The warm-up round runs a timed cell for its warm-up's length: 3 × 1.2 s and 0.2 + 0.2 s.
        let warmed = Suite::parse(
            "name='t'\nrepetitions=3\n[[experiment]]\nid='a'\ntitle='a'\nservers=['rust-actix']\nworkloads=['auth']\n\
             duration='1s'\nwarmup='200ms'",
        )
        .unwrap();
        assert!(row("suites/w.toml", &warmed, &None).unwrap().contains("| 1 | 3 | plan: 4 s |"));
        // A committed run's wall time replaces the plan, labelled as the run's; one without its
        // times keeps the plan and says why.
        let run = row("suites/c.toml", &counted, &Some(Ok(2433.0))).unwrap();
        assert!(run.contains("| run: 40 min 33 s (reproductions/t) |"), "{run}");
        let untimed = row("suites/c.toml", &counted, &Some(Err(RunError::Files("no times".into())))).unwrap();
        assert!(untimed.contains("| plan: 13 s + 4,500 calls (reproductions/t records no run time) |"), "{untimed}");
    }
}
