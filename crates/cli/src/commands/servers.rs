use anyhow::Result;
use callbench_harness::{manifest, versions};

#[derive(clap::Args)]
pub struct Args {
    /// Also print runtime and package versions.
    #[arg(long)]
    versions: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let repo = super::repo()?;
    for m in manifest::discover(&repo)? {
        let status = if m.supported { String::new() } else { format!("  (unsupported: {})", m.unsupported_reason) };
        println!("{:<14} {:<5} {:<8} {:<12} {}{status}", m.name, m.protocol, m.language, m.framework, m.description);
        if args.versions {
            for (name, version) in versions::server_versions(&repo, &m) {
                println!("{:<14}   {name} {version}", "");
            }
        }
    }
    Ok(0)
}
