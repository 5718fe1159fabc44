use super::*;
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
