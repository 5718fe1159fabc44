//! `callbench load`: a load spec (what the flags say) turned into an engine target, a pacer and a
//! load, run, and reported. The runner of suites uses the same spec.

pub mod build;
pub mod output;
pub mod parse;
pub mod preset;
pub mod progress;
pub mod report;
pub mod search;

use callbench_engine::{Arrivals, Closed, Load, Open, Pacer, RateShape, Segment, Stop};
use report::{LoadReport, RunResult};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Everything `callbench load` was asked, validated.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub target: String,
    pub method: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub http2: bool,
    pub protos: Vec<PathBuf>,
    pub import_paths: Vec<PathBuf>,
    pub protoset: Option<PathBuf>,
    pub workload: Option<String>,
    pub preset: preset::PresetOptions,
    pub concurrency: Option<usize>,
    pub calls: Option<u64>,
    pub duration: Option<Duration>,
    pub warmup: Duration,
    pub rate: Option<f64>,
    pub poisson: bool,
    pub seed: u64,
    pub rate_shape: Option<String>,
    pub objective: Option<String>,
    pub connections: Option<usize>,
    pub streams: Option<usize>,
    pub new_connection_per_call: bool,
    pub gzip: bool,
    pub insecure: bool,
    pub ca_file: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub expect_status: Vec<u16>,
    pub expect_body: Option<Vec<u8>>,
    pub check: bool,
    pub precise_timer: bool,
    pub allow_remote: bool,
    pub threads: usize,
}

impl Default for LoadSpec {
    fn default() -> Self {
        LoadSpec {
            target: String::new(),
            method: None,
            headers: Vec::new(),
            body: None,
            http2: false,
            protos: Vec::new(),
            import_paths: Vec::new(),
            protoset: None,
            workload: None,
            preset: preset::PresetOptions::default(),
            concurrency: None,
            calls: None,
            duration: None,
            warmup: Duration::ZERO,
            rate: None,
            poisson: false,
            seed: 1,
            rate_shape: None,
            objective: None,
            connections: None,
            streams: None,
            new_connection_per_call: false,
            gzip: false,
            insecure: false,
            ca_file: None,
            timeout: Some(Duration::from_secs(20)),
            expect_status: Vec::new(),
            expect_body: None,
            check: false,
            precise_timer: true,
            allow_remote: false,
            threads: 1,
        }
    }
}

/// Default calls when neither `-n` nor `-z` nor a rate shape bounds the run (as hey and ghz).
pub const DEFAULT_CALLS: u64 = 200;
/// Default concurrency (as hey, oha and ghz).
pub const DEFAULT_CONCURRENCY: usize = 50;

/// The run's load model, as data.
pub struct Plan {
    pub load: Load,
    pub pacer_kind: PacerKind,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone)]
pub enum PacerKind {
    Closed,
    Open { shape: RateShape, arrivals: Arrivals },
}

impl PacerKind {
    pub fn pacer(&self) -> Box<dyn Pacer> {
        match self {
            PacerKind::Closed => Box::new(Closed),
            PacerKind::Open { shape, arrivals } => Box::new(Open::new(shape.clone(), *arrivals)),
        }
    }
}

impl LoadSpec {
    pub fn arrivals(&self) -> Arrivals {
        if self.poisson {
            Arrivals::Poisson { seed: self.seed }
        } else {
            Arrivals::Uniform
        }
    }

    /// The stop condition: `-n`, `-z`, or the default count; a rate shape bounds itself.
    pub fn stop(&self) -> Stop {
        let calls = match (self.calls, self.duration, &self.rate_shape) {
            (None, None, None) => Some(DEFAULT_CALLS),
            (calls, _, _) => calls,
        };
        Stop { calls, duration: self.duration, warmup: self.warmup }
    }

    /// The load model for a run at `rate` (None: closed loop, or the spec's own rate/shape).
    pub fn plan(&self, concurrency: usize, rate: Option<f64>, cancel: Arc<AtomicBool>) -> Result<Plan, String> {
        let mut load = Load::new(concurrency, self.stop());
        load.timeout = self.timeout;
        load.new_connection_per_call = self.new_connection_per_call;
        load.cancel = cancel;
        load.precise_timer = self.precise_timer;
        let (pacer_kind, segments) = match (rate.or(self.rate), &self.rate_shape) {
            (Some(_), Some(_)) => return Err("give --rate or --rate-shape, not both".into()),
            (Some(r), None) if r <= 0.0 => return Err("--rate must be above 0 calls/s".into()),
            (Some(r), None) => (PacerKind::Open { shape: RateShape::constant(r)?, arrivals: self.arrivals() }, vec![]),
            (None, Some(text)) => {
                let (shape, segments) = parse::rate_shape(text)?;
                (PacerKind::Open { shape, arrivals: self.arrivals() }, segments)
            }
            (None, None) => (PacerKind::Closed, vec![]),
        };
        Ok(Plan { load, pacer_kind, segments })
    }
}

/// Runs the spec (one run, or a search when an objective is given) and reports what was measured.
/// `cancel` ends it early (Ctrl-C); the report then says `interrupted` and holds what was measured.
pub async fn execute(spec: &LoadSpec, cancel: Arc<AtomicBool>, quiet: bool) -> Result<(LoadReport, RunResult), String> {
    let built = build::build(spec).await?;
    if spec.objective.is_some() {
        return search::search(spec, &built, cancel, quiet).await;
    }
    let plan = spec.plan(built.concurrency, None, cancel)?;
    let result = built.run(plan, quiet).await?;
    Ok((LoadReport::new(spec, &built, &result, None), result))
}
