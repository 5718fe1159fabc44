//! An experiment's emulated link: before the runs, each cell's link measured with a TCP ping-pong
//! across it (and across the bare link at RTT 0: what the link adds besides its delay); before
//! each run, the link set to the cell's spec; after it, what the forwarder did meanwhile. An
//! optional experiment whose link cannot be made (no root) is recorded as not run, with why.

use crate::store::Store;
use callbench_link::probe::ping_pong;
use callbench_link::{Link, LinkError, LinkSpec, LinkStats};
use callbench_results::model::{LinkUse, NetworkRecord, Results};

/// Round trips of the link's own measure (at RTT 0 they take microseconds) and of each cell's.
const OWN_ROUND_TRIPS: usize = 50;
const CELL_ROUND_TRIPS: usize = 10;

/// Fills the `network` record of every cell (its index in `results.cells`, and the link it runs
/// across): its spec and the round trips measured on it.
pub(crate) fn measure_links(
    link: &Link,
    cells: impl IntoIterator<Item = (usize, LinkSpec)>,
    results: &mut Results,
) -> Result<(), String> {
    link.set_spec(&LinkSpec::transparent());
    let own_rtt_us = ping_pong(link, OWN_ROUND_TRIPS)?.median_us();
    let mut measured: Vec<(LinkSpec, f64)> = Vec::new();
    for (index, spec) in cells {
        let measured_rtt_us = match measured.iter().find(|(s, _)| *s == spec) {
            Some((_, rtt)) => *rtt,
            None => {
                link.set_spec(&spec);
                let rtt = ping_pong(link, CELL_ROUND_TRIPS)?.median_us();
                measured.push((spec.clone(), rtt));
                rtt
            }
        };
        results.cells[index].network = Some(NetworkRecord {
            spec: spec.to_string(),
            rtt_us: spec.rtt().as_secs_f64() * 1e6,
            measured_rtt_us,
            own_rtt_us,
        });
    }
    link.set_spec(&LinkSpec::transparent());
    Ok(())
}

/// Sets the link to the cell's spec for a run; the stats to compare the run's end with.
pub fn before_run(link: &Link, spec: &LinkSpec) -> LinkStats {
    if link.spec() != *spec {
        link.set_spec(spec);
    }
    link.stats()
}

/// What the forwarder did since `before`.
pub fn use_since(link: &Link, before: &LinkStats) -> LinkUse {
    let d = link.stats().since(before);
    LinkUse {
        forwarder_cores: d.forwarder_busy(),
        packets: d.up.packets + d.down.packets,
        lost: d.up.lost + d.down.lost,
        queue_drops: d.up.queue_drops + d.down.queue_drops,
        lost_up: d.up.lost,
        lost_down: d.down.lost,
    }
}

/// Whether an optional experiment goes without its link rather than failing the run: not root, or
/// a kernel without what the link needs (TUN, namespaces); anything else is an error.
pub(crate) fn may_skip(why: &LinkError) -> bool {
    matches!(why, LinkError::NotPermitted(_) | LinkError::Kernel(_))
}

/// The experiment just recorded (the last one) could not make its link: it is marked not run,
/// with why (and how to include it, when root would), and the run goes on.
pub(crate) fn skip(id: &str, why: &LinkError, store: &Store, results: &mut Results) -> Result<(), crate::RunError> {
    let text = match why {
        LinkError::NotPermitted(m) => {
            let m = m.strip_suffix(": run callbench as root").unwrap_or(m);
            format!("not run: {m}; run callbench as root (sudo) to include it")
        }
        other => format!("not run: {other}"),
    };
    eprintln!("callbench: {id}: {text}");
    if let Some(e) = results.experiments.last_mut().filter(|e| e.id == id) {
        e.skipped = Some(text);
    }
    store.write_results(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_results::model::Experiment;

    #[test]
    fn an_experiment_without_its_link_is_recorded_as_not_run_with_how_to_include_it() {
        let dir = std::env::temp_dir().join(format!("callbench-skip-{}", std::process::id()));
        let store = Store::create(&dir).unwrap();
        let mut results = Results {
            schema: callbench_results::model::SCHEMA.into(),
            complete: false,
            interrupted: false,
            suite: callbench_results::model::SuiteRecord {
                name: "t".into(),
                description: String::new(),
                file: "t.toml".into(),
                text: String::new(),
                repetitions: 5,
                interval_floor: 0.0,
            },
            environment: Default::default(),
            servers: vec![],
            experiments: vec![],
            cells: vec![],
            comparisons: vec![],
            steadiness: None,
            seeds: vec![],
        };
        results.experiments.push(Experiment {
            id: "network".into(),
            title: "t".into(),
            description: String::new(),
            seeds: vec![],
            sweep: None,
            headline: "latency_p50_us".into(),
            references: vec![],
            answer: Some("Across a link".into()),
            skipped: None,
            cpus: None,
        });
        let why = LinkError::NotPermitted(
            "an emulated network needs root (it makes network namespaces and network devices): run callbench as root"
                .into(),
        );
        assert!(may_skip(&why));
        skip("network", &why, &store, &mut results).unwrap();
        let written = |dir: &std::path::Path| -> String {
            let r: Results = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
            r.experiments.last().unwrap().skipped.clone().unwrap()
        };
        assert_eq!(written(&dir), "not run: an emulated network needs root (it makes network namespaces and network devices); run callbench as root (sudo) to include it");
        // A kernel without TUN: root would not help, and the text does not say it would.
        let why = LinkError::Kernel("cannot open /dev/net/tun: No such file or directory".into());
        assert!(may_skip(&why));
        skip("network", &why, &store, &mut results).unwrap();
        assert_eq!(written(&dir), "not run: cannot open /dev/net/tun: No such file or directory");
        assert!(!may_skip(&LinkError::Invalid("rtt: not a duration".into())));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
