//! Where `load` and `run` send their figures besides their own files: a Prometheus remote-write
//! receiver (`--out-prometheus` / `--prometheus`) and an OpenMetrics text file (`--prometheus-text`).

use anyhow::{anyhow, Result};
use callbench_export::{Labels, Point, Target};
use std::path::{Path, PathBuf};

/// The flags `load` and `run` share (each names its own URL flag).
#[derive(clap::Args, Debug, Default)]
pub struct TextAndLabels {
    /// Write the figures as an OpenMetrics text file too (for node_exporter's textfile collector), the latency
    /// as a classic histogram (16 buckets per power of two)
    #[arg(long = "prometheus-text", value_name = "FILE")]
    pub text: Option<PathBuf>,
    /// A label on every series pushed or written (repeatable), e.g. commit=4fb7f00
    #[arg(long = "prometheus-label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

/// The receiver and the text file, checked before anything is measured.
pub struct Sink {
    target: Option<Target>,
    text: Option<PathBuf>,
    pub labels: Labels,
}

impl Sink {
    /// None when neither is asked for; an error for a URL that is not one, or a file that cannot be
    /// written (nothing measured yet, nothing changed).
    pub fn new(url: Option<&str>, flags: &TextAndLabels) -> Result<Option<Sink>> {
        let text = flags.text.as_deref();
        let labels: Labels = flags
            .labels
            .iter()
            .map(|l| callbench_export::parse_label(l))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow!(e))?;
        if url.is_none() && text.is_none() {
            if !labels.is_empty() {
                anyhow::bail!("--prometheus-label is for a Prometheus URL or --prometheus-text");
            }
            return Ok(None);
        }
        let target = url.map(Target::parse).transpose()?;
        if let Some(path) = text {
            callbench_atomic_file::probe_writable(path).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        }
        Ok(Some(Sink { target, text: text.map(Path::to_path_buf), labels }))
    }

    /// Writes the text file and pushes, every point stamped now. What fails is said in one line
    /// each; the error is the first failure.
    pub fn publish(&self, points: &[Point], quiet: bool) -> Result<()> {
        let mut first_error = None;
        if let Some(path) = &self.text {
            match callbench_atomic_file::write_atomic(path, callbench_export::text::render(points).as_bytes()) {
                Ok(()) if !quiet => eprintln!("callbench: {} series written to {}", points.len(), path.display()),
                Ok(()) => {}
                Err(e) => first_error = Some(anyhow!("cannot write {}: {e}", path.display())),
            }
        }
        if let Some(target) = &self.target {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or_default();
            match callbench_export::push(target, points, now_ms) {
                Ok(()) if !quiet => eprintln!("callbench: {} series pushed to {}", points.len(), target.shown),
                Ok(()) => {}
                Err(e) => {
                    let e = anyhow!("prometheus remote write: {e}");
                    if first_error.is_some() {
                        eprintln!("callbench: error: {e}");
                    } else {
                        first_error = Some(e);
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// A results folder's points (results.json and its `hdr/` logs) published.
    pub fn publish_results(&self, dir: &Path, quiet: bool) -> Result<()> {
        let path = dir.join("results.json");
        let text = std::fs::read_to_string(&path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
        let results: callbench_results::model::Results =
            serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let points = callbench_export::from_results::points(&results, dir, &self.labels)?;
        self.publish(&points, quiet)
    }
}
