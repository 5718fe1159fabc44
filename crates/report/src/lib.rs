//! callbench's results and reports: the `results.json` model, the statistics every figure goes
//! through, and the renderers (Markdown, self-contained HTML with SVG charts, comparisons).

pub mod analysis;
pub mod compare;
pub mod doc;
pub mod escape;
pub mod format;
pub mod html;
pub mod markdown;
pub mod model;
pub mod names;
pub mod placement;
pub mod setup;
pub mod stats;
pub mod summary;
pub mod svg;
pub mod write;
