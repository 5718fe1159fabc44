//! The CLI reference of the book (docs/src/reference/cli.md), made from the clap definitions: every
//! command's `--help` as callbench prints it. A test keeps the chapter what the code says.

use clap::CommandFactory;

/// The chapter: the top-level help, then each command's.
pub fn markdown() -> String {
    let mut top = crate::Cli::command().bin_name("callbench");
    let mut out = String::from(
        "# Command-line reference\n\nEvery command's `--help`, as `callbench` prints it (made from the code: a test fails \
         when this page and the code disagree).\n\n",
    );
    out.push_str(&format!("```text\n{}\n```\n", top.render_long_help().to_string().trim_end()));
    top.build();
    for sub in top.get_subcommands_mut().filter(|s| s.get_name() != "help") {
        let name = sub.get_name().to_string();
        let help = sub.render_long_help().to_string();
        out.push_str(&format!("\n## callbench {name}\n\n```text\n{}\n```\n", help.trim_end()));
    }
    out
}

#[cfg(test)]
mod tests {
    const CHAPTER: &str = "docs/src/reference/cli.md";

    #[test]
    fn the_books_cli_reference_is_what_clap_prints() {
        let root = std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("../..");
        let made = super::markdown();
        let written = std::fs::read_to_string(root.join(CHAPTER)).unwrap_or_default();
        if written != made {
            let fresh = std::env::temp_dir().join("callbench-cli-reference.md");
            std::fs::write(&fresh, &made).unwrap();
            panic!("{CHAPTER} is not what the code's --help says: copy {} over it", fresh.display());
        }
    }
}
