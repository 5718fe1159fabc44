use super::extract::{figures, prose_lines};
use super::*;
use serde_json::json;

fn root() -> std::path::PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR")).join("../..")
}

fn read(line: &str) -> Vec<(String, f64)> {
    figures(line).into_iter().map(|f| (f.text, f.value)).collect()
}

#[test]
fn a_figure_is_a_number_with_a_unit() {
    assert_eq!(read("REST 106.0 ms vs 103.2 ms"), [("106.0 ms".into(), 0.106), ("103.2 ms".into(), 0.1032)]);
    assert_eq!(
        read("74,184 calls/s, 1.78×, 20%"),
        [("74,184 calls/s".into(), 74184.0), ("1.78×".into(), 1.78), ("20%".into(), 20.0)]
    );
    // Ranges and lists share their unit; thousands apply to the whole range.
    let range = read("1.29–2.47 ms a call");
    assert!(range.iter().all(|f| f.0 == "1.29–2.47 ms") && range.len() == 2);
    assert!((range[0].1 - 0.00129).abs() < 1e-12 && (range[1].1 - 0.00247).abs() < 1e-12);
    let list: Vec<f64> = read("RTT 0, 10, 40 and 100 ms").into_iter().map(|f| f.1).collect();
    assert_eq!(list, [0.0, 0.01, 0.04, 0.1]);
    assert_eq!(read("ab ~20–24k rps"), [("20–24k rps".into(), 20000.0), ("20–24k rps".into(), 24000.0)]);
    assert_eq!(read("100/20 Mbit/s").len(), 2);
    // A duration in two units is one figure.
    assert_eq!(read("took 1 min 22 s"), [("1 min 22 s".into(), 82.0)]);
    assert_eq!(read("about 5 minutes, 2 h 05 min"), [("5 minutes".into(), 300.0), ("2 h 05 min".into(), 7500.0)]);
    // A product's × is no unit; names, versions, paths, counts and words hold no figure.
    assert_eq!(read("9 × 1.2 s"), [("1.2 s".into(), 1.2)]);
    for none in ["seed002 v1.2 /cells/0 TLS 1.3 HTTP/1.1 127.0.0.1", "5 seeds, 50 calls, 2 cores, 10,000 users", "3rd"]
    {
        assert_eq!(read(none), [], "{none}");
    }
    // The precision is the one written.
    let f = &figures("2 ms")[0];
    assert!((f.half_step - 0.0005).abs() < 1e-12);
}

#[test]
fn code_and_generated_blocks_are_not_prose() {
    let text = "a 1 ms\n```\nb 2 ms\n```\nc `3 ms` d\n<!-- seed table -->\ne 4 ms\n<!-- /seed table -->\nf 5 ms\n";
    let lines = prose_lines(text).unwrap();
    let found: Vec<(usize, Vec<String>)> = lines
        .iter()
        .map(|(n, l)| (*n, figures(l).into_iter().map(|f| f.text).collect::<Vec<_>>()))
        .filter(|x| !x.1.is_empty())
        .collect();
    assert_eq!(found, [(1, vec!["1 ms".to_string()]), (9, vec!["5 ms".to_string()])]);
    // A block no generator owns hides nothing.
    assert!(prose_lines("<!-- mine -->\n7 ms\n<!-- /mine -->\n").unwrap_err().contains("no generator owns"));
}

#[test]
fn results_keys_give_their_numbers_units() {
    let mut out = vec![];
    let results = json!({"cells": [{"ms": {"p50": 106.0}, "wall_us_per_call": {"median": 4100.0}, "ratio": 1.03, "rtt_ms": 10,
        "calls": 12, "runs": [{"wall_us_per_call": 5000.0}]}]});
    leaves(&results, None, &mut out);
    let figure = |t: &str| figures(t).remove(0);
    let backed = |t: &str| out.iter().any(|b| backs(b, &figure(t)));
    assert!(backed("106.0 ms") && backed("0.106 s") && backed("4.10 ms") && backed("4,100 µs") && backed("1.03×"));
    assert!(backed("103%"), "a fraction backs a percentage");
    assert!(!backed("106.1 ms") && !backed("4.2 ms") && !backed("106.0 µs") && !backed("1.04×"));
    assert!(!backed("5.00 ms"), "a raw repetition backs nothing");
    // A number of no unit backs a ratio or a percentage, not a figure with a unit.
    assert!(backed("12×") && !backed("12 ms") && !backed("12 calls/s") && !backed("1.03 s"));
    // One significant digit is backed only by a number equal to it: a setting, not a rounding.
    assert!(backed("10 ms") && !backed("4 ms") && backed("4.1 ms"));
}

