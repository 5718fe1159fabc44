//! "What this run found": the sentences follow the one rule of every verdict (nobody is ahead
//! beside an interval that holds 1, nothing is "no significant difference" beside one that
//! excludes it), counts carry no interval, few repetitions say so, and the seed articles' figures
//! come with the reason they differ.

use crate::common;

use callbench_report::doc::comparisons::{line_agrees, summary_agrees};
use callbench_report::markdown::markdown;
use callbench_report::summary::sentences;
use callbench_results::analysis;
use callbench_results::model::Results;

/// The comparisons again, after the cells were edited.
fn recompare(mut r: Results) -> Results {
    r.comparisons = r.experiments.iter().flat_map(|e| analysis::compare_experiment(&r, &e.id)).collect();
    r
}

/// The summary's sentence on the sequential experiment's `auth` workload.
fn auth(found: &[String]) -> String {
    let prefix = "Sequential latency: one call at a time, auth: ";
    found.iter().find(|s| s.starts_with(prefix)).unwrap_or_else(|| panic!("no auth sentence in {found:#?}")).clone()
}

/// Every comparison line and every summary sentence of the Markdown report follows the rule.
fn check_report(r: &Results) {
    let md = markdown(r);
    let mut compared = 0;
    for line in md.lines().filter(|l| l.starts_with("- ")) {
        line_agrees(line).unwrap_or_else(|e| panic!("{e}\n{md}"));
        compared += usize::from(line.contains(" vs ") && line.contains(" — "));
    }
    assert!(compared > 10, "{md}");
    for s in sentences(r) {
        summary_agrees(&s).unwrap();
    }
}

#[test]
fn the_summary_ranks_only_what_the_rank_test_separates() {
    let r = common::fixture();
    check_report(&r);
    let auth = auth(&sentences(&r));
    // rust-actix and rust-axum are 45.0 and 45.1 µs; rust-tonic 78 µs.
    assert!(auth.contains(" was ahead on p50 latency at 4"), "{auth}");
    assert!(auth.contains("rust-tonic's; no significant difference from rust-"), "{auth}");
    // The in-process cell's median is about 900 ns (the fixture's jitter moves it a little).
    assert!(auth.contains(", within noise) (in-process baseline: ") && auth.ends_with(" ns)."), "{auth}");
}

#[test]
fn when_every_difference_is_within_noise_nobody_is_ahead() {
    let mut r = common::fixture();
    r.cells.retain(|c| !(c.experiment == "sequential" && c.server == "rust-tonic"));
    let r = recompare(r);
    check_report(&r);
    let auth = auth(&sentences(&r));
    assert!(auth.contains(": no significant difference on p50 latency between rust-"), "{auth}");
    assert!(!auth.contains("ahead"), "{auth}");
}

#[test]
fn with_three_repetitions_the_summary_says_it_cannot_tell() {
    let mut r = common::fixture();
    for c in &mut r.cells {
        c.runs.truncate(3);
    }
    let r = recompare(r);
    check_report(&r);
    let auth = auth(&sentences(&r));
    assert!(!auth.contains("ahead") && !auth.contains("no significant difference"), "{auth}");
    assert!(auth.contains("too few repetitions to tell against rust-"), "{auth}");
    assert!(auth.contains("(the whole range, only a 90% interval)"), "{auth}");
    let md = markdown(&r);
    assert!(md.contains("(the whole range, only a 90% interval) — too few repetitions to tell."), "{md}");
}

#[test]
fn counts_have_no_interval_even_as_the_headline() {
    let mut r = common::fixture();
    r.experiments[0].headline = "wire_received_per_call".into();
    let r = recompare(r);
    check_report(&r);
    let auth = auth(&sentences(&r));
    // rust-tonic 96 B, rust-axum 160 B, rust-actix 171 B per call received.
    assert!(
        auth.contains(
            "rust-tonic was ahead on wire bytes received per call at 96 B/call — 0.60× rust-axum's, 0.56× rust-actix's"
        ),
        "{auth}"
    );
    assert!(!auth.contains('['), "a count compared through an interval: {auth}");
    let md = markdown(&r);
    for line in md.lines().filter(|l| l.contains("wire bytes received per call: ")) {
        assert!(!line.contains("× ["), "{line}");
    }
}

