//! Seed 000's auth work in Rust, as `processing-rust` does it, each phase timed apart (for
//! reproductions/seed000-processing/profile.py):
//!
//!     phases --users PATH --id N --password P [--iterations K] [--warmup W]
//!
//! One iteration: `fs::read_to_string`, serde_json into `Vec<User>`, `iter().position`, sha2 +
//! hex, then the parsed users dropped (`processing-rust` drops them when `authenticate` returns,
//! inside its timed iteration). stdout: `hash <hex>`, then `phases <read> <parse> <search> <hash>
//! <free>` in ns (`Instant`) per timed iteration.

use serde::Deserialize;
use sha2::{Digest, Sha512};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Deserialize)]
struct User {
    id: i64,
    #[allow(dead_code)] // parsed as the article did, never read
    hash: String,
}

struct Options {
    users: String,
    id: i64,
    password: String,
    iterations: u64,
    warmup: u64,
}

fn options(argv: &[String]) -> Result<Options, String> {
    let (mut users, mut id, mut password, mut iterations, mut warmup) = (None, None, None, 1, 0);
    for pair in argv.chunks(2) {
        let value = pair.get(1).ok_or_else(|| format!("{} needs a value", pair[0]))?;
        let number = |what: &str| value.parse::<i64>().map_err(|_| format!("{what}: not a number: {value}"));
        match pair[0].as_str() {
            "--users" => users = Some(value.clone()),
            "--id" => id = Some(number("--id")?),
            "--password" => password = Some(value.clone()),
            "--iterations" => iterations = number("--iterations")?.try_into().map_err(|_| "--iterations < 0")?,
            "--warmup" => warmup = number("--warmup")?.try_into().map_err(|_| "--warmup < 0")?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if iterations < 1 {
        return Err("--iterations must be >= 1".into());
    }
    Ok(Options {
        users: users.ok_or("--users is required")?,
        id: id.ok_or("--id is required")?,
        password: password.ok_or("--password is required")?,
        iterations,
        warmup,
    })
}

fn run(o: &Options) -> Result<String, String> {
    let mut out = Vec::new();
    let mut last: Option<String> = None;
    for i in 0..o.warmup + o.iterations {
        let t0 = Instant::now();
        let content = std::fs::read_to_string(&o.users).map_err(|e| format!("cannot read {}: {e}", o.users))?;
        let t1 = Instant::now();
        let users: Vec<User> = serde_json::from_str(&content).map_err(|e| format!("cannot parse {}: {e}", o.users))?;
        let t2 = Instant::now();
        let found = users.iter().position(|x| x.id == o.id).map(|index| users[index].id);
        let t3 = Instant::now();
        let hash = hex::encode(Sha512::digest(o.password.as_bytes()));
        let t4 = Instant::now();
        drop(users);
        drop(content);
        let t5 = Instant::now();
        // Checked outside the timed phases: every result is used.
        if found != Some(o.id) || last.as_ref().is_some_and(|l| *l != hash) {
            return Err(format!("user {} not found or an inconsistent result", o.id));
        }
        if i >= o.warmup {
            let ns = |a: Instant, b: Instant| (b - a).as_nanos();
            out.push(format!("phases {} {} {} {} {}", ns(t0, t1), ns(t1, t2), ns(t2, t3), ns(t3, t4), ns(t4, t5)));
        }
        last = Some(hash);
    }
    Ok(format!("hash {}\n{}\n", last.unwrap_or_default(), out.join("\n")))
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = options(&argv).map_err(|e| (e, 2)).and_then(|o| run(&o).map_err(|e| (e, 1)));
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err((e, code)) => {
            eprintln!("error {e}");
            ExitCode::from(code)
        }
    }
}
