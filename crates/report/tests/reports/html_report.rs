//! The HTML report on its own (no browser): self-contained, escaped, with the Markdown's content
//! and the charts. `html_chromium.rs` renders it.

use crate::common;

use callbench_report::html::html;
use callbench_report::svg;
use callbench_results::model::Results;

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

/// Charts of each kind the fixture must have: every experiment has its headline bars, spectrum
/// and CPU chart; throughput bars where the headline is not throughput; one line chart per sweep.
fn expected_kinds(r: &Results) -> Vec<(&'static str, usize)> {
    let n = r.experiments.len();
    let not_throughput = r.experiments.iter().filter(|e| e.headline != "throughput_per_s").count();
    let rate = r.experiments.iter().filter(|e| e.sweep.as_deref() == Some("rate")).count();
    let other = r.experiments.iter().filter(|e| e.sweep.is_some()).count() - rate;
    vec![("headline", n), ("throughput", not_throughput), ("rate", rate), ("sweep", other), ("spectrum", n), ("cpu", n)]
}

#[test]
fn a_self_contained_html5_file() {
    let page = html(&common::fixture());
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(page.contains("<meta charset=\"utf-8\">") && page.contains("<style>"));
    assert!(page.trim_end().ends_with("</html>"));
    for fetch in ["<script", "src=", "href=", "@import", "url(", "<link", "<img", "<iframe"] {
        assert_eq!(count(&page, fetch), 0, "{fetch} in the report");
    }
    // The only URL is the SVG namespace, which is a name, not something to fetch.
    assert_eq!(count(&page, "http"), count(&page, "xmlns=\"http://www.w3.org/2000/svg\""));
}

#[test]
fn the_markdown_content_is_all_there() {
    let r = common::fixture();
    let page = html(&r);
    for needle in [
        "<h1>callbench: fixture</h1>",
        "<h2>Sequential latency: one call at a time</h2>",
        "<h2>What the seed article reported / what callbench measured here</h2>",
        "<h2>Servers</h2>",
        "<h2>Reproducibility</h2>",
        "server-crashed: server exited with signal 11 (SIGSEGV)",
        "&lt;index out of bounds&gt;",
        "not-measured: verify failed: 3 of 118 vectors",
        "no significant difference",
        "<tr class=\"failed\">",
        "<tr class=\"noisy\">",
        "<td class=\"num\">",
    ] {
        assert!(page.contains(needle), "{needle} not in the HTML report");
    }
    let rows = count(&page, "<tr");
    let md = callbench_report::markdown::markdown(&r);
    let md_rows = md.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| ---")).count();
    assert_eq!(rows, md_rows, "the same table rows (headers included) as the Markdown");
}

#[test]
fn the_suite_file_is_folded_in_a_details_block() {
    let page = html(&common::fixture());
    let suite = "<details><summary>Suite file suites/fixture.toml as it was run</summary><pre><code";
    let details = &page[page.find(suite).expect("a details block")..];
    assert!(details.contains("name = &quot;fixture&quot;\nrepetitions = 5\n"), "{details}");
}

#[test]
fn the_summary_comes_first_and_the_comparisons_fold_away() {
    let r = common::fixture();
    let page = html(&r);
    let found = page.find("What this run found").expect("a summary");
    assert!(found < page.find("<table").unwrap(), "the summary before any table");
    assert!(page.contains("<details><summary>Sequential"), "comparisons folded per experiment");
    let md = callbench_report::markdown::markdown(&r);
    assert!(md.find("## What this run found").unwrap() < md.find("| server").unwrap());
    assert!(md.find("## All comparisons").unwrap() > md.rfind("| server | transport").unwrap(), "after the tables");
}

