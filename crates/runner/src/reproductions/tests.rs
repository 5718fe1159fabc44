use super::*;
use serde_json::json;

fn root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn utc_stamps_read_as_seconds_since_1970() {
    assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(unix_seconds("2000-03-01T00:00:01Z"), Some(951_868_801));
    assert_eq!(unix_seconds("2026-12-02T07:26:16Z"), Some(1_796_196_376));
    for bad in ["2026-12-02 07:26:16Z", "2026-12-02T07:26:16", "2026-13-02T07:26:16Z", "", "x"] {
        assert_eq!(unix_seconds(bad), None, "{bad}");
    }
}

#[test]
fn a_run_without_its_times_says_so_in_one_line() {
    let timed = json!({"environment": {"started_at": "2026-12-02T07:26:16Z", "finished_at": "2026-12-02T07:53:42Z"}});
    assert_eq!(wall_seconds(&timed), Ok(27.0 * 60.0 + 26.0));
    let untimed = json!({"date": "2026-12-02", "cells": []});
    let e = wall_seconds(&untimed).unwrap_err().to_string();
    assert!(e.contains("environment.started_at") && !e.contains('\n'), "{e}");
    assert!(provenance(&untimed).unwrap_err().to_string().contains("git_commit"));
}

/// What is wrong with one reproduction's provenance, if anything: `record` is what its
/// results.json says (commit, dirty), `listed` whether the not-rerun list names it, `in_history`
/// whether its commit is an ancestor of HEAD.
fn judge(
    name: &str,
    record: &Result<(String, bool), String>,
    listed: bool,
    in_history: impl Fn(&str) -> bool,
) -> Option<String> {
    let file = format!("reproductions/{name}/results.json");
    match (record, listed) {
        (Ok((commit, false)), true) if in_history(commit) => Some(format!(
            "{file} now names a clean commit ({commit}): remove {name} from {NOT_RERUN} (the list only shrinks)"
        )),
        (Ok((commit, _)), _) if !in_history(commit) => Some(format!(
            "{file} names commit {commit}, which is not in this repository's history: run it again from a clean commit"
        )),
        (Ok((_, true)), false) => Some(format!(
            "{file} records git_dirty: true: run it again from a clean committed tree (the ones not yet run again are \
             listed in {NOT_RERUN})"
        )),
        (Err(why), false) => Some(format!("{file}: {why}: run it again from a clean commit")),
        _ => None,
    }
}

/// Whether `commit` is in HEAD's history. A shallow clone (or a copy without .git) cannot say:
/// there every commit is taken as in it, and one line says the check was not made.
fn in_history(commit: &str) -> bool {
    let full = std::process::Command::new("git")
        .current_dir(root())
        .args(["rev-parse", "--is-shallow-repository"])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"false"));
    if !full {
        eprintln!("reproductions: no full git history here, {commit} not looked up");
        return true;
    }
    std::process::Command::new("git")
        .current_dir(root())
        .args(["merge-base", "--is-ancestor", commit, "HEAD"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every committed reproduction names a clean commit of this repository's history, except the
/// ones `reproductions/not-rerun.toml` lists, which must still be dirty.
#[test]
fn every_reproduction_names_a_clean_commit_or_is_listed_as_not_rerun() {
    let list = not_rerun(&root()).unwrap();
    let names = names(&root()).unwrap();
    let mut problems = vec![];
    for listed in &list {
        assert!(!listed.why.trim().is_empty(), "{NOT_RERUN}: {} says no why", listed.name);
        if !names.contains(&listed.name) {
            problems.push(format!("{NOT_RERUN} lists {}, which has no reproductions/{0}/results.json", listed.name));
        }
    }
    for name in &names {
        let record =
            read(&results_file(&root(), name).unwrap()).and_then(|json| provenance(&json)).map_err(String::from);
        let listed = list.iter().any(|l| &l.name == name);
        problems.extend(judge(name, &record, listed, in_history));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_list_can_only_shrink() {
    let clean = Ok(("a".repeat(40), false));
    let dirty = Ok(("a".repeat(40), true));
    let none = Err("it records no environment.git_commit of 40 hex digits".to_string());
    let known = |_: &str| true;
    assert_eq!(judge("x", &clean, false, known), None);
    assert_eq!(judge("x", &dirty, true, known), None);
    assert_eq!(judge("x", &none, true, known), None);
    assert!(judge("x", &clean, true, known).unwrap().contains("remove x from reproductions/not-rerun.toml"));
    assert!(judge("x", &dirty, false, known).unwrap().contains("git_dirty: true"));
    assert!(judge("x", &none, false, known).unwrap().contains("no environment.git_commit"));
    assert!(judge("x", &clean, false, |_: &str| false).unwrap().contains("not in this repository's history"));
}
