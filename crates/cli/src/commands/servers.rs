use anyhow::Result;
use callbench_launcher::{manifest, program, versions};

#[derive(clap::Args)]
pub struct Args {
    /// Also print runtime and package versions.
    #[arg(long)]
    versions: bool,
}

/// The servers of servers/, then seed 000's processing programs of processing/.
pub fn run(args: Args) -> Result<i32> {
    let repo = super::repo()?;
    let servers = manifest::discover(&repo)?;
    let width = |f: &dyn Fn(&manifest::Manifest) -> usize| servers.iter().map(f).max().unwrap_or(0);
    let (wn, wl, wf) = (width(&|m| m.name.len()), width(&|m| m.language.len()), width(&|m| m.framework.len()));
    for m in &servers {
        let status = if m.supported { String::new() } else { format!("  (unsupported: {})", m.unsupported_reason) };
        // `tls`: it serves TLS (`[tls]` in its manifest), so `+tls` cells and `verify --tls` can use it.
        let tls = if m.tls.is_some() { "tls" } else { "" };
        println!(
            "{:<wn$} {:<5} {tls:<3} {:<wl$} {:<wf$} {}{status}",
            m.name, m.protocol, m.language, m.framework, m.description
        );
        if args.versions {
            for (name, version) in versions::server_versions(&repo, m) {
                println!("{:<wn$}   {name} {version}", "");
            }
        }
    }
    let programs = program::discover(&repo)?;
    if !programs.is_empty() {
        println!("\nprocessing programs (seed 000's work per language, suites/seed000-processing.toml):");
        let wn = programs.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let wl = programs.iter().map(|p| p.language.len()).max().unwrap_or(0);
        for p in &programs {
            println!("{:<wn$} {:<wl$} {}", p.name, p.language, p.description);
            if args.versions {
                for (name, version) in versions::program_versions(&repo, p) {
                    println!("{:<wn$}   {name} {version}", "");
                }
            }
        }
    }
    Ok(0)
}
