//! Results into the tools teams watch: Prometheus remote write with native histograms converted
//! exactly from callbench's HDR histograms, and an OpenMetrics text file for textfile collectors.

pub mod from_results;
pub mod native;
pub mod point;
pub mod push;
pub mod remote_write;
pub mod series;
pub mod text;

pub use point::{parse_label, LabelError, Labels, Point};
pub use push::{push, PushError, Target};
