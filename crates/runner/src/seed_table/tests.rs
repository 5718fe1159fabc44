use super::*;
use crate::doc_figures::extract::{figures, Family, Figure};
use serde_json::json;

#[test]
fn pointers_and_quotients_read_the_committed_figures() {
    let json = json!({"cells": [{"ms": {"p50": 106.0}}, {"ms": {"p50": 103.2}}], "tls": "1.3"});
    let text = fill(
        "REST {/cells/0/ms/p50} ms vs {/cells/1/ms/p50} ms: {quotient /cells/0/ms/p50 /cells/1/ms/p50}, \
         {difference /cells/0/ms/p50 /cells/1/ms/p50} ms more, TLS {/tls}",
        &json,
    );
    assert_eq!(text.unwrap(), "REST 106.0 ms vs 103.2 ms: 1.03×, 2.80 ms more, TLS 1.3");
}

#[test]
fn a_figure_that_is_not_there_is_a_one_line_error() {
    let json = json!({"cells": []});
    for text in ["{/cells/0/ms}", "{quotient /a /cells}", "{median a b}", "{what}", "unclosed {/cells"] {
        let e = fill(text, &json).unwrap_err();
        assert!(!e.contains('\n') && !e.is_empty(), "{text}: {e}");
    }
}

/// Every row of the repository's table reads figures that its committed results hold: a row that
/// quotes a figure the results do not have fails here.
#[test]
fn the_repository_table_reads_from_its_committed_results() {
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..");
    let rows = read(&root).unwrap();
    assert!(!rows.is_empty());
    for row in &rows {
        assert!(!row.here.contains('{') && !row.why.contains('{'), "{row:?}");
        assert!(!row.command.is_empty(), "{row:?}");
    }
    let seeds: Vec<&str> = rows.iter().map(|r| r.seed.as_str()).collect();
    for seed in ["000", "002", "003", "004"] {
        assert!(seeds.contains(&seed), "no row for seed {seed}: {seeds:?}");
    }
}

/// The book quotes the table between `<!-- seed table -->` and `<!-- /seed table -->` as the
/// report renders its rows now: a figure changed in the results and not in the book fails here.
#[test]
fn the_book_quotes_the_table_as_its_results_render_it() {
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..");
    let readme = std::fs::read_to_string(root.join("docs/src/seeds.md")).unwrap();
    let (start, end) = ("<!-- seed table -->\n", "<!-- /seed table -->");
    let from = readme.find(start).expect("docs/src/seeds.md has a seed table block") + start.len();
    let to = readme[from..].find(end).expect("the block ends") + from;
    let rendered = rendered(&read(&root).unwrap());
    assert_eq!(
        readme[from..to].trim(),
        rendered.trim(),
        "docs/src/seeds.md's seed table is not what reproductions/seeds.toml renders; paste this:\n{rendered}"
    );
}

fn rendered(rows: &[callbench_results::model::SeedRow]) -> String {
    callbench_report::markdown::render(&callbench_report::doc::seed_blocks(rows))
}

/// What is wrong with the run times a row's command states (`# ~20 min`, `(27 min)`), if
/// anything: each must be the wall time of the row's committed run within 10%. A run that records
/// no times is let through only while `reproductions/not-rerun.toml` lists it.
fn stated_time_problem(
    seed: &str,
    name: &str,
    stated: &[Figure],
    wall: &Result<f64, String>,
    listed: bool,
) -> Option<String> {
    let at = format!(
        "{FILE}, seed {seed}: its command states {}",
        stated.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(", ")
    );
    match wall {
        Ok(wall) => stated.iter().find(|f| (f.value - wall).abs() > 0.1 * wall + f.half_step).map(|_| {
            format!(
                "{at}, but reproductions/{name}'s run took {} (environment.finished_at − started_at): state that",
                crate::progress::clock(*wall)
            )
        }),
        Err(_) if listed => None,
        Err(why) => {
            Some(format!("{at}, but reproductions/{name}/results.json cannot say how long its run took: {why}"))
        }
    }
}

/// Every run time a row's command states is its committed run's wall time within 10%.
#[test]
fn the_commands_stated_run_times_are_the_measured_ones() {
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..");
    let table: Table = toml::from_str(&std::fs::read_to_string(root.join(FILE)).unwrap()).unwrap();
    let not_rerun = crate::reproductions::not_rerun(&root).unwrap();
    let mut problems = vec![];
    for row in &table.row {
        let Some((_, comment)) = row.command.split_once('#') else { continue };
        let stated: Vec<Figure> = figures(comment).into_iter().filter(|f| f.family == Family::Time).collect();
        let Some(results) = row.results.as_deref().filter(|_| !stated.is_empty()) else { continue };
        let name = results.split('/').next().unwrap_or(results);
        let json = crate::reproductions::read(&root.join("reproductions").join(results)).unwrap();
        let wall = crate::reproductions::wall_seconds(&json).map_err(String::from);
        let listed = not_rerun.iter().any(|l| l.name == name);
        if let (Err(why), true) = (&wall, listed) {
            eprintln!(
                "{FILE}, seed {}: reproductions/{name} records no run time yet ({why}); listed as not run again",
                row.seed
            );
        }
        problems.extend(stated_time_problem(&row.seed, name, &stated, &wall, listed));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_stated_time_far_from_the_run_fails() {
    let stated = figures("(5 min 54 s)");
    let p = stated_time_problem("004", "r", &stated, &Ok(2433.0), false).unwrap();
    assert!(p.contains("seed 004: its command states 5 min 54 s, but reproductions/r's run took 40 min 33 s"), "{p}");
    assert_eq!(stated_time_problem("002", "r", &figures("(27 min)"), &Ok(1646.0), false), None);
    let untimed = Err("it records no environment.started_at".to_string());
    assert_eq!(stated_time_problem("003", "r", &figures("~20 min"), &untimed, true), None);
    assert!(stated_time_problem("003", "r", &figures("~20 min"), &untimed, false)
        .unwrap()
        .contains("records no environment.started_at"));
}
