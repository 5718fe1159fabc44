//! An experiment's emulated link: before the runs, each cell's link measured with a TCP ping-pong
//! across it (and across the bare link at RTT 0: what the link adds besides its delay); before
//! each run, the link set to the cell's spec; after it, what the forwarder did meanwhile.

use callbench_link::probe::ping_pong;
use callbench_link::{Link, LinkSpec, LinkStats};
use callbench_report::model::{LinkUse, NetworkRecord, Results};

/// Round trips of the link's own measure (at RTT 0 they take microseconds) and of each cell's.
const OWN_ROUND_TRIPS: usize = 50;
const CELL_ROUND_TRIPS: usize = 10;

/// Fills the `network` record of every cell (its index in `results.cells`, and the link it runs
/// across): its spec and the round trips measured on it.
pub fn measure_links(
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
    }
}
