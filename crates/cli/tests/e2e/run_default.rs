//! End-to-end: the default suite, as `callbench run` with no argument runs it (every experiment,
//! server and cell of suites/default.toml), twice in a row at test size (4 repetitions of 50 ms
//! after 10 ms of warm-up: `--repetitions`, `--duration`, `--warmup`), then `callbench compare` on
//! the two. The full-length run is the README's main command and its measured figures; here the
//! plumbing: both runs finish, write their files, and compare cell by cell.
//!
//! Whether the two runs agree is this machine's to decide, not the code's (at 50 ms a cell is mostly
//! noise), so that is printed, not asserted; asserted are what the code decides: each run compared
//! with itself agrees in every cell and passes `--check`, and the two compared give every matched
//! cell one verdict.

use crate::common;

use common::{Running, TempDir};
use std::process::Command;
use std::time::Duration;

#[test]
fn two_consecutive_default_runs_compare_cell_by_cell() {
    let dir = TempDir::new("default");
    for name in ["a", "b"] {
        let out = dir.str(name);
        // A guard against a hang, not a speed limit: on a busy machine disturbed repetitions are
        // measured again (within a quarter of each experiment's planned rounds).
        let args = ["--no-build", "-q", "--repetitions", "4", "--duration", "50ms", "--warmup", "10ms", "--out", &out];
        let run = Running::command("run", &args).finish(Duration::from_secs(900));
        assert_eq!(run.code, Some(0), "{}", run.all());
        for file in ["results.json", "report.md", "report.html"] {
            assert!(dir.path(name).join(file).exists(), "{file}");
        }
        assert!(run.stdout.contains("Throughput with 50 calls in flight"), "{}", run.all());
        // The answer opens the summary, the seed table follows it, before the sentences.
        let answer = run.stdout.find("\nThe answer\nOn this machine").unwrap_or_else(|| panic!("{}", run.all()));
        let seeds = run.stdout.find("\nThe seed articles, reproduced").unwrap_or_else(|| panic!("{}", run.all()));
        let found = run.stdout.find("\nWhat this run found").unwrap_or_else(|| panic!("{}", run.all()));
        assert!(answer < seeds && seeds < found, "{}", run.stdout);
        assert!(run.stdout.contains("- One call at a time (auth, ") && run.stdout.contains("- 50 calls in flight"));
    }
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("a").join("results.json")).unwrap()).unwrap();
    let cells = results["cells"].as_array().unwrap().len();
    // Every cell of the default suite ran, at the times asked for, four repetitions each (the fewest whose
    // interval can reach 95%, which `compare` needs to call two cells in agreement).
    let ids: Vec<&str> = results["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    // The network experiment needs root; without it the run records why it was not run.
    let root = unsafe { libc::geteuid() } == 0;
    let network = results["experiments"].as_array().unwrap().iter().find(|e| e["id"] == "network").unwrap();
    assert_eq!(network["skipped"].is_null(), root, "{network}");
    let mut experiments = vec!["sequential", "closed-50", "fixed-rate", "connections"];
    experiments.extend(root.then_some("network"));
    for experiment in experiments {
        assert!(ids.iter().any(|id| id.starts_with(&format!("{experiment}/"))), "{experiment}: {ids:?}");
    }
    for cell in results["cells"].as_array().unwrap() {
        // A cell counted in calls keeps its count; every other one is measured for the time asked.
        if cell["params"]["calls"].is_null() {
            assert_eq!(cell["params"]["duration"], "50ms", "{}", cell["id"]);
        }
        assert_eq!(cell["runs"].as_array().map(Vec::len), Some(4), "{}", cell["id"]);
    }
    let compare = |a: &str, b: &str, check: bool| {
        let mut cmd = Command::new(common::callbench());
        cmd.arg("compare").args(check.then_some("--check")).args([dir.str(a), dir.str(b)]);
        common::run_cmd(&mut cmd)
    };

    for name in ["a", "b"] {
        let same = compare(name, name, true);
        assert_eq!(same.code, Some(0), "{}", same.all());
        let counts = verdict_counts(&same.stdout, cells);
        assert_eq!(counts.first(), Some(&(cells, "agree".to_string())), "{}", same.stdout);
    }

    let both = compare("a", "b", false);
    assert_eq!(both.code, Some(0), "{}", both.all());
    let counts = verdict_counts(&both.stdout, cells);
    assert_eq!(counts.iter().map(|(n, _)| n).sum::<usize>(), cells, "{}", both.stdout);
    eprintln!("two default runs, headlines: {counts:?}");
}

/// The verdicts of the summary line "Headline metric of N matched cells: 20 agree, 3 noisy, …;
/// 0 cells only in A, 0 only in B." as (count, verdict); checks N and that no cell is unmatched.
fn verdict_counts(markdown: &str, cells: usize) -> Vec<(usize, String)> {
    let line = markdown.lines().find(|l| l.contains("Headline metric of")).expect("a summary line");
    let head = format!("Headline metric of {cells} matched cells: ");
    let rest = line.split_once(&head).unwrap_or_else(|| panic!("{line}")).1;
    let (verdicts, unmatched) = rest.split_once(';').unwrap_or_else(|| panic!("{line}"));
    assert!(unmatched.contains("0 cells only in A, 0 only in B"), "{line}");
    verdicts
        .split(", ")
        .map(|part| {
            let (n, verdict) = part.split_once(' ').unwrap_or_else(|| panic!("{line}"));
            (n.parse().unwrap_or_else(|_| panic!("{line}")), verdict.to_string())
        })
        .collect()
}
