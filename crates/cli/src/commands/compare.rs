use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier results folder (or results.json).
    a: PathBuf,
    /// The later one.
    b: PathBuf,
    /// Exit 1 when a cell's headline figure changed significantly (its rank interval wholly
    /// beyond the threshold) or was measured in one run only: two runs of one suite on one
    /// machine should pass.
    #[arg(long)]
    check: bool,
    /// The share a change must exceed, its whole 95% interval beyond it, to count as significant.
    #[arg(long, default_value_t = callbench_report::compare::DEFAULT_THRESHOLD, value_parser = share)]
    threshold: f64,
}

fn share(text: &str) -> Result<f64, String> {
    let v: f64 = text.trim_end_matches('%').parse().map_err(|_| format!("'{text}' is not a share (0.15 or 15%)"))?;
    let v = if text.ends_with('%') { v / 100.0 } else { v };
    if (0.0..10.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{text}' must be between 0 and 10 (0.15 = ±15%)"))
    }
}

/// What changed from A to B, cell by cell, and whether it is significant.
pub fn run(args: Args) -> Result<i32> {
    let a = super::report::read_results(&args.a)?;
    let b = super::report::read_results(&args.b)?;
    let report = callbench_report::compare::compare_with(&a, &b, args.threshold);
    print!("{}", report.markdown());
    if args.check && !report.no_significant_change() {
        eprintln!("callbench: some cells changed significantly between the two runs (see the table)");
        return Ok(1);
    }
    Ok(0)
}
