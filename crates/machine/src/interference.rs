//! What else used the CPUs the client and the server were pinned to during a measured window:
//! every other process's CPU time by the CPU it ran on ([`other_processes`]; where /proc does not show
//! the whole machine, /proc/stat's per-CPU busy time minus the CPU time of callbench and of the
//! server themselves), the hypervisor's steal, the clock where cpufreq is readable, and the
//! server's context switches. A repetition measured while others took a meaningful share of its
//! cores is `disturbed`.

use crate::other_processes::{self, OtherProcesses};
use crate::process_group::{self, CpuReading};
use callbench_results::model::Interference;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Another process using more than this share of a side's pinned CPUs disturbs the measurement:
/// far above what a quiet machine shows (kernel threads; the RSS sampler's wake-ups are ours),
/// far below what a busy loop sharing the server's core takes
/// (bench/results/code-notes-2026-12.md#other-processes-on-the-pinned-cpus).
pub const OTHER_LIMIT: f64 = 0.10;
/// More than this share of the pinned CPUs' time stolen by the hypervisor disturbs it too.
pub const STEAL_LIMIT: f64 = 0.05;

/// One CPU's counters from /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    /// user + nice + system: time spent running tasks (irq and softirq time is not any task's).
    pub busy: u64,
    pub steal: u64,
    /// Every column but guest ones (they are already inside user).
    pub total: u64,
}

/// Parses the `cpuN` lines of /proc/stat.
pub fn parse_stat(text: &str) -> Vec<(usize, CpuTicks)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal guest guest_nice
            let ticks = CpuTicks { busy: at(0) + at(1) + at(2), steal: at(7), total: (0..8).map(at).sum() };
            Some((cpu, ticks))
        })
        .collect()
}

fn read_stat() -> Vec<(usize, CpuTicks)> {
    std::fs::read_to_string("/proc/stat").map(|t| parse_stat(&t)).unwrap_or_default()
}

/// Sum of the counters of `cpus`.
fn ticks_of(stat: &[(usize, CpuTicks)], cpus: &[usize]) -> CpuTicks {
    stat.iter().filter(|(c, _)| cpus.contains(c)).fold(CpuTicks::default(), |a, (_, t)| CpuTicks {
        busy: a.busy + t.busy,
        steal: a.steal + t.steal,
        total: a.total + t.total,
    })
}

/// The state of the machine at one edge of a window.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub at: Option<Instant>,
    stat: Vec<(usize, CpuTicks)>,
    client: CpuReading,
    /// CPU time of this process's children that ended and were reaped: a Python caller or a
    /// processing program measured as a process of its own.
    children: Duration,
    server: CpuReading,
    /// (voluntary, involuntary) context switches of the server's threads.
    switches: Option<(u64, u64)>,
    mhz: Option<f64>,
    /// Every other process's CPU time, read at its own moment (see [`Snapshot::with_others`]).
    others: Option<Arc<OtherProcesses>>,
}

/// Reads the machine now: every CPU's counters, this process's CPU, the server's (`server_pids`),
/// and every other process's. Reading every process takes about a millisecond: not for the edge
/// of a window calls are measured in (see [`snapshot_without_others`]).
pub fn snapshot(server_pids: &[i32]) -> Snapshot {
    Snapshot { others: others_now(server_pids), ..snapshot_without_others(server_pids) }
}

/// Every process's CPU time but this one's and the server's (`server_pids`), read now: what a
/// window judges other processes from when it opens (see [`Snapshot::with_others`]).
pub fn others_now(server_pids: &[i32]) -> Option<Arc<OtherProcesses>> {
    let mut ours = vec![std::process::id() as i32];
    ours.extend_from_slice(server_pids);
    other_processes::read(&ours).map(Arc::new)
}

