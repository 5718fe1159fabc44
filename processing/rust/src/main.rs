//! Seed 000's processing step in Rust: read user.json, parse all of it with serde_json into a
//! `Vec<User>`, find the user by id with `iter().position`, SHA-512 hex of the password (the
//! `sha2` crate: the article's rust-crypto is unmaintained). Timed per iteration with `Instant`.

use serde::Deserialize;
use sha2::{Digest, Sha512};
use std::fs;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: processing-rust --users PATH --id N --password P [--iterations K] [--warmup W]";

#[derive(Deserialize)]
struct User {
    id: i64,
    #[allow(dead_code)] // parsed as the article did, never read
    hash: String,
}

struct Args {
    users: String,
    id: i64,
    password: String,
    iterations: u64,
    warmup: u64,
}

/// One iteration, the article's code: the file is read and parsed on every call.
/// Returns the found user's id and the hash, or None for an unknown id.
fn authenticate(users_path: &str, input_id: i64, input_password: &str) -> Result<Option<(i64, String)>, String> {
    let content = fs::read_to_string(users_path).map_err(|e| format!("cannot read {users_path}: {e}"))?;
    let users: Vec<User> = serde_json::from_str(&content).map_err(|e| format!("cannot parse {users_path}: {e}"))?;
    let Some(index) = users.iter().position(|x| x.id == input_id) else {
        return Ok(None);
    };
    let user = &users[index];

    let hash = hex::encode(Sha512::digest(input_password.as_bytes()));
    Ok(Some((user.id, hash)))
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let (mut users, mut id, mut password) = (None, None, None);
    let (mut iterations, mut warmup) = (1, 0);
    for pair in argv.chunks(2) {
        let flag = pair[0].as_str();
        let value = pair.get(1).ok_or_else(|| format!("{flag} needs a value"))?;
        match flag {
            "--users" => users = Some(value.clone()),
            "--id" => id = Some(integer::<i64>(flag, value)?),
            "--password" => password = Some(value.clone()),
            "--iterations" => iterations = integer::<u64>(flag, value)?,
            "--warmup" => warmup = integer::<u64>(flag, value)?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if iterations < 1 {
        return Err("--iterations: must be >= 1".into());
    }
    Ok(Args {
        users: users.ok_or("--users is required")?,
        id: id.ok_or("--id is required")?,
        password: password.ok_or("--password is required")?,
        iterations,
        warmup,
    })
}

fn integer<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{flag}: not a valid number: {text}"))
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error {e}; {USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut times = Vec::with_capacity(args.iterations as usize);
    let mut last: Option<String> = None;
    for i in 0..args.warmup + args.iterations {
        let start = Instant::now();
        let result = authenticate(&args.users, args.id, &args.password);
        let elapsed = start.elapsed();
        // Checked outside the timed part: every result is used, so no work can be optimised away.
        let (user_id, hash) = match result {
            Ok(Some(found)) => found,
            Ok(None) => {
                eprintln!("error user {} not found", args.id);
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("error {e}");
                return ExitCode::from(1);
            }
        };
        if user_id != args.id || last.as_ref().is_some_and(|l| *l != hash) {
            eprintln!("error inconsistent result");
            return ExitCode::from(1);
        }
        last = Some(hash);
        if i >= args.warmup {
            times.push(elapsed.as_nanos());
        }
    }
    let mut out = format!("hash {}\n", last.unwrap_or_default());
    for ns in times {
        out.push_str(&format!("ns {ns}\n"));
    }
    if std::io::stdout().lock().write_all(out.as_bytes()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