#[test]
fn text_from_the_results_is_escaped() {
    let attack = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let mut r = common::fixture();
    r.suite.name = format!("suite {attack}");
    r.suite.description = attack.into();
    r.suite.text = format!("name = \"{attack}\"");
    r.suite.file = attack.into();
    r.experiments[0].title = attack.into();
    r.experiments[0].references[0].what = attack.into();
    r.servers[0].failures.push(attack.into());
    r.cells[0].error = Some(attack.into());
    let server = r.cells[1].server.clone();
    for c in r.cells.iter_mut().filter(|c| c.server == server) {
        c.server = format!("{server}\"><script>alert(3)</script>");
    }
    r.environment.command_line.push(attack.into());
    let page = html(&r);
    assert_eq!(count(&page, "<script"), 0, "a script tag got through");
    assert_eq!(count(&page, "<img"), 0, "an img tag got through");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"));
    assert!(page.contains("<title>callbench: suite &lt;script&gt;"), "the page title is escaped");
    // In chart labels, legends and tooltips too (SVG text and attributes).
    assert!(page.contains("&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"));
    let md = callbench_report::markdown::markdown(&r);
    // Outside the suite file's code block (where it is shown as text), no tag gets through.
    let fence = md.find("```toml").unwrap();
    let outside = format!("{}{}", &md[..fence], &md[md[fence + 3..].find("```").unwrap() + fence + 6..]);
    assert!(!outside.contains("<script") && !outside.contains("<img"), "the Markdown disables raw HTML too");
}

#[test]
fn every_experiment_has_its_charts() {
    let r = common::fixture();
    let page = html(&r);
    let total: usize = r.experiments.iter().map(|e| svg::experiment_charts(&r, e).len()).sum();
    assert_eq!(count(&page, "<svg class=\"chart\""), total);
    for (kind, n) in expected_kinds(&r) {
        assert_eq!(count(&page, &format!("<svg class=\"chart\" data-kind=\"{kind}\"")), n, "{kind} charts");
    }
    assert_eq!(total, expected_kinds(&r).iter().map(|(_, n)| n).sum::<usize>());
    // Each chart is named for assistive technologies, with a description.
    assert_eq!(count(&page, "role=\"img\""), total);
    assert!(count(&page, "<desc>") >= total);
}

#[test]
fn bars_whiskers_and_lines_match_the_cells() {
    let r = common::fixture();
    let page = html(&r);
    let with = |m: &str| r.cells.iter().filter(|c| c.summary.contains_key(m)).count();
    // Throughput bars: as the headline, or in their own chart beside another headline.
    let throughput_bars = with("throughput_per_s");
    let headline = |c: &callbench_results::model::Cell| r.experiment(&c.experiment).unwrap().headline.clone();
    let headline_bars =
        r.cells.iter().filter(|c| headline(c) != "throughput_per_s" && c.summary.contains_key(&headline(c))).count();
    let cpu_bars = with("client_cpu_us_per_call") + with("server_cpu_us_per_call");
    assert_eq!(count(&page, "class=\"bar\""), throughput_bars + headline_bars + cpu_bars);
    assert!(count(&page, "class=\"whisker\"") > count(&page, "class=\"bar\"") / 2);
    // The spectrum: one line per cell that has one.
    let spectra = r.cells.iter().filter(|c| c.spectrum.len() >= 2).count();
    let sweeps: usize = r
        .experiments
        .iter()
        .filter_map(|e| {
            let lines = r
                .cells
                .iter()
                .filter(|c| c.experiment == e.id)
                .map(|c| &c.server)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            match e.sweep.as_deref() {
                Some("rate") => Some(2 * lines),
                Some(_) => Some(lines),
                None => None,
            }
        })
        .sum();
    assert_eq!(count(&page, "class=\"series\""), spectra + sweeps);
    // The cell without figures is marked in the bar charts instead of being left out.
    assert!(count(&page, "class=\"missing\"") >= 1);
}

#[test]
fn the_answer_opens_with_a_chart_per_question() {
    let mut r = common::fixture();
    assert!(svg::answer_charts(&r).is_empty(), "no question answered, no answer chart");
    r.experiments[0].answer = Some("The first question".into());
    let charts = svg::answer_charts(&r);
    assert_eq!(charts.len(), 1);
    let page = html(&r);
    assert_eq!(count(&page, "data-kind=\"answer\""), 1);
    // Right after the answer's lines, before any experiment's own charts.
    let (answer, headline) = (page.find("data-kind=\"answer\"").unwrap(), page.find("data-kind=\"headline\"").unwrap());
    assert!(page.find("The answer").unwrap() < answer && answer < headline);
    // A bar and a whisker for each cell the answer's line names (REST, gRPC, in-process: at most 3).
    let bars = count(&charts[0], "class=\"bar\"");
    assert!((1..=3).contains(&bars) && count(&charts[0], "class=\"whisker\"") >= bars, "{}", charts[0]);
    assert!(charts[0].contains("The first question"));
}
