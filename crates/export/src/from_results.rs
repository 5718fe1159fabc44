//! A results folder as points: every repetition of every measured cell, its histogram read back
//! from the cell's HdrHistogram interval log.

use crate::point::{Labels, Point};
use crate::series::{self, Figures};
use callbench_results::model::{Results, RunMetrics};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: interval {index} is not an HdrHistogram ({reason})")]
    Histogram { path: String, index: usize, reason: String },
}

/// The points of `results` (its folder `dir` holds the `hdr/` logs), each labelled by suite,
/// experiment, cell, server, protocol, workload and repetition, plus `extra`.
pub fn points(results: &Results, dir: &Path, extra: &Labels) -> Result<Vec<Point>, ReadError> {
    let mut out = Vec::new();
    for cell in &results.cells {
        let histograms = match &cell.hdr_file {
            Some(file) => read_log(&dir.join(file))?,
            None => vec![],
        };
        for (i, run) in cell.runs.iter().enumerate() {
            let mut labels: Labels = vec![
                ("suite".into(), results.suite.name.clone()),
                ("experiment".into(), cell.experiment.clone()),
                ("cell".into(), cell.id.clone()),
                ("server".into(), cell.server.clone()),
                ("protocol".into(), cell.transport.clone()),
                ("workload".into(), cell.workload.clone()),
                ("repetition".into(), (i + 1).to_string()),
            ];
            labels.extend(extra.iter().cloned());
            // The log holds one histogram per kept repetition, in order; a log that does not
            // (an older folder, a cell cut short) gives the gauges without a histogram.
            let histogram = (histograms.len() == cell.runs.len()).then(|| &histograms[i]);
            out.extend(series::points(&labels, &figures(run, histogram)));
        }
    }
    Ok(out)
}

fn figures<'a>(run: &RunMetrics, latency_us: Option<&'a Histogram<u64>>) -> Figures<'a> {
    Figures {
        latency_us,
        calls_ok: run.calls_ok,
        calls_errors: run.calls_errors,
        errors: run.errors.clone(),
        duration_s: run.duration_s,
        throughput_per_s: run.throughput_per_s,
        wire_sent_per_call: run.wire_sent_per_call,
        wire_received_per_call: run.wire_received_per_call,
        payload_sent_per_call: run.payload_sent_per_call,
        payload_received_per_call: run.payload_received_per_call,
        client_cpu_us_per_call: run.client_cpu_us_per_call,
        server_cpu_us_per_call: run.server_cpu_us_per_call,
    }
}

/// The histograms of an interval log, in order.
pub fn read_log(path: &Path) -> Result<Vec<Histogram<u64>>, ReadError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ReadError::Read { path: shown.clone(), source })?;
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let bad = |reason: String| ReadError::Histogram { path: shown.clone(), index: out.len() + 1, reason };
        match entry {
            Ok(LogEntry::Interval(interval)) => {
                use base64::Engine;
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .map_err(|e| bad(e.to_string()))?;
                let h: Histogram<u64> =
                    Deserializer::new().deserialize(&mut &raw[..]).map_err(|e| bad(format!("{e:?}")))?;
                out.push(h);
            }
            Ok(_) => {}
            Err(e) => return Err(bad(format!("{e:?}"))),
        }
    }
    Ok(out)
}
