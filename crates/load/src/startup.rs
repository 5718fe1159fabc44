//! Whether a run held the load it was asked for: a run whose callers could not open their
//! connections, or that made no call at all, is no measurement of the server, and says why in one line.

use crate::open_files;
use callbench_engine::net::failures::ConnectFailures;
use callbench_engine::RunInfo;

/// What kept the run from its load, in one line; None when every caller that tried got a connection
/// and calls were made (or the run was cut short by Ctrl-C).
pub fn problem(info: &RunInfo, concurrency: usize, calls_made: u64) -> Option<String> {
    if info.cancelled {
        return None;
    }
    if info.callers_never_connected > 0 {
        let never = info.callers_never_connected;
        let reasons = reasons(&info.connect_failures);
        let why = if reasons.is_empty() { String::new() } else { format!(": {reasons}") };
        return Some(format!("{never} of {concurrency} callers never got a connection in the run{why}"));
    }
    // Closed loop always intends calls; open loop did when some were left not started.
    let intended = info.requested_calls.is_none() || info.not_started > 0;
    (calls_made == 0 && intended).then(|| {
        "no call was made: the run's window ended before any call started (a longer -z, or fewer callers)".to_string()
    })
}

/// The failures by reason, most frequent first, each with what to do about it.
fn reasons(f: &ConnectFailures) -> String {
    let message = || f.message.clone().unwrap_or_default();
    let files = match open_files::limits() {
        Some((soft, _)) => format!(
            "out of file descriptors (this process may hold {soft} open files: `ulimit -n`; \
             a server on this machine has a limit of its own)"
        ),
        None => "out of file descriptors (`ulimit -n`)".to_string(),
    };
    let mut parts = [
        (f.refused, "refused by the server (no listener on the port: the server closed it or stopped)".to_string()),
        (f.timed_out, "timed out (not open within --connect-timeout or --timeout)".to_string()),
        (f.open_files, files),
        (f.local_ports, "out of local ports for this address (net.ipv4.ip_local_port_range)".to_string()),
        (f.handshake, format!("handshake failed ({})", message())),
        (f.other, format!("other ({})", message())),
    ];
    parts.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let named: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, why)| format!("{n} {why}")).collect();
    named.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_engine::WireTotals;
    use std::time::Duration;

    fn info() -> RunInfo {
        RunInfo {
            elapsed: Duration::from_secs(1),
            window: Duration::from_secs(1),
            requested_calls: None,
            connections_opened: 10,
            callers_never_connected: 0,
            callers_answered: 10,
            callers_connected_by: Some(Duration::from_millis(3)),
            connect_failures: ConnectFailures::default(),
            goaways: 0,
            retries: 0,
            not_started: 0,
            wire: WireTotals::default(),
            quic: None,
            client_cpu: Duration::ZERO,
            cancelled: false,
            first_failure: None,
        }
    }

    #[test]
    fn a_run_that_held_its_callers_and_made_calls_is_fine() {
        assert_eq!(problem(&info(), 10, 500), None);
    }

    #[test]
    fn callers_without_a_connection_are_named_with_the_reasons() {
        let failures = ConnectFailures { refused: 3, open_files: 40, timed_out: 1, ..Default::default() };
        let run = RunInfo { callers_never_connected: 41, connect_failures: failures, ..info() };
        let line = problem(&run, 100, 500).unwrap();
        assert!(
            line.starts_with("41 of 100 callers never got a connection in the run: 40 out of file descriptors"),
            "{line}"
        );
        assert!(line.contains("3 refused by the server") && line.contains("1 timed out"), "{line}");
        assert!(!line.contains('\n'), "one line: {line}");
        let other = ConnectFailures { other: 2, message: Some("cannot connect: odd".into()), ..Default::default() };
        let run = RunInfo { callers_never_connected: 2, connect_failures: other, ..info() };
        assert!(problem(&run, 2, 0).unwrap().ends_with("2 other (cannot connect: odd)"));
    }

    #[test]
    fn an_empty_run_is_a_problem_unless_cancelled_or_the_schedule_intended_nothing() {
        assert!(problem(&info(), 10, 0).unwrap().starts_with("no call was made"));
        assert_eq!(problem(&RunInfo { cancelled: true, ..info() }, 10, 0), None);
        let open_nothing_due = RunInfo { requested_calls: Some(0.4), ..info() };
        assert_eq!(problem(&open_nothing_due, 10, 0), None);
        let open_behind = RunInfo { requested_calls: Some(100.0), not_started: 100, ..info() };
        assert!(problem(&open_behind, 10, 0).is_some());
    }
}
