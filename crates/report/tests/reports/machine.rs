//! The interference data in both reports: a disturbed cell is marked in its table row with the
//! reason and its re-runs, and a "Machine" section near the reproducibility record gives the
//! steadiness probe's loop per CPU, its warnings and what the repetitions saw.

use crate::common;

use callbench_report::html::html;
use callbench_report::markdown::markdown;

#[test]
fn a_disturbed_cell_is_marked_with_the_figure_and_its_reruns() {
    let r = common::fixture();
    let md = markdown(&r);
    let row = md
        .lines()
        .find(|l| l.starts_with("| rust-tonic | grpc | auth |") && l.contains(" µs |"))
        .expect("the disturbed cell's row");
    assert!(row.contains(&format!("| disturbed: {}; 2 re-run |", common::DISTURBED)), "{row}");
    let page = html(&r);
    let marked = "<tr class=\"noisy\"><td>rust-tonic</td><td>grpc</td><td>auth</td>";
    assert!(page.contains(marked), "the row stands out as noisy rows do");
}

#[test]
fn the_machine_section_sits_before_the_reproducibility_record() {
    let r = common::fixture();
    let md = markdown(&r);
    let (machine, record) = (md.find("\n## Machine\n").unwrap(), md.find("\n## Reproducibility\n").unwrap());
    assert!(machine < record && machine > md.find("\n## All comparisons\n").unwrap());
    let section = &md[machine..record];
    for needle in [
        "Timing intervals are widened to at least ±0.0% of their median; a fixed CPU loop probed before the suite varied by 3.1% on the quiet pinned CPUs",
        "- CPU 0: a fixed loop took 812 µs a pass, varying by 3.1% (p10–p90); 0.2% of the CPU used by other processes while probed; governor not exposed",
        "- CPU 1: a fixed loop took 810 µs a pass, varying by 2.4% (p10–p90); 0.0% of the CPU used by other processes while probed; governor powersave",
        "- A wake-up round trip from CPU 0 to CPU 1 and back (one byte over a Unix socket) took 21.4 µs (p50; p90 27.9 µs), 11.2 µs with both ends on CPU 0: one call at a time pays such a round trip per call",
        "- Idle CPUs were kept polling through the run (/dev/cpu_dma_latency held at 0; cpuidle driver haltpoll): no call waited for a sleeping CPU to wake",
        &format!("- Warning: {}", common::GOVERNOR_WARNING),
        "0.2% (at most 36.0%) of the server CPUs",
        "2 repetitions were measured again. 1 cell kept a disturbed repetition: sequential/auth/rust-tonic.",
    ] {
        assert!(section.contains(needle), "{needle}\nnot in:\n{section}");
    }
    assert!(html(&r).contains("<h2>Machine</h2>"));
}

#[test]
fn a_run_that_let_cpus_sleep_says_why() {
    let mut r = common::fixture();
    let idle = r.steadiness.as_mut().unwrap().idle.as_mut().unwrap();
    (idle.held, idle.driver, idle.why_not) = (false, None, Some("/dev/cpu_dma_latency: Permission denied".into()));
    let md = markdown(&r);
    let line = "- Idle CPUs were free to sleep between calls (/dev/cpu_dma_latency: Permission denied): one call at a time also timed how fast this machine wakes a CPU";
    assert!(md.contains(line), "{md}");
}

#[test]
fn files_without_a_probe_or_readings_have_no_machine_section() {
    let mut r = common::fixture();
    r.steadiness = None;
    for c in &mut r.cells {
        c.disturbed = None;
        c.reruns = 0;
        for run in &mut c.runs {
            run.interference = None;
        }
    }
    assert!(!markdown(&r).contains("## Machine"));
}
