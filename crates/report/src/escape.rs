//! Escaping of text that comes from results.json (suite files are user input, errors carry server
//! output): nothing in them may become markup.

/// Text for HTML and SVG, in element content and in quoted attribute values.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Text for a Markdown paragraph or list item: raw HTML is disabled (`<` becomes `&lt;`) and the
/// characters that would start emphasis or code, or end a table cell, are backslash-escaped
/// (brackets are left alone: `[lo – hi]` without a `(…)` after it is no link). Newlines are kept.
pub fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '|' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Text for a Markdown table cell: as [`markdown`], on one line (a newline would end the row).
pub fn markdown_cell(text: &str) -> String {
    markdown(&text.replace("\r\n", "\n")).replace('\n', "<br>")
}

/// A fenced code block that no backtick run inside `text` can close early.
pub fn markdown_fence(text: &str, lang: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            html(r#"<script>alert("x&y")</script>'"#),
            "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;"
        );
        assert_eq!(html("plain µs – text"), "plain µs – text");
    }

    #[test]
    fn markdown_disables_html_and_table_breaks() {
        assert_eq!(markdown("<script>"), "&lt;script>");
        assert_eq!(markdown_cell("a|b\nc"), "a\\|b<br>c");
        assert_eq!(markdown("*bold* [lo – hi]"), "\\*bold\\* [lo – hi]");
    }

    #[test]
    fn fences_outlast_backticks_inside() {
        assert_eq!(markdown_fence("a\n", "toml"), "```toml\na\n```");
        assert_eq!(markdown_fence("x ```` y", ""), "`````\nx ```` y\n`````");
    }
}
