//! Where a suite is and how long it has left, on stderr: one line redrawn on a terminal, a line
//! per round otherwise (a log file or CI shows progress without a wall of lines). The time left
//! is each remaining repetition's own measured time once the cell has run once, and before that
//! its planned time (duration + warm-up, or calls at the pace measured so far) scaled by how far
//! the measured repetitions ran over their plans (server start-up, verify, reruns).

use crate::plan::{self, CellPlan};
use crate::suite::Suite;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A guess for a repetition timed by a number of calls or iterations before any has run: the slow
/// end of a loopback call one at a time (bench/results/code-notes-2026-12.md#a-loopback-call-one-at-a-time).
const SECONDS_PER_CALL_GUESS: f64 = 100e-6;

struct CellTime {
    planned: f64,
    left: usize,
    measured: Option<f64>,
}

pub struct Progress {
    started: Instant,
    cells: BTreeMap<String, CellTime>,
    planned_done: f64,
    measured_done: f64,
    terminal: bool,
    quiet: bool,
}

impl Progress {
    /// Every cell of every experiment of `suite`, `repetitions` overriding the suite's.
    pub fn new(suite: &Suite, repetitions: Option<usize>, quiet: bool) -> Progress {
        let mut cells = BTreeMap::new();
        for e in &suite.experiments {
            for p in plan::cells(suite, e).unwrap_or_default() {
                let reps = repetitions.unwrap_or(p.repetitions);
                cells.insert(p.id.clone(), CellTime { planned: planned_seconds(&p), left: reps, measured: None });
                if p.in_warm_up_round() {
                    let planned = planned_seconds(&p.warm_up_round());
                    cells.insert(warm_up_round_key(&p.id), CellTime { planned, left: 1, measured: None });
                }
                let warmup = e.server_warmup.as_deref().and_then(|w| callbench_load::parse::duration(w).ok());
                if let (Some(w), true) = (warmup, p.in_warm_up_round()) {
                    let planned = w.as_secs_f64();
                    cells.insert(
                        server_warmup_key(&e.id, &p.server.label()),
                        CellTime { planned, left: 1, measured: None },
                    );
                }
            }
        }
        Progress {
            started: Instant::now(),
            cells,
            planned_done: 0.0,
            measured_done: 0.0,
            terminal: std::io::stderr().is_terminal(),
            quiet,
        }
    }

    /// One repetition (or warm-up run) of `cell` took `took`.
    pub fn done(&mut self, cell: &str, took: Duration) {
        if let Some(c) = self.cells.get_mut(cell) {
            c.left = c.left.saturating_sub(1);
            c.measured = Some(took.as_secs_f64());
            self.planned_done += c.planned;
            self.measured_done += took.as_secs_f64();
        }
    }

    /// `repetitions` more of `cell` are to run: those measured again after an experiment's rounds.
    pub fn expect(&mut self, cell: &str, repetitions: usize) {
        if let Some(c) = self.cells.get_mut(cell) {
            c.left = repetitions;
        }
    }

    /// Seconds of work left, as estimated now.
    pub fn seconds_left(&self) -> f64 {
        let scale =
            if self.planned_done > 0.0 { (self.measured_done / self.planned_done).clamp(0.5, 10.0) } else { 1.0 };
        self.cells.values().map(|c| c.left as f64 * c.measured.unwrap_or(c.planned * scale)).sum()
    }

    /// `sequential: round 2/5 · 1 min 10 s so far · about 1 min 30 s left`.
    pub fn line(&self, what: &str) -> String {
        format!(
            "{what} · {} so far · about {} left",
            clock(self.started.elapsed().as_secs_f64()),
            clock(self.seconds_left())
        )
    }

    /// Redraws the line on a terminal; elsewhere prints it only when `new_line` (a round starts).
    pub fn show(&self, what: &str, new_line: bool) {
        if self.quiet {
        } else if self.terminal {
            eprint!("\r{}   ", self.line(what));
        } else if new_line {
            eprintln!("{}", self.line(what));
        }
    }

    /// Ends a redrawn line before other output.
    pub fn end_line(&self) {
        if self.terminal && !self.quiet {
            eprintln!();
        }
    }
}

/// The entry of a server's `server_warmup` in an experiment, for [`Progress::done`].
pub fn server_warmup_key(experiment: &str, server: &str) -> String {
    format!("{experiment}/server-warmup/{server}")
}

/// The entry of a cell's run in its experiment's warm-up round, for [`Progress::done`]: shorter
/// than its repetitions, so timed apart from them.
pub fn warm_up_round_key(cell: &str) -> String {
    format!("{cell}/warm-up-round")
}

