//! A one-line progress bar on stderr while a load runs, only when stderr is a terminal and not
//! `-q`; the search's lines are printed unless `-q`.

use callbench_load::{RunView, Watch};
use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Bar {
    quiet: bool,
    drawing: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Bar {
    pub fn new(quiet: bool) -> Self {
        Bar { quiet, drawing: Mutex::new(None) }
    }
}

impl Watch for Bar {
    fn run_started(&self, run: RunView) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let n = run.done.load(Ordering::Relaxed);
                let elapsed = started.elapsed();
                let fraction = match (run.length, run.calls) {
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
        *self.drawing.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    fn run_ended(&self) {
        if let Some(task) = self.drawing.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(72));
            let _ = err.flush();
        }
    }

    fn say(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }
}
