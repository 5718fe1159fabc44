//! `callbench run`: suites of experiments measured fairly — servers started pinned to their own
//! CPUs and verified first, interleaved repetitions, both sides' CPU, results.json as cells finish.
//!
//! The public face: a [`suite::Suite`] parsed and its [`plan`] of cells, [`execute::prepare`] and
//! [`execute::run`] into a [`store::Store`], the table [`terminal`] prints as each experiment ends,
//! the machine [`environment`] it records, and the rules of [`slow_spells`] (which repetitions are
//! measured again), which the Python package applies too. Inside, an experiment (experiment.rs)
//! runs rounds of its cells (cell.rs); every repetition, whichever client makes its calls, goes
//! through repetition.rs.

mod again_budget;
mod cell;
mod client_metrics;
#[cfg(test)]
mod doc_figures;
pub mod endpoint;
pub mod environment;
mod error;
pub mod execute;
mod experiment;
mod fleet;
mod mechanism;
mod network;
mod options;
mod outside;
mod placement_gate;
pub mod plan;
mod progress;
mod python_env;
mod repetition;
pub mod reproductions;
mod seed_table;
pub mod slow_spells;
pub mod store;
pub mod suite;
pub mod terminal;
pub mod thresholds;

pub use error::RunError;
