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

/// Writes into the DOM what Chromium laid out of the seed section: its elements, how many of them
/// scroll sideways (wider inside than their box), and the page's width against the window's.
const SEED_PROBE: &str = r#"<script>
addEventListener("load", () => {
  const heading = [...document.querySelectorAll("h2")].find(h => h.textContent.startsWith("The seed articles"));
  let seen = 0, wide = 0;
  for (let e = heading && heading.nextElementSibling; e && e.tagName !== "H2"; e = e.nextElementSibling) {
    for (const x of [e, ...e.querySelectorAll("*")]) {
      seen += 1;
      if (x.scrollWidth > x.clientWidth + 1 && getComputedStyle(x).overflowX !== "visible") wide += 1;
    }
  }
  document.body.dataset.seeds = [seen, wide, document.documentElement.scrollWidth, innerWidth].join(" ");
});
</script>"#;

/// The seed table at 1300 px (issue 61: six wide columns of prose scrolled sideways there): each
/// seed figure is a block of its own, and nothing of it scrolls sideways or widens the page.
#[test]
fn the_seed_table_reads_at_1300_px_without_scrolling_sideways() {
    let mut r = common::fixture();
    let prose = |what: &str| {
        format!(
            "{what}: {}",
            "a figure measured under the article's conditions, with its interval and the reason it differs; ".repeat(6)
        )
    };
    r.seeds = (0..5)
        .map(|i| callbench_results::model::SeedRow {
            seed: format!("00{i}"),
            what: format!("what seed 00{i} measured"),
            article: prose("the article"),
            here: prose("reproduced"),
            why: prose("why"),
            command: format!("reproductions/suite.py run seed00{i}-boundary"),
        })
        .collect();
    let tmp = TempDir::new("chromium-seeds");
    write_reports(&r, &tmp.0).unwrap();
    let html = std::fs::read_to_string(tmp.0.join("report.html")).unwrap();
    let probe = tmp.0.join("probe.html");
    std::fs::write(&probe, html.replace("</body>", &format!("{SEED_PROBE}</body>"))).unwrap();
    let url = format!("file://{}", probe.display());
    let dom = chromium::run(&tmp.0, &["--window-size=1300,2000".into(), "--dump-dom".into(), url]).stdout;
    let found = dom.split("data-seeds=\"").nth(1).and_then(|rest| rest.split('"').next());
    let numbers: Vec<u64> = found
        .unwrap_or_else(|| panic!("no data-seeds in the DOM:\n{}", &dom[..dom.len().min(2000)]))
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let [seen, wide, page, window] = numbers[..] else { panic!("data-seeds: {numbers:?}") };
    assert!(seen >= 5 * 5, "the seed section's elements: {seen}");
    assert_eq!(wide, 0, "{wide} elements of the seed section scroll sideways at 1300 px");
    assert!(page <= window, "the page is {page} px wide in a window of {window}");
    for i in 0..5 {
        assert!(dom.contains(&format!("Seed 00{i}: what seed 00{i} measured")), "seed 00{i}'s block");
    }
}
