use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write it (default: the file the servers are given, under target/callbench/).
    #[arg(short, long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let path = match args.out {
        Some(path) => {
            callbench_workloads::users::write_users_json(&path)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            path
        }
        None => super::repo()?.users_file()?,
    };
    println!("{}", path.display());
    Ok(0)
}
