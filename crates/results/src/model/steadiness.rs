//! The machine's side of `results.json`: how steady its pinned CPUs were before the suite, how
//! long they take to wake each other, and whether idle CPUs were held awake.

use serde::{Deserialize, Serialize};

/// What could make this machine's timings unstable, probed before a suite (in the spirit of
/// pyperf's `system show`), and how unstable a fixed CPU loop is on each pinned CPU right now.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Steadiness {
    /// Plain sentences: a governor other than `performance`, turbo on, a busy pinned CPU, steal...
    pub warnings: Vec<String>,
    /// One entry per CPU the client or the server is pinned to.
    pub cpus: Vec<CpuSteadiness>,
    /// The largest relative spread of the fixed loop over the pinned CPUs that no other process
    /// kept busy while probed (the smallest when all were): the share every timing interval is
    /// widened to at least (see `SuiteRecord::interval_floor`).
    pub loop_spread: f64,
    /// How long the first client CPU and the first server CPU take to wake each other (None in
    /// files written before it existed, or when a CPU could not be pinned).
    #[serde(default)]
    pub wakeup: Option<Wakeup>,
    /// Whether idle CPUs were kept polling through the run (None in files written before it
    /// existed).
    #[serde(default)]
    pub idle: Option<IdleHold>,
}

/// `/dev/cpu_dma_latency` held at 0 for the run, so that no pinned CPU sleeps between calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleHold {
    pub held: bool,
    /// The kernel's cpuidle driver (e.g. intel_idle, acpi_idle, haltpoll), when it exposes one.
    pub driver: Option<String>,
    /// Why it was not held: `--allow-cpu-idle`, or the error opening or writing the device.
    pub why_not: Option<String>,
}

/// One byte over a Unix socket to a thread pinned on `to` and back, timed from `from`, beside the
/// same round trip with both ends on `from`: what one call at a time pays for the two CPUs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wakeup {
    pub from: usize,
    pub to: usize,
    pub across_p50_us: f64,
    pub across_p90_us: f64,
    pub within_p50_us: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSteadiness {
    pub cpu: usize,
    /// Median time of one pass of the fixed loop, in nanoseconds.
    pub loop_ns: f64,
    /// (p90 − p10) / median of the passes' times.
    pub spread: f64,
    /// Share of this CPU's time used by other processes while the probe ran (0–1).
    pub busy_other: f64,
    /// cpufreq's governor, when the kernel exposes one.
    pub governor: Option<String>,
}
