//! An error's text with its causes, one line: what callbench printed when errors were anyhow's
//! context chains (`{:#}`), kept now that the library crates' errors are enums of their own.

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

#[cfg(test)]
mod tests {
    use super::{because, chain};

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
