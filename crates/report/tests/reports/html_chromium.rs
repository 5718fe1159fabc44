//! The HTML report in a real browser: headless Chromium parses it (its DOM has every chart, bar,
//! whisker and line we wrote) and paints it (the screenshot is not blank and shows the series'
//! colours). Chromium is required: `scripts/setup` installs it; without it this test fails.

use crate::common;

use callbench_report::write::write_reports;
use common::{chromium, png, TempDir};

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn chromium_renders_the_charts_of_the_report() {
    let r = common::fixture();
    let tmp = TempDir::new("chromium");
    write_reports(&r, &tmp.0).unwrap();
    let path = tmp.0.join("report.html");
    let written = std::fs::read_to_string(&path).unwrap();
    let url = format!("file://{}", path.display());

    let dom = chromium::run(&tmp.0, &["--dump-dom".into(), url.clone()]).stdout;
    assert!(dom.contains("<h1>callbench: fixture</h1>"), "the DOM of the report:\n{}", &dom[..dom.len().min(2000)]);
    let charts = count(&written, "<svg class=\"chart\"");
    assert!(charts >= 20, "{charts} charts written");
    for needle in [
        "<svg class=\"chart\"",
        "class=\"bar\"",
        "class=\"whisker\"",
        "<polyline class=\"series\"",
        "class=\"point\"",
        "class=\"missing\"",
        "class=\"legend\"",
    ] {
        let (in_file, in_dom) = (count(&written, needle), count(&dom, needle));
        assert!(in_file > 0, "{needle} not written");
        assert_eq!(in_dom, in_file, "{needle}: {in_file} written, {in_dom} in Chromium's DOM");
    }
    let spectra = r.cells.iter().filter(|c| c.spectrum.len() >= 2).count();
    assert!(count(&dom, "<polyline class=\"series\"") >= spectra, "one spectrum line per cell");
    assert_eq!(count(&dom, "<script"), 0);

    let shot = tmp.0.join("report.png");
    chromium::run(&tmp.0, &[format!("--screenshot={}", shot.display()), "--window-size=1280,4000".into(), url]);
    let bytes = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(bytes.len() > 100_000, "the screenshot is {} bytes: blank?", bytes.len());
    let image = png::decode(&bytes).unwrap();
    assert_eq!((image.width, image.height), (1280, 4000));
    let white = image.pixels.iter().filter(|p| p.iter().all(|c| *c >= 245)).count();
    let inked = image.pixels.len() - white;
    assert!(inked > image.pixels.len() / 50, "only {inked} non-white pixels");
    // The first experiment's bars are painted in the first series' colours.
    for colour in &callbench_report::svg::COLOURS[..3] {
        let rgb = hex(colour);
        let n = image.pixels.iter().filter(|p| p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) <= 6)).count();
        assert!(n > 500, "{n} pixels of {colour} in the screenshot");
    }
    drop(tmp);
}

fn hex(colour: &str) -> [u8; 3] {
    let v = u32::from_str_radix(colour.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[test]
fn no_chromium_process_outlives_the_test() {
    let tmp = TempDir::new("chromium-leftovers");
    std::fs::write(tmp.0.join("page.html"), "<!DOCTYPE html><p>hello</p>").unwrap();
    let url = format!("file://{}", tmp.0.join("page.html").display());
    let dom = chromium::run(&tmp.0, &["--dump-dom".into(), url]).stdout;
    assert!(dom.contains("<p>hello</p>"), "{dom}");
    assert!(chromium::strays(&tmp.0).is_empty(), "chromium processes left: {:?}", chromium::strays(&tmp.0));
}
