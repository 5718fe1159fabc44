//! `callbench run`: suites of experiments measured fairly — servers started pinned to their own
//! CPUs and verified first, interleaved repetitions, both sides' CPU, results.json as cells finish.

pub mod cache_distance;
pub mod cell;
pub mod client_metrics;
pub mod cluster;
pub mod environment;
pub mod execute;
pub mod experiment;
pub mod fleet;
pub mod idle_hold;
pub mod interference;
pub mod measure;
pub mod mechanism;
pub mod network;
pub mod options;
pub mod outside;
pub mod peer;
pub mod pinning;
pub mod placement_gate;
pub mod plan;
pub mod processing;
pub mod progress;
pub mod python;
pub mod record;
pub mod repetition;
pub mod seed_table;
pub mod slow_spells;
pub mod steadiness;
pub mod store;
pub mod suite;
mod sysfs;
pub mod terminal;
pub mod wakeup;
