//! The servers that were measured and the reproducibility record.

use super::blocks::{Block, RowMark, Table};
use crate::names;
use callbench_results::format::MISSING;
use callbench_results::model::{Results, ServerRecord};

pub fn servers(r: &Results) -> Vec<Block> {
    if r.servers.is_empty() {
        return vec![];
    }
    let mut table = Table::new(&[
        ("server", false),
        ("language", false),
        ("framework", false),
        ("protocol", false),
        ("versions", false),
        ("verify", false),
        ("failures", false),
    ]);
    for s in &r.servers {
        let failed = !s.failures.is_empty() || s.verify.as_ref().is_some_and(|v| v.failed > 0);
        let mark = if failed { RowMark::Failed } else { RowMark::Normal };
        table.push(
            vec![
                s.name.clone(),
                s.language.clone(),
                s.framework.clone(),
                s.protocol.clone(),
                join_map(s.versions.iter()),
                verify(s),
                failures(s),
            ],
            mark,
        );
    }
    let mut blocks = vec![Block::Heading("Servers".into()), Block::Table(table)];
    let endpoints = r.servers.iter().filter_map(|s| {
        let e = s.endpoint.as_ref()?;
        let cpu = match e.server_pids.as_slice() {
            [] => "its CPU not measured (no --server-pid)".to_string(),
            pids => format!("its CPU read from process {pids:?} and their process groups"),
        };
        let data = e.data.as_ref().map(|d| format!(" ({d})")).unwrap_or_default();
        Some(format!(
            "{}: your endpoint {}, a call is {}{data}; not started, pinned or verified by callbench, {cpu}",
            s.name, e.url, e.call
        ))
    });
    let notes: Vec<String> = endpoints
        .chain(r.servers.iter().filter(|s| !s.note.trim().is_empty()).map(|s| format!("{}: {}", s.name, s.note.trim())))
        .collect();
    if !notes.is_empty() {
        blocks.push(Block::Paragraph("What to know about these servers' figures:".into()));
        blocks.push(Block::List(notes));
    }
    blocks
}

fn verify(s: &ServerRecord) -> String {
    match &s.verify {
        Some(v) if !v.deviations.is_empty() => {
            format!("{} passed, {} failed, {} declared deviation(s)", v.passed, v.failed, v.deviations.len())
        }
        Some(v) => format!("{} passed, {} failed", v.passed, v.failed),
        None if s.endpoint.is_some() => "your endpoint: a call succeeds on its status (2xx, gRPC OK)".into(),
        None => "not verified".into(),
    }
}

fn failures(s: &ServerRecord) -> String {
    let verify = s.verify.iter().flat_map(|v| {
        v.failures.iter().map(|f| format!("verify: {f}")).chain(v.deviations.iter().map(|d| format!("deviation: {d}")))
    });
    let all: Vec<String> = s.failures.iter().cloned().chain(verify).map(|f| names::one_line(&f)).collect();
    all.join("; ")
}

fn join_map<'a>(pairs: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    // Tools record their own banner (`rustc 1.95.0`): the name is not repeated.
    let parts: Vec<String> =
        pairs.map(|(k, v)| if v.starts_with(k.as_str()) { v.clone() } else { format!("{k} {v}") }).collect();
    if parts.is_empty() {
        MISSING.into()
    } else {
        parts.join(", ")
    }
}

pub fn record(r: &Results) -> Vec<Block> {
    let env = &r.environment;
    let commit = match (&env.git_commit, env.git_dirty) {
        (Some(c), Some(true)) => format!("{c} (with uncommitted changes)"),
        (Some(c), _) => c.clone(),
        (None, _) => "unknown".into(),
    };
    let cpus = |list: &[usize]| {
        if list.is_empty() {
            "not pinned".to_string()
        } else {
            list.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        }
    };
    let rows: Vec<(&str, String)> = vec![
        ("command line", shell_words(&env.command_line)),
        ("suite file", r.suite.file.clone()),
        ("repetitions per cell", r.suite.repetitions.to_string()),
        ("callbench version", env.callbench_version.clone()),
        ("git commit", commit),
        ("CPU", format!("{} ({} logical CPUs)", env.cpu_model, env.cores)),
        ("client pinned to CPUs", cpus(&env.client_cpus)),
        ("servers pinned to CPUs", cpus(&env.server_cpus)),
        ("kernel", env.kernel.clone()),
        ("TCP congestion control", env.tcp_congestion_control.clone()),
        ("io_uring", env.io_uring.clone()),
        ("OS", env.os.clone()),
        ("tools", join_map(env.tools.iter())),
        ("started", env.started_at.clone()),
        ("finished", env.finished_at.clone().unwrap_or_else(|| "not finished".into())),
        ("results schema", r.schema.clone()),
    ];
    let mut table = Table::new(&[("what", false), ("value", false)]);
    // A file written before the TCP congestion control or io_uring's self-check was recorded has
    // none to show.
    let recorded_later = ["TCP congestion control", "io_uring"];
    for (k, v) in rows.into_iter().filter(|(k, v)| !(v.is_empty() && recorded_later.contains(k))) {
        table.push(vec![k.into(), v], RowMark::Normal);
    }
    let mut blocks = vec![Block::Heading("Reproducibility".into()), Block::Table(table)];
    if !r.suite.text.is_empty() {
        blocks.push(Block::Details {
            summary: format!("Suite file {} as it was run", r.suite.file),
            text: r.suite.text.clone(),
            lang: "toml".into(),
        });
    }
    blocks
}

/// The command line as one could paste it into a shell.
pub fn shell_words(args: &[String]) -> String {
    let quote = |a: &String| {
        let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
        if plain {
            a.clone()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    args.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_a_shell() {
        let args: Vec<String> = ["callbench", "run", "--suite", "my suite.toml", "it's"].map(String::from).into();
        assert_eq!(shell_words(&args), r"callbench run --suite 'my suite.toml' 'it'\''s'");
    }
}
