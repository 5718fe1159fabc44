use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier results folder (or results.json).
    a: PathBuf,
    /// The later one.
    b: PathBuf,
    /// Exit 1 when a cell's headline figure changed significantly (the two intervals do not
    /// overlap) or was measured in one run only: two runs of one suite on one machine should pass.
    #[arg(long)]
    check: bool,
}

/// What changed from A to B, cell by cell, and whether it is significant.
pub fn run(args: Args) -> Result<i32> {
    let a = super::report::read_results(&args.a)?;
    let b = super::report::read_results(&args.b)?;
    let report = callbench_report::compare::compare(&a, &b);
    print!("{}", report.markdown());
    if args.check && !report.no_significant_change() {
        eprintln!("callbench: some cells changed significantly between the two runs (see the table)");
        return Ok(1);
    }
    Ok(0)
}
