//! An error's text with its causes, one line: what callbench printed when errors were anyhow's
//! context chains (`{:#}`), kept now that the library crates' errors are enums of their own; and
//! any text made one line for the CLI to print.

use std::error::Error;
use std::fmt::Display;

/// `what: why` followed by each source of `why`.
pub fn because(what: impl Display, why: &(dyn Error + 'static)) -> String {
    format!("{what}: {}", chain(why))
}

/// `why` followed by each of its sources, joined by `: `.
pub fn chain(why: &(dyn Error + 'static)) -> String {
    let mut text = why.to_string();
    let mut source = why.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// Error texts from libraries can span lines and quote names from the input (a server's, a
/// file's): the CLI prints one line, without control characters.
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !line.is_empty() {
            line.push(' ');
        }
        for c in word.chars() {
            match c.is_control() {
                true => line.extend(c.escape_default()),
                false => line.push(c),
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::{because, chain, one_line};

    #[test]
    fn one_line_folds_whitespace_and_escapes_controls() {
        assert_eq!(one_line(" a\n\tb  c\r\n"), "a b c");
        assert_eq!(one_line("x\u{1b}[31my\0"), "x\\u{1b}[31my\\u{0}");
    }

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot read the manifest")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn causes_follow_the_error_on_one_line() {
        let e = Outer(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"));
        assert_eq!(chain(&e), "cannot read the manifest: no such file");
        assert_eq!(because("servers/x", &e), "servers/x: cannot read the manifest: no such file");
    }
}