/// A planted wrong figure fails, and the error names the file, the line, the figure and the fix.
#[test]
fn an_unbacked_figure_fails_with_where_and_how_to_fix() {
    let run = vec![Backing { family: Some(Family::Time), value: 0.106, half_step: 0.0, relative: 0.0, measured: true }];
    let sources = Sources { anywhere: vec![], named: [("reproductions/r".to_string(), run)].into_iter().collect() };
    let stated = vec![Stated {
        file: "x.md".into(),
        figure: "10 ms".into(),
        why: "configured".into(),
        source: None,
        derived: vec![],
    }];
    let mut used = vec![false];
    let text =
        "Intro.\n\nREST 106.0 ms (reproductions/r) across a 10 ms link,\nbut 1.7–2 ms a call.\n\nREST 106.0 ms.\n";
    let problems = check_text("x.md", text, &sources, &stated, &mut used);
    assert_eq!(problems.len(), 2, "{problems:?}");
    let p = &problems[0];
    assert!(p.starts_with("x.md:4: \"1.7–2 ms\" is a figure no committed result backs"), "{p}");
    // A paragraph that names no results is backed by none of them.
    assert!(problems[1].starts_with("x.md:6: \"106.0 ms\""), "{}", problems[1]);
    assert!(p.contains("placeholder of reproductions/seeds.toml") && p.contains(STATED), "{p}");
    assert!(used[0]);
}

#[test]
fn a_stated_figure_names_a_source_that_sets_it() {
    let dir = std::env::temp_dir().join(format!("callbench-stated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("suite.toml"), "rtt = \"10ms\"\nnoisy = 0.10\nspan = 20.0\n").unwrap();
    let s = |figure: &str| Stated {
        file: "x.md".into(),
        figure: figure.into(),
        why: "set".into(),
        source: None,
        derived: vec![],
    };
    assert_eq!(source_holds(&dir, &s("10 ms"), "suite.toml"), None);
    assert_eq!(source_holds(&dir, &s("10%"), "suite.toml"), None);
    assert_eq!(source_holds(&dir, &s("20×"), "suite.toml"), None);
    assert!(source_holds(&dir, &s("2×"), "suite.toml").is_some());
    assert!(source_holds(&dir, &s("12 ms"), "suite.toml").unwrap().contains("holds no 12"));
    assert!(source_holds(&dir, &s("1 ms"), "nothing.toml").unwrap().contains("is not a file"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_seed_rows_placeholders_are_not_its_typed_figures() {
    assert_eq!(without_placeholders("{median a b} vs 4.07 ms {ratio x y}!"), "  vs 4.07 ms  !");
}

/// A stated figure with arithmetic is held to what it computes, each value of a range by one.
#[test]
fn stated_arithmetic_is_computed() {
    let stated = |figure: &str, derived: &[&str]| Stated {
        file: "x.md".into(),
        figure: figure.into(),
        why: "arithmetic".into(),
        source: None,
        derived: derived.iter().map(|d| d.to_string()).collect(),
    };
    let check = |line: &str, s: Stated| {
        let all = figures(line);
        derived_problem(&s, &all[0], &all)
    };
    assert_eq!(check("80 ms", stated("80 ms", &["182 - 102"])), None);
    assert_eq!(check("3–4 ms", stated("3–4 ms", &["106.0 - 103.2", "167.6 - 163.5"])), None);
    let wrong = check("1.7–2 ms", stated("1.7–2 ms", &["(58221 - 53073) / 4000", "(30181 - 25239) / 2000"])).unwrap();
    assert!(wrong.contains("is not what its stated arithmetic") && wrong.contains("= 1.287"), "{wrong}");
    assert!(check("80 ms", stated("80 ms", &["182 -"])).unwrap().contains("derived"));
}

/// README.md, docs/src/run.md and docs/src/seeds.md: every figure in their prose is backed.
#[test]
fn every_figure_in_the_docs_is_backed() {
    let problems = check(&root()).unwrap();
    assert!(problems.is_empty(), "{} unbacked:\n{}", problems.len(), problems.join("\n"));
}
