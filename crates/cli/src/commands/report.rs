use anyhow::{Context, Result};
use callbench_results::model::Results;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// A results folder written by `callbench run` (it holds results.json).
    dir: PathBuf,
}

/// Re-renders report.md and report.html from results.json, and prints the tables.
pub fn run(args: Args) -> Result<i32> {
    let results = read_results(&args.dir)?;
    callbench_report::write::write_reports(&results, &args.dir).context("cannot write the reports")?;
    for e in &results.experiments {
        print!("{}", callbench_runner::terminal::experiment_table(&results, &e.id));
    }
    println!("\nreport: {}\n        {}", args.dir.join("report.md").display(), args.dir.join("report.html").display());
    Ok(0)
}

/// results.json of a folder (or the file itself), checked to be callbench's.
pub fn read_results(path: &Path) -> Result<Results> {
    let file = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let results: Results =
        serde_json::from_str(&text).with_context(|| format!("{} is not a callbench results.json", file.display()))?;
    if results.schema != callbench_results::model::SCHEMA {
        anyhow::bail!(
            "{} has schema '{}', this callbench reads '{}'",
            file.display(),
            results.schema,
            callbench_results::model::SCHEMA
        );
    }
    Ok(results)
}