/// [`snapshot`] without the other processes: quick enough for the instant a measured window opens.
pub fn snapshot_without_others(server_pids: &[i32]) -> Snapshot {
    Snapshot {
        at: Some(Instant::now()),
        stat: read_stat(),
        client: process_group::read_cpu(&[std::process::id() as i32]),
        children: children_cpu(),
        server: process_group::read_cpu(server_pids),
        switches: (!server_pids.is_empty()).then(|| context_switches(server_pids)),
        mhz: mean_mhz(),
        others: None,
    }
}

impl Snapshot {
    /// The server's CPU time as read at this snapshot.
    pub fn server_cpu(&self) -> CpuReading {
        self.server
    }

    /// This snapshot with the other processes as read earlier ([`others_now`]): a window then
    /// judges other processes from then on (before the run started) while the rest of its figures
    /// start with the window.
    pub fn with_others(self, others: Option<Arc<OtherProcesses>>) -> Snapshot {
        Snapshot { others, ..self }
    }
}

/// The client and server CPU sets a window is judged on.
#[derive(Debug, Clone)]
pub struct Sides<'a> {
    pub client: &'a [usize],
    /// Empty for an in-process cell: no server side to judge.
    pub server: &'a [usize],
}

/// The fewest /proc/stat ticks a window must span for its shares to be figures: under 20 a share
/// moves by 5% or more with one tick counted or not (a 4 ms window reads 0% or 100% of a busy
/// core, by where the tick falls).
pub const MIN_WINDOW_TICKS: u32 = 20;

/// One /proc/stat tick on this machine.
fn tick() -> Duration {
    Duration::from_nanos(1_000_000_000 / process_group::ticks_per_second())
}

/// [`MIN_WINDOW_TICKS`] as a time.
pub fn shortest_window() -> Duration {
    tick() * MIN_WINDOW_TICKS
}

/// What happened between two snapshots, or None for a window too short to tell (see
/// [`MIN_WINDOW_TICKS`]); `calls` scales the context switches.
pub fn between(a: &Snapshot, b: &Snapshot, sides: &Sides, calls: u64) -> Option<Interference> {
    let span = b.at?.checked_duration_since(a.at?)?;
    let tick = tick();
    if span < tick * MIN_WINDOW_TICKS || a.stat.is_empty() {
        return None;
    }
    let stat_other = |cpus: &[usize], own: Duration| -> f64 {
        if cpus.is_empty() {
            return 0.0;
        }
        let busy = ticks_of(&b.stat, cpus).busy.saturating_sub(ticks_of(&a.stat, cpus).busy);
        let busy = tick * busy as u32;
        let capacity = span.as_secs_f64() * cpus.len() as f64;
        (busy.saturating_sub(own).as_secs_f64() / capacity).clamp(0.0, 1.0)
    };
    let client_own = process_group::cpu_between(&a.client, &b.client) + b.children.saturating_sub(a.children);
    let server_own = process_group::cpu_between(&a.server, &b.server);
    // Other processes' own CPU time where every process is visible, over the span they were read in.
    let processes = match (&a.others, &b.others) {
        (Some(x), Some(y)) => y.at.checked_duration_since(x.at).map(|span| (x, y, span)),
        _ => None,
    };
    let other = |cpus: &[usize], own: Duration| -> f64 {
        match processes {
            Some((x, y, span)) if !cpus.is_empty() => {
                let capacity = span.as_secs_f64() * cpus.len() as f64;
                (other_processes::used_between(x, y, cpus).as_secs_f64() / capacity).clamp(0.0, 1.0)
            }
            // No CPUs on a side: stat_other says 0.
            _ => stat_other(cpus, own),
        }
    };
    let pinned: Vec<usize> = sides.client.iter().chain(sides.server).copied().collect();
    let (ta, tb) = (ticks_of(&a.stat, &pinned), ticks_of(&b.stat, &pinned));
    let total = tb.total.saturating_sub(ta.total);
    let steal = if total > 0 { tb.steal.saturating_sub(ta.steal) as f64 / total as f64 } else { 0.0 };
    let per_call = |x: u64| x as f64 / calls.max(1) as f64;
    let switches = match (a.switches, b.switches) {
        (Some(sa), Some(sb)) => Some((per_call(sb.0.saturating_sub(sa.0)), per_call(sb.1.saturating_sub(sa.1)))),
        _ => None,
    };
    Some(Interference {
        client_cpus_other: other(sides.client, client_own),
        server_cpus_other: other(sides.server, server_own),
        steal,
        cpu_mhz: match (a.mhz, b.mhz) {
            (Some(x), Some(y)) => Some((x + y) / 2.0),
            _ => None,
        },
        server_voluntary_switches_per_call: switches.map(|s| s.0),
        server_involuntary_switches_per_call: switches.map(|s| s.1),
    })
}

