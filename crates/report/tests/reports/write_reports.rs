//! report.md and report.html are written whole, beside results.json.

use crate::common;

use callbench_report::write::write_reports;

#[test]
fn both_reports_are_written_and_replaced_atomically() {
    let r = common::fixture();
    let tmp = common::TempDir::new("write");
    let dir = tmp.0.join("results");
    write_reports(&r, &dir).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(md, callbench_report::markdown::markdown(&r));
    assert_eq!(html, callbench_report::html::html(&r));

    let mut partial = r.clone();
    partial.interrupted = true;
    write_reports(&partial, &dir).unwrap();
    assert!(std::fs::read_to_string(dir.join("report.md")).unwrap().contains("**Interrupted:"));
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["report.html", "report.md"], "no temporary file is left");
}