/// What a repetition of `p` should take: its duration and warm-up, or its calls at a guessed pace.
/// Across an emulated link every call waits at least one round trip of it (a new connection per
/// call: the TCP handshake's too), shared by the calls in flight at once.
pub(crate) fn planned_seconds(p: &CellPlan) -> f64 {
    let seconds = |d: &Option<String>| {
        d.as_deref().and_then(|t| callbench_load::parse::duration(t).ok()).map(|d| d.as_secs_f64())
    };
    let warmup = seconds(&p.fields.warmup).unwrap_or(0.0);
    let rtt = p.fields.network.as_ref().map_or(0.0, |n| n.rtt().as_secs_f64());
    let round_trips = if p.fields.new_connection_per_call == Some(true) { 2.0 } else { 1.0 };
    let per_call = (SECONDS_PER_CALL_GUESS + rtt * round_trips) / p.fields.concurrency.unwrap_or(1).max(1) as f64;
    match (seconds(&p.fields.duration), p.fields.calls.or(p.fields.iterations)) {
        (Some(d), _) => d + warmup,
        (None, Some(calls)) => calls as f64 * per_call + warmup,
        (None, None) => 1.0 + warmup,
    }
}

/// `45 s`, `3 min 05 s`, `1 h 02 min`.
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = r#"
name = "t"
repetitions = 2
[defaults]
duration = "1s"
warmup = "500ms"
[[experiment]]
id = "a"
title = "a"
servers = ["rust-actix", "inproc"]
workloads = ["students"]
"#;

    #[test]
    fn the_plan_counts_every_repetition_and_the_warm_up_round() {
        let suite = Suite::parse(SUITE).unwrap();
        let p = Progress::new(&suite, None, true);
        // rust-actix: 2 repetitions of 1.5 s and the warm-up round's 0.5 + 0.5 s; inproc: 2 of 1.5 s.
        assert_eq!(p.seconds_left(), 4.0 * 1.5 + 1.0);
        assert_eq!(Progress::new(&suite, Some(1), true).seconds_left(), 2.0 * 1.5 + 1.0);
    }

    #[test]
    fn measured_times_replace_and_scale_the_plan() {
        let suite = Suite::parse(SUITE).unwrap();
        let mut p = Progress::new(&suite, None, true);
        // The warm-up round's run is timed apart from the repetitions: twice its plan scales theirs.
        p.done(&warm_up_round_key("a/students/rust-actix"), Duration::from_secs(2));
        assert_eq!(p.seconds_left(), 2.0 * 3.0 + 2.0 * 3.0);
        p.done("a/students/rust-actix", Duration::from_secs(3));
        // rust-actix: 1 left at its measured 3 s; inproc: 2 at 1.5 s × (2 + 3) / (1 + 1.5).
        assert_eq!(p.seconds_left(), 3.0 + 2.0 * 3.0);
        p.done("a/students/inproc", Duration::from_millis(1500));
        assert_eq!(p.seconds_left(), 3.0 + 1.5);
        // Two repetitions of rust-actix to measure again after the rounds, none of inproc.
        p.expect("a/students/rust-actix", 2);
        p.expect("a/students/inproc", 0);
        assert_eq!(p.seconds_left(), 2.0 * 3.0);
    }

    #[test]
    fn calls_across_a_link_are_planned_at_a_round_trip_each() {
        let suite = Suite::parse(
            r#"
name = "t"
repetitions = 1
[defaults]
calls = 1000
network = { rtt = "14ms" }
[[experiment]]
id = "kept"
title = "kept"
servers = ["rust-actix"]
workloads = ["cars"]
[[experiment]]
id = "four"
title = "four at once"
servers = ["rust-actix"]
workloads = ["cars"]
concurrency = 4
"#,
        )
        .unwrap();
        let p = Progress::new(&suite, None, true);
        let per_call = SECONDS_PER_CALL_GUESS + 0.014;
        let planned = |id: &str| p.cells[id].planned;
        assert!((planned("kept/cars/rust-actix") - 1000.0 * per_call).abs() < 1e-9);
        assert!((planned("four/cars/rust-actix") - 1000.0 * per_call / 4.0).abs() < 1e-9);
    }

    #[test]
    fn clocks_read_as_people_write_them() {
        assert_eq!(clock(44.6), "45 s");
        assert_eq!(clock(185.0), "3 min 05 s");
        assert_eq!(clock(3720.0), "1 h 02 min");
    }
}
