//! The report crate's tests: schema, Markdown, HTML (rendered by Chromium), summaries, compare, the
//! machine and tools sections (one test binary: each links the renderer and jsonschema again).

mod common;
mod compare_reports;
mod html_chromium;
mod html_report;
mod machine;
mod markdown_report;
mod schema;
mod summary;
mod tools_section;
mod write_reports;