#[test]
fn the_seed_articles_figures_come_with_why_they_differ() {
    let r = common::fixture();
    let found = sentences(&r);
    let seed = |what: &str| found.iter().find(|s| s.contains(what)).cloned();
    let actix = seed("182 ms for auth over REST (actix-web)").expect("the actix reference");
    assert!(
        actix.contains("; here 4")
            && actix.ends_with("(the article called Cloud Run over TLS; here loopback, no TLS)."),
        "{actix}"
    );
    // A reference written relative to its experiment (`auth/rust-tonic`) is found too.
    assert!(seed("102 ms for auth over gRPC (tonic)").is_some(), "{found:#?}");
}

#[test]
fn the_summary_names_disturbed_and_noisy_cells_and_the_probe_warnings() {
    let r = common::fixture();
    let found = sentences(&r);
    let all = found.join("\n");
    assert!(
        all.contains(&format!(
            "{} was measured while the machine was disturbed ({}).",
            common::DISTURBED_CELL,
            common::DISTURBED
        )),
        "{all}"
    );
    assert!(
        all.contains("1 of 48 cells is noisy (a 95% interval reaching more than 10% from the median)")
            && all.contains("sequential/students/rust-axum"),
        "{all}"
    );
    assert!(all.contains(&format!("Before the run: {}.", common::GOVERNOR_WARNING)), "{all}");
}

#[test]
fn a_sweep_reads_as_one_sentence_and_a_crashed_cell_is_not_ranked() {
    let found = sentences(&common::fixture());
    let rate: Vec<&String> = found.iter().filter(|s| s.starts_with("Latency vs offered load, ")).collect();
    assert_eq!(rate.len(), 1, "{rate:#?}");
    assert!(rate[0].contains("students: rust-actix was ahead on p99 latency at every rate from 2,000 to 19,000 — 0."));
    assert!(rate[0].ends_with(" rust-tonic's, significant at each."), "{}", rate[0]);
    // rust-axum crashed after two repetitions with the highest throughput: it is not ranked.
    let closed = found.iter().find(|s| s.starts_with("Throughput with 50 calls in flight, students: ")).unwrap();
    assert!(closed.contains("rust-actix was ahead") && !closed.contains("rust-axum"), "{closed}");
}

#[test]
fn a_sweep_where_the_lead_changes_reads_value_by_value_in_order() {
    let mut r = common::fixture();
    // rust-tonic twenty times faster at 2,000 calls/s: rust-actix is no longer ahead everywhere.
    let id = "rate-sweep/students/rust-tonic/rate=2000";
    let cell = r.cells.iter_mut().find(|c| c.id == id).unwrap();
    for run in &mut cell.runs {
        run.latency_us.as_mut().unwrap().p99 /= 20.0;
    }
    analysis::summarise(cell, "latency_p99_us", 0.0, 1, 1);
    let r = recompare(r);
    check_report(&r);
    let rates: Vec<String> = sentences(&r)
        .into_iter()
        .filter_map(|s| {
            Some(s.strip_prefix("Latency vs offered load, students, rate = ")?.split(':').next()?.to_string())
        })
        .collect();
    assert_eq!(rates, ["2,000", "5,000", "10,000", "15,000", "19,000"]);
}

#[test]
fn a_busy_machine_reads_as_one_sentence_not_one_per_cell() {
    let mut r = common::fixture();
    for c in r.cells.iter_mut().filter(|c| c.experiment == "sequential") {
        c.disturbed = Some("5 of 5 repetitions disturbed: 84% of the client CPUs used by other processes".into());
    }
    let found = sentences(&r);
    let busy: Vec<&String> = found.iter().filter(|s| s.contains("disturbed")).collect();
    assert_eq!(busy.len(), 1, "{busy:#?}");
    assert!(busy[0].starts_with("8 of 48 cells were measured while the machine was disturbed, their re-runs too (e.g. sequential/auth/rust-actix: 5 of 5 repetitions disturbed: 84% of the client CPUs used by other processes): sequential/auth/rust-actix, "), "{}", busy[0]);
}

/// Across a link, "what a call cost in round trips" names each server once: a sweep's cells of one server
/// (payload sizes here, calls in seed003-network) as one range with their count, not one figure per cell.
#[test]
fn round_trips_are_summed_up_per_server_across_a_sweep() {
    use callbench_results::model::NetworkRecord;
    let mut r = common::fixture();
    let exp = r.experiments.iter().find(|e| e.sweep.as_deref() == Some("payload_size")).unwrap().clone();
    let mut servers = std::collections::BTreeSet::new();
    for c in r.cells.iter_mut().filter(|c| c.experiment == exp.id && c.server != "inproc") {
        let Some(p50) = c.summary.get("latency_p50_us").map(|e| e.median) else { continue };
        // The call took one round trip and a bit more at each payload size.
        let measured_rtt_us = p50 / 1.04;
        c.network =
            Some(NetworkRecord { spec: "rtt=10ms".into(), rtt_us: 10_000.0, measured_rtt_us, own_rtt_us: 50.0 });
        servers.insert(c.server.clone());
    }
    assert!(servers.len() >= 2);
    let found = sentences(&r);
    let line = found
        .iter()
        .find(|s| s.starts_with(&format!("{}, across rtt=10ms: a call cost ", exp.title)))
        .unwrap_or_else(|| panic!("no round-trip sentence in {found:#?}"));
    for server in &servers {
        assert_eq!(line.matches(&format!("({server}")).count(), 1, "{server} once in: {line}");
    }
    assert!(line.contains("1.0 (") && line.contains(" cells)"), "{line}");
}