/// Why `i` disturbed its window, with the figures, or None when it did not.
pub fn disturbed(i: &Interference) -> Option<String> {
    let mut why = Vec::new();
    if i.client_cpus_other > OTHER_LIMIT {
        why.push(format!("{:.0}% of the client CPUs used by other processes", i.client_cpus_other * 100.0));
    }
    if i.server_cpus_other > OTHER_LIMIT {
        why.push(format!("{:.0}% of the server CPUs used by other processes", i.server_cpus_other * 100.0));
    }
    if i.steal > STEAL_LIMIT {
        why.push(format!("{:.0}% of the pinned CPUs' time stolen by the hypervisor", i.steal * 100.0));
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The share of the pinned CPUs' time the hypervisor may steal from a repetition before its
/// `headline` is disturbed: [`STEAL_LIMIT`], or for a latency percentile p half the share of calls
/// above it, (1 − p) / 2 (0.5% for a p99). A stall holds up the calls due during it and, while the
/// backlog drains, about as many again at half load: stolen time above that share reaches past the
/// percentile; the repetitions above that share had p99s several times the others'
/// (bench/results/methodology-2026-11.md#a-tail-percentile).
pub fn steal_limit(headline: &str) -> f64 {
    let percentile =
        headline.strip_prefix("latency_p").and_then(|h| h.strip_suffix("_us")).and_then(|p| p.parse::<f64>().ok());
    match percentile {
        Some(p) if (0.0..100.0).contains(&p) => ((1.0 - p / 100.0) / 2.0).min(STEAL_LIMIT),
        _ => STEAL_LIMIT,
    }
}

/// Why a repetition of an experiment whose headline is a tail percentile was disturbed, beyond
/// what [`disturbed`] already says, or None (see [`steal_limit`]). `spins`: the client is the
/// engine's one thread spinning between calls (open loop, calls due less than 2 ms apart), so it
/// runs the whole window unless something stops it; the share it did not run is time the machine
/// took. On a VM that share catches stalls the steal counter does not
/// (bench/results/methodology-2026-11.md#a-tail-percentile).
pub fn tail_disturbed(i: &Interference, client_cpu_cores: f64, spins: bool, headline: &str) -> Option<String> {
    let limit = steal_limit(headline);
    if limit >= STEAL_LIMIT {
        return None;
    }
    let moves = || {
        let figure = headline.trim_start_matches("latency_").trim_end_matches("_us");
        format!("more than {:.1}% moves a {figure}", limit * 100.0)
    };
    let stopped = 1.0 - client_cpu_cores;
    if i.steal > limit {
        Some(format!("{:.1}% of the pinned CPUs' time stolen by the hypervisor ({})", i.steal * 100.0, moves()))
    } else if spins && stopped > limit {
        Some(format!(
            "the spinning client ran {:.1}% of the window: the machine stopped it {:.1}% of the time ({})",
            client_cpu_cores * 100.0,
            stopped * 100.0,
            moves()
        ))
    } else {
        None
    }
}

/// User + system time of the children this process has reaped.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// A repetition whose CPU per call, on a side that does the same work for every call, exceeds
/// the cell's median by more than this ran on a slower machine: a VM's slow spells, with no other
/// process on the CPUs and no steal counted, raise a side's CPU per call at once, by more than this
/// (bench/results/methodology-2026-11.md#slow-spells,
/// bench/results/code-notes-2026-12.md#slow-spells-and-cpu-per-call).
pub const SLOW_LIMIT: f64 = 0.10;

/// The repetitions whose `side`'s CPU per call rose above the cell's median by more than
/// `SLOW_LIMIT`, each with how far above (a share) and the reason.
pub fn slow_runs(side: &str, cpu_us_per_call: &[f64]) -> Vec<(usize, f64, String)> {
    let Some(median) = median_of(cpu_us_per_call) else { return vec![] };
    cpu_us_per_call
        .iter()
        .enumerate()
        .filter(|(_, v)| median > 0.0 && **v > median * (1.0 + SLOW_LIMIT))
        .map(|(i, v)| {
            let above = v / median - 1.0;
            let why = format!(
                "the {side}'s CPU per call was {:.0}% above the cell's median: the machine ran slower",
                above * 100.0
            );
            (i, above, why)
        })
        .collect()
}

/// The median of the finite values, when there are at least three.
pub fn median_of(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.len() < 3 {
        return None;
    }
    sorted.sort_by(|a, b| a.total_cmp(b));
    Some(sorted[sorted.len() / 2])
}

/// "2 of 5 repetitions disturbed: 48% of the server CPUs used by other processes" (the worst).
pub fn disturbed_note(runs: &[callbench_results::model::RunMetrics]) -> Option<String> {
    let disturbed: Vec<&String> = runs.iter().filter_map(|r| r.disturbed.as_ref()).collect();
    let worst = runs
        .iter()
        .filter(|r| r.disturbed.is_some())
        .max_by(|a, b| other_share(a).total_cmp(&other_share(b)))
        .and_then(|r| r.disturbed.as_ref())?;
    Some(format!("{} of {} repetitions disturbed: {worst}", disturbed.len(), runs.len()))
}

fn other_share(r: &callbench_results::model::RunMetrics) -> f64 {
    r.interference.map(|i| i.client_cpus_other.max(i.server_cpus_other).max(i.steal)).unwrap_or(0.0)
}

/// Voluntary and involuntary context switches of every thread of `pids`.
fn context_switches(pids: &[i32]) -> (u64, u64) {
    let mut total = (0, 0);
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for task in tasks.flatten() {
            let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
            for line in status.lines() {
                let value = |l: &str| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                if line.starts_with("voluntary_ctxt_switches:") {
                    total.0 += value(line);
                } else if line.starts_with("nonvoluntary_ctxt_switches:") {
                    total.1 += value(line);
                }
            }
        }
    }
    total
}

/// The mean current clock of all CPUs in MHz, from cpufreq (None where the kernel has none, as
/// in most VMs).
pub fn mean_mhz() -> Option<f64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu").ok()?;
    let khz: Vec<f64> = dir
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("cpu") && n[3..].parse::<u32>().is_ok()))
        .filter_map(|e| std::fs::read_to_string(e.path().join("cpufreq/scaling_cur_freq")).ok()?.trim().parse().ok())
        .collect();
    (!khz.is_empty()).then(|| khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  25717 0 7611 66734 451 0 111 13 0 0\n\
        cpu0 11798 0 3180 35289 55 0 18 3 0 0\n\
        cpu1 13918 5 4431 31445 395 7 92 10 0 0\n\
        intr 663307 0 0\n";

    #[test]
    fn reads_each_cpu_line_and_skips_the_total() {
        let stat = parse_stat(STAT);
        assert_eq!(stat.len(), 2);
        assert_eq!(stat[1], (1, CpuTicks { busy: 13918 + 5 + 4431, steal: 10, total: 50303 }));
        assert_eq!(ticks_of(&stat, &[0, 1]).steal, 13);
    }

    fn window(other_client: f64, other_server: f64, steal: f64) -> Interference {
        Interference { client_cpus_other: other_client, server_cpus_other: other_server, steal, ..Default::default() }
    }

    #[test]
    fn a_busy_core_or_steal_disturbs_with_the_figure() {
        assert_eq!(disturbed(&window(0.01, 0.02, 0.0)), None);
        assert_eq!(disturbed(&window(0.0, 0.48, 0.0)).unwrap(), "48% of the server CPUs used by other processes");
        assert!(disturbed(&window(0.0, 0.0, 0.2)).unwrap().contains("20% of the pinned CPUs' time stolen"));
    }

    #[test]
    fn a_tail_percentile_is_disturbed_by_less_steal_than_other_figures() {
        assert_eq!(steal_limit("throughput_per_s"), STEAL_LIMIT);
        assert_eq!(steal_limit("latency_p50_us"), STEAL_LIMIT);
        assert!((steal_limit("latency_p99_us") - 0.005).abs() < 1e-12);
        assert!((steal_limit("latency_p99.9_us") - 0.0005).abs() < 1e-12);
        // A repetition of fixed-rate/students/rust-actix: 1.1% stolen, its p99 far above the others'
        // (bench/results/code-notes-2026-12.md#real-repetitions-in-the-interference-tests).
        let p99 = "latency_p99_us";
        let why = tail_disturbed(&window(0.0, 0.0, 0.011), 0.994, true, p99).unwrap();
        assert_eq!(why, "1.1% of the pinned CPUs' time stolen by the hypervisor (more than 0.5% moves a p99)");
        assert_eq!(tail_disturbed(&window(0.0, 0.0, 0.004), 0.999, true, p99), None);
        assert_eq!(tail_disturbed(&window(0.0, 0.0, 0.04), 0.9, true, "throughput_per_s"), None);
        // A repetition of fixed-rate/students/rust-axum: no steal counted, the client ran 98.3%, its
        // p99 far above the others'.
        let why = tail_disturbed(&window(0.0, 0.0, 0.0), 0.983, true, p99).unwrap();
        assert_eq!(why, "the spinning client ran 98.3% of the window: the machine stopped it 1.7% of the time (more than 0.5% moves a p99)");
        assert_eq!(
            tail_disturbed(&window(0.0, 0.0, 0.0), 0.983, false, p99),
            None,
            "a client that waits is not stopped"
        );
    }

    #[test]
    fn a_repetition_whose_fixed_work_took_longer_ran_on_a_slow_machine() {
        // sequential/auth/rust-actix's repetitions: the two slow ones are the two whose client CPU
        // per call rose (bench/results/code-notes-2026-12.md#real-repetitions-in-the-interference-tests).
        let cpu = [24.0, 26.4, 23.4, 23.2, 23.7, 23.8, 25.2, 23.1, 29.0];
        let slow = slow_runs("client", &cpu);
        assert_eq!(slow.iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 8]);
        assert!(slow[1].2.starts_with("the client's CPU per call was 22% above"), "{}", slow[1].2);
        assert!((slow[1].1 - 29.0 / 23.8 + 1.0).abs() < 1e-9);
        // closed-50/students/rust-actix: the server's CPU per call, slow rounds among them.
        let server = [14.84, 12.16, 9.53, 9.88, 9.11, 13.45, 9.20, 8.48, 8.72];
        let slow = slow_runs("server", &server);
        assert_eq!(slow.iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 1, 5]);
        assert!(slow[0].2.starts_with("the server's CPU per call was 56% above"), "{}", slow[0].2);
        assert!(slow_runs("client", &[10.0, 30.0]).is_empty(), "too few to have a median");
    }

    /// Pins the calling thread (and children it spawns from now on) to `cpu`.
    fn pin_this_thread(cpu: usize) {
        // SAFETY: a zeroed cpu_set_t is valid; cpu 0 always exists.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut set) };
        assert_eq!(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) }, 0);
    }

    /// The CPU time of the calling thread (its own clock: it counts only while the thread runs).
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) }, 0);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// The tests that spin or start a busy process on CPU 0 take turns.
    static CPU0: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_window_shorter_than_twenty_ticks_is_not_judged() {
        let (a, b) = (snapshot(&[]), snapshot(&[]));
        assert!(between(&a, &b, &Sides { client: &[0], server: &[] }, 1).is_none());
    }

    #[test]
    fn our_own_cpu_time_is_not_counted_as_other() {
        let _turn = CPU0.lock().unwrap_or_else(|p| p.into_inner());
        std::thread::spawn(|| {
            pin_this_thread(0);
            // /proc/stat's way (where /proc does not show every process).
            let a = snapshot_without_others(&[]);
            // Spin until this thread has had 300 ms of CPU 0, however many others share it: a
            // wall-clock spin gets a fraction of the core on a busy machine.
            let (mine, deadline) = (thread_cpu(), Instant::now() + Duration::from_secs(60));
            let mut x = 0u64;
            while thread_cpu() - mine < Duration::from_millis(300) {
                assert!(Instant::now() < deadline, "300 ms of CPU 0 not had in 60 s");
                x = x.wrapping_add(std::hint::black_box(1));
            }
            let b = snapshot_without_others(&[]);
            let i = between(&a, &b, &Sides { client: &[0], server: &[] }, 1).unwrap();
            let span = b.at.unwrap().duration_since(a.at.unwrap()).as_secs_f64();
            let tick = 1.0 / process_group::ticks_per_second() as f64;
            let busy = (ticks_of(&b.stat, &[0]).busy - ticks_of(&a.stat, &[0]).busy) as f64 * tick / span;
            let own_cpu = process_group::cpu_between(&a.client, &b.client);
            let own = own_cpu.as_secs_f64() / span;
            // We ran on CPU 0 for 300 ms of the window, and that share is not "other" (whatever
            // else the machine was doing meanwhile).
            assert!(own_cpu >= Duration::from_millis(250), "own {own_cpu:?} {x}");
            assert!(i.client_cpus_other <= (busy - own).max(0.0) + 0.05, "{i:?} busy {busy} own {own}");
            assert_eq!(i.server_cpus_other, 0.0);
        })
        .join()
        .unwrap();
    }

    /// A child killed when dropped, also when an assertion fails first.
    struct Busy(std::process::Child);

    impl Drop for Busy {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn a_busy_process_on_a_pinned_cpu_is_other() {
        let _turn = CPU0.lock().unwrap_or_else(|p| p.into_inner());
        std::thread::spawn(|| {
            pin_this_thread(0); // the child inherits the affinity
            let busy = Busy(std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap());
            let pid = busy.0.id() as i32;
            // Wait until it has run (its own CPU time grows), so the window sees it at work.
            let started = process_group::read_cpu(&[pid]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while process_group::cpu_between(&started, &process_group::read_cpu(&[pid])) < Duration::from_millis(20) {
                assert!(Instant::now() < deadline, "the busy child never ran");
                std::thread::yield_now();
            }
            // /proc/stat's way (where /proc does not show every process).
            let (a, child_a) = (snapshot_without_others(&[]), process_group::read_cpu(&[pid]));
            std::thread::sleep(Duration::from_millis(400)); // the window measured, not a wait for a state
            let (mut b, child_b) = (snapshot_without_others(&[]), process_group::read_cpu(&[pid]));
            drop(busy);
            // Subtracting this process's CPU time from CPU 0's assumes the process is pinned to the client
            // CPUs, as `callbench run` pins itself; here other tests of this binary run beside this one
            // on any CPU, and their time elsewhere would bring "other" far below the child's share
            // (bench/results/code-notes-2026-12.md#our-threads-in-a-busy-window). So this window
            // subtracts none of it.
            (b.client, b.children) = (a.client, a.children);
            let i = between(&a, &b, &Sides { client: &[0], server: &[] }, 1).unwrap();
            // However much of CPU 0 the child got (other processes and the hypervisor share it on a busy
            // machine), all of it is "other". 0.05: a clock tick (10 ms) at each end of the 400 ms window.
            let span = b.at.unwrap().duration_since(a.at.unwrap()).as_secs_f64();
            let child = process_group::cpu_between(&child_a, &child_b).as_secs_f64() / span;
            assert!(child > 0.05, "the busy child hardly ran: {child}");
            assert!(i.client_cpus_other >= child - 0.05, "{i:?}, the child alone used {child}");
            if child > OTHER_LIMIT + 0.05 {
                assert!(disturbed(&i).is_some(), "{i:?}");
            }
        })
        .join()
        .unwrap();
    }

    /// A busy process that is not callbench's (its parent gone, as a stray job's), killed when dropped.
    struct Stray(i32);

    impl Drop for Stray {
        fn drop(&mut self) {
            // SAFETY: kill has no memory effects; the pid is the stray's, which nothing else reaps.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }

    #[test]
    fn another_process_on_a_pinned_cpu_is_other_by_its_own_cpu_time() {
        if other_processes::read(&[]).is_none() {
            eprintln!("this /proc does not show the whole machine: /proc/stat's way is tested above");
            return;
        }
        let _turn = CPU0.lock().unwrap_or_else(|p| p.into_inner());
        std::thread::spawn(|| {
            // The stray inherits the affinity. setsid -f forks and leaves: the busy shell is
            // nobody's child of ours. It says its pid.
            pin_this_thread(0);
            let mut setsid = std::process::Command::new("setsid")
                .args(["-f", "sh", "-c", "echo $$; exec >/dev/null; while :; do :; done"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            let said = std::io::BufReader::new(setsid.stdout.take().unwrap());
            std::io::BufRead::read_line(&mut { said }, &mut line).unwrap();
            setsid.wait().unwrap();
            let stray = Stray(line.trim().parse().unwrap());
            let started = process_group::read_cpu(&[stray.0]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while process_group::cpu_between(&started, &process_group::read_cpu(&[stray.0])) < Duration::from_millis(20)
            {
                assert!(Instant::now() < deadline, "the stray never ran");
                std::thread::yield_now();
            }
            let (a, stray_a) = (snapshot(&[]), process_group::read_cpu(&[stray.0]));
            std::thread::sleep(Duration::from_millis(400)); // the window measured, not a wait for a state
            let (stray_b, b) = (process_group::read_cpu(&[stray.0]), snapshot(&[]));
            let i = between(&a, &b, &Sides { client: &[0], server: &[1] }, 1).unwrap();
            // All the stray ran between the two readings is other on CPU 0, within a clock tick at
            // each end (its utime + stime are counted in ticks).
            let (x, y) = (a.others.as_ref().unwrap(), b.others.as_ref().unwrap());
            let ran = process_group::cpu_between(&stray_a, &stray_b);
            let ticks = Duration::from_nanos(2_000_000_000 / process_group::ticks_per_second());
            assert!(other_processes::used_between(x, y, &[0]) + ticks >= ran, "{ran:?}");
            let span = y.at.duration_since(x.at).as_secs_f64();
            let share = ran.as_secs_f64() / span;
            assert!(share > 0.05, "the stray hardly ran: {share}");
            let slack = ticks.as_secs_f64() / span;
            assert!(i.client_cpus_other + slack >= share, "{i:?}, the stray alone used {share}");
            if share > OTHER_LIMIT {
                assert!(disturbed(&i).is_some(), "{i:?}");
            }
        })
        .join()
        .unwrap();
    }
}
