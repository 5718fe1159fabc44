//! callbench's results, apart from any renderer: the `results.json` model a run writes and every
//! reader loads, the statistics every figure goes through, the summaries and verdicts drawn from
//! the runs, and how a number reads. `runner` fills it; `report` renders it.

pub mod analysis;
pub mod format;
pub mod model;
pub mod placement;
pub mod pooled;
pub mod schema;
pub mod stats;