#[test]
fn rounds_that_moved_most_cells_at_once_read_as_the_machine_changing_speed() {
    let unmoved = sentences(&common::fixture()).join("\n");
    assert!(!unmoved.contains("speed changed"), "the fixture's spread is each cell's own: {unmoved}");
    assert!(!unmoved.contains("The hypervisor moved"), "its CPUs stayed 60 ns apart: {unmoved}");
    // Round 2 of every sequential cell 25% faster, as a slow spell of the machine leaves the others.
    let mut r = common::fixture();
    let mut moved = 0;
    let rounds = r.cells.iter().filter(|c| c.experiment == "sequential").map(|c| c.runs.len()).max().unwrap();
    for cell in r.cells.iter_mut().filter(|c| c.experiment == "sequential" && c.runs.len() == rounds) {
        if let Some(latency) = cell.runs[1].latency_us.as_mut() {
            latency.p50 *= 0.75;
            moved += 1;
        }
        // The cause, measured around each repetition: the two CPUs shared a core in that round only.
        for (round, run) in cell.runs.iter_mut().enumerate() {
            let trip = if round == 1 { 55.0 } else { 350.0 };
            run.cpus_round_trip_ns = Some([trip, trip]);
        }
        analysis::summarise(cell, "latency_p50_us", 0.0, 1, 1);
    }
    assert!(moved >= 4);
    let r = recompare(r);
    let found = sentences(&r);
    let machine: Vec<&String> = found.iter().filter(|s| s.contains("speed changed")).collect();
    assert_eq!(machine.len(), 1, "{found:#?}");
    let noisy = r.cells.iter().filter(|c| c.experiment == "sequential" && c.noisy).count();
    let text = machine[0];
    let head = "Sequential latency: one call at a time: in round 2, at least ";
    assert!(text.starts_with(head), "{text}");
    // The cells a round moved beyond 10% from their own medians: one already low there may not be.
    let together: usize = text[head.len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(together + 1 >= moved, "{text}");
    assert!(
        text.contains(&format!(
            " of {moved} cells' p50 latency was more than 10% below their own medians at once: the machine's speed \
             changed during the experiment, not one server's"
        )),
        "{text}"
    );
    assert!(text.ends_with(&format!(" of its {noisy} noisy cells would not be.")), "{text}");
    assert!(
        text.contains(
            "; the client's and the server's CPUs were 55 ns apart in those rounds (a cache line's round trip, \
             median) and 350 ns in the others: the hypervisor had moved them;"
        ),
        "{text}"
    );
    // The same, counted over the whole run: the repetitions in each placement.
    // (The other experiments' repetitions stayed 60 ns apart, as the sequential one's round 2.)
    let trips: Vec<f64> =
        r.cells.iter().flat_map(|c| &c.runs).filter_map(|run| run.cpus_round_trip_ns).map(|t| t[0]).collect();
    let near = trips.iter().filter(|t| **t < 100.0).count();
    let placements = found.iter().find(|s| s.starts_with("The hypervisor moved")).expect("a placement sentence");
    // The sequential experiment was mostly far: its near round is outside its usual placement.
    let outside = r.cells.iter().filter(|c| c.experiment == "sequential" && c.runs.len() == rounds).count();
    assert!(
        placements.starts_with(&format!(
            "The hypervisor moved the client's and the server's CPUs during the run: in {near} of {} repetitions \
             they were ",
            trips.len()
        )) && placements.contains(&format!(
            " ns apart (a cache line's round trip, median), in {} others 350 ns; {outside} repetitions are outside their \
             experiment's usual placement after measuring again; ",
            trips.len() - near
        )),
        "{placements}"
    );
    assert!(
        placements.ends_with(" noisy cells that call a server have repetitions in more than one placement."),
        "{placements}"
    );
    check_report(&r);
}
