//! The machine a benchmark runs on, and its noise. A measurement is only as good as the quiet
//! around it: this crate pins threads to CPUs ([`pinning`]), reads a process group's CPU time and
//! memory ([`process_group`]), tells what else ran on the pinned CPUs during a measurement
//! ([`interference`], [`other_processes`]), and probes how steady the machine is before a run
//! ([`steadiness`]: a busy loop's spread, the wake-up round trip ([`wakeup`]), the cache line's
//! round trip between two CPUs ([`cache_distance`]) and whether idle CPUs are kept awake
//! ([`idle_hold`])). The runner decides what to do with a disturbed measurement; this crate only
//! says what happened.

pub mod cache_distance;
pub mod idle_hold;
pub mod interference;
pub mod other_processes;
pub mod pinning;
pub mod process_group;
pub mod steadiness;
pub mod sysfs;
pub mod wakeup;
