//! End-to-end: the default suite, as `callbench run` with no argument runs it, twice in a row.
//! No cell's headline may change significantly (`callbench compare --check`: no rank interval
//! wholly beyond ±15%). About 8 minutes on a quiet machine (7 min 35 s, 2026-11-26): the real
//! thing, not a shortened copy. How long a run takes is the README's measured figure, not an
//! assertion here (a slower machine is no failure).

mod common;

use common::{Running, TempDir};
use std::process::Command;
use std::time::Duration;

#[test]
fn two_consecutive_default_runs_show_no_significant_change() {
    let dir = TempDir::new("default");
    for name in ["a", "b"] {
        let out = dir.str(name);
        // A guard against a hang, not a speed limit: on a busy machine every disturbed repetition is
        // measured again (up to three times), and a default run took over 5 minutes beside a busy loop.
        let run = Running::command("run", &["--no-build", "-q", "--out", &out]).finish(Duration::from_secs(1800));
        assert_eq!(run.code, Some(0), "{}", run.all());
        for file in ["results.json", "report.md", "report.html"] {
            assert!(dir.path(name).join(file).exists(), "{file}");
        }
        assert!(run.stdout.contains("Throughput with 50 calls in flight"), "{}", run.all());
    }
    let compare =
        common::run_cmd(Command::new(common::callbench()).args(["compare", "--check", &dir.str("a"), &dir.str("b")]));
    assert_eq!(compare.code, Some(0), "{}", compare.all());
}
