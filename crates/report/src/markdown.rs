//! The report as GitHub-flavoured Markdown, ready to paste into an issue.

use crate::doc::{self, Block, Table};
use crate::escape;
use callbench_results::model::Results;

/// The whole report (no charts: they live in the HTML report).
pub fn markdown(r: &Results) -> String {
    render(&doc::report(r))
}

/// Blocks as Markdown, separated by blank lines.
pub fn render(blocks: &[Block]) -> String {
    let parts: Vec<String> = blocks.iter().filter_map(block).collect();
    let mut out = parts.join("\n\n");
    out.push('\n');
    out
}

fn block(b: &Block) -> Option<String> {
    Some(match b {
        Block::Title(t) => format!("# {}", escape::markdown(t)),
        Block::Heading(t) => format!("## {}", escape::markdown(t)),
        Block::Subheading(t) => format!("### {}", escape::markdown(t)),
        Block::Banner(t) => format!("> [!WARNING]\n> **{}**", escape::markdown(&one_paragraph(t))),
        Block::Paragraph(t) => escape::markdown(t),
        Block::List(items) => {
            items.iter().map(|i| format!("- {}", escape::markdown(&one_paragraph(i)))).collect::<Vec<_>>().join("\n")
        }
        Block::Table(t) => table(t),
        Block::Charts(_) | Block::AnswerCharts => return None,
        Block::FoldedList { summary, items } => format!(
            "### {}\n\n{}",
            escape::markdown(summary),
            items.iter().map(|i| format!("- {}", escape::markdown(&one_paragraph(i)))).collect::<Vec<_>>().join("\n")
        ),
        Block::Details { summary, text, lang } => format!(
            "<details><summary>{}</summary>\n\n{}\n\n</details>",
            escape::html(summary),
            escape::markdown_fence(text, lang)
        ),
    })
}

/// A line break inside a list item or a quote would end it.
fn one_paragraph(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

pub fn table(t: &Table) -> String {
    let mut lines = Vec::with_capacity(t.rows.len() + 2);
    let header: Vec<String> = t.columns.iter().map(|c| escape::markdown_cell(&c.title)).collect();
    lines.push(format!("| {} |", header.join(" | ")));
    let rule: Vec<&str> = t.columns.iter().map(|c| if c.numeric { "---:" } else { "---" }).collect();
    lines.push(format!("| {} |", rule.join(" | ")));
    for row in &t.rows {
        let cells: Vec<String> = row.cells.iter().map(|c| escape::markdown_cell(c)).collect();
        lines.push(format!("| {} |", cells.join(" | ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::RowMark;

    #[test]
    fn tables_align_numbers_right_and_escape_cells() {
        let mut t = Table::new(&[("server", false), ("p50", true)]);
        t.push(vec!["a|b".into(), "45.2 µs".into()], RowMark::Normal);
        assert_eq!(table(&t), "| server | p50 |\n| --- | ---: |\n| a\\|b | 45.2 µs |");
    }

    #[test]
    fn charts_are_left_out_and_html_is_disabled() {
        let md = render(&[Block::Title("<b>x</b>".into()), Block::Charts("e".into()), Block::Paragraph("p".into())]);
        assert_eq!(md, "# &lt;b>x&lt;/b>\n\np\n");
    }
}
