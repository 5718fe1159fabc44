//! The report as one self-contained HTML5 file: inline CSS and inline SVG charts, no script, no
//! font, image or stylesheet to fetch, so it opens offline and can be attached anywhere. Every text
//! from the results is escaped (suite files are user input).

use crate::doc::{self, Block, RowMark, Table};
use crate::escape::html as esc;
use crate::svg::{self, Palette};
use callbench_results::model::Results;
use std::fmt::Write;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; line-height: 1.45; }
main { max-width: 1240px; margin: 0 auto; padding: 24px; background: #fff; }
h1 { font-size: 1.7em; margin-top: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
.banner { border-left: 6px solid #b45309; background: #fff7ed; padding: 10px 14px; font-weight: 600; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 4px 7px; text-align: left; vertical-align: top; white-space: nowrap; }
td:last-child { white-space: normal; min-width: 18em; }
th { background: #f3f4f6; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr.failed td { background: #fdecec; }
tr.noisy td { background: #fffbea; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; margin: 1em 0; }
figure { margin: 0; max-width: 100%; }
svg.chart { max-width: 100%; height: auto; border: 1px solid #e5e5e5; }
details { margin: 1em 0; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; font-size: 0.85em; }
li { margin: 0.25em 0; }
footer { color: #666; font-size: 0.85em; margin-top: 3em; }
"#;

/// The whole report.
pub fn html(r: &Results) -> String {
    let palette = Palette::new(r);
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>callbench: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        esc(&r.suite.name)
    );
    for b in doc::report(r) {
        block(&mut out, r, &palette, &b);
        out.push('\n');
    }
    let _ = write!(
        out,
        "<footer>Written by callbench {} from results.json (schema {}).</footer>\n</main>\n</body>\n</html>\n",
        esc(&r.environment.callbench_version),
        esc(&r.schema)
    );
    out
}

fn block(out: &mut String, r: &Results, palette: &Palette, b: &Block) {
    match b {
        Block::Title(t) => {
            let _ = write!(out, "<h1>{}</h1>", esc(t));
        }
        Block::Heading(t) => {
            let _ = write!(out, "<h2>{}</h2>", esc(t));
        }
        Block::Subheading(t) => {
            let _ = write!(out, "<h3>{}</h3>", esc(t));
        }
        Block::Banner(t) => {
            let _ = write!(out, "<div class=\"banner\" role=\"alert\">{}</div>", esc(t));
        }
        Block::Paragraph(t) => {
            let _ = write!(out, "<p>{}</p>", esc(t).replace('\n', "<br>"));
        }
        Block::List(items) => {
            out.push_str("<ul>");
            for i in items {
                let _ = write!(out, "<li>{}</li>", esc(i));
            }
            out.push_str("</ul>");
        }
        Block::Table(t) => table(out, t),
        Block::Charts(id) => {
            let Some(exp) = r.experiment(id) else { return };
            let charts = svg::experiment_charts_with(r, exp, palette);
            if charts.is_empty() {
                return;
            }
            out.push_str("<div class=\"charts\">");
            for chart in charts {
                let _ = write!(out, "<figure>{chart}</figure>");
            }
            out.push_str("</div>");
        }
        Block::AnswerCharts => {
            let charts = svg::answer_charts(r);
            if !charts.is_empty() {
                out.push_str("<div class=\"charts answer\">");
                for chart in charts {
                    let _ = write!(out, "<figure>{chart}</figure>");
                }
                out.push_str("</div>");
            }
        }
        Block::FoldedList { summary, items } => {
            let _ = write!(out, "<details><summary>{}</summary><ul>", esc(summary));
            for item in items {
                let _ = write!(out, "<li>{}</li>", esc(item));
            }
            out.push_str("</ul></details>");
        }
        Block::Details { summary, text, lang } => {
            let _ = write!(
                out,
                "<details><summary>{}</summary><pre><code class=\"language-{}\">{}</code></pre></details>",
                esc(summary),
                esc(lang),
                esc(text)
            );
        }
    }
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"table-wrap\"><table><thead><tr>");
    for c in &t.columns {
        let _ = write!(out, "<th{}>{}</th>", num_class(c.numeric), esc(&c.title));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        let class = match row.mark {
            RowMark::Normal => "",
            RowMark::Noisy => " class=\"noisy\"",
            RowMark::Failed => " class=\"failed\"",
        };
        let _ = write!(out, "<tr{class}>");
        for (i, cell) in row.cells.iter().enumerate() {
            let numeric = t.columns.get(i).is_some_and(|c| c.numeric);
            let _ = write!(out, "<td{}>{}</td>", num_class(numeric), esc(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn num_class(numeric: bool) -> &'static str {
    if numeric {
        " class=\"num\""
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_are_escaped() {
        let mut t = Table::new(&[("<th>", false), ("n", true)]);
        t.push(vec!["<script>alert(1)</script>".into(), "1".into()], RowMark::Failed);
        let mut out = String::new();
        table(&mut out, &t);
        assert!(!out.contains("<script>") && !out.contains("<th><th>"));
        assert!(out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(out.contains("<tr class=\"failed\">") && out.contains("<td class=\"num\">1</td>"));
    }
}
