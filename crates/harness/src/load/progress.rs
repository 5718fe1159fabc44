//! A one-line progress display on stderr, only when stderr is a terminal and not `-q`.

use super::Plan;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    pub fn start(done: Arc<AtomicU64>, plan: &Plan, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { task: None };
        }
        let stop = plan.load.stop;
        let shape_length: Duration = plan.segments.iter().map(|s| s.duration).sum();
        let length = stop.duration.or((!shape_length.is_zero()).then_some(shape_length)).map(|d| d + stop.warmup);
        let calls = stop.calls;
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let n = done.load(Ordering::Relaxed);
                let elapsed = started.elapsed();
                let fraction = match (length, calls) {
                    (Some(d), _) => elapsed.as_secs_f64() / d.as_secs_f64(),
                    (None, Some(c)) => n as f64 / c as f64,
                    (None, None) => 0.0,
                }
                .clamp(0.0, 1.0);
                let filled = (fraction * 30.0) as usize;
                let bar = format!("{}{}", "=".repeat(filled), " ".repeat(30 - filled));
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r[{bar}] {:>3.0}%  {n} calls  {:.1} s ", fraction * 100.0, elapsed.as_secs_f64());
                let _ = err.flush();
            }
        });
        Progress { task: Some(task) }
    }

    pub fn finish(self) {
        if let Some(task) = self.task {
            task.abort();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(72));
            let _ = err.flush();
        }
    }
}
