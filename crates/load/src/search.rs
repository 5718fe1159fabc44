//! The highest rate that keeps a latency objective (`--slo p99<10ms`): a closed-loop run finds the
//! server's capacity, then open-loop trials bisect between 0 and it. A trial passes when the
//! objective holds on the corrected latency, no call failed, the rate was kept (every call started,
//! none piled up) and the achieved rate is within 1% of the requested one.

use crate::build::Built;
use crate::error::LoadError;
use crate::parse;
use crate::report::{LoadReport, SearchReport, Trial};
use crate::sink::RunResult;
use crate::spec::LoadSpec;
use crate::watch::Watch;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Trial length when `-z` is not given.
const DEFAULT_TRIAL: Duration = Duration::from_secs(5);
/// Bisection steps after the first trial at full capacity: capacity / 2⁶ ≈ 1.6% resolution.
const STEPS: usize = 6;

pub async fn search(
    spec: &LoadSpec,
    built: &Built,
    cancel: Arc<AtomicBool>,
    watch: &dyn Watch,
) -> Result<(LoadReport, RunResult), LoadError> {
    let text = spec.objective.as_deref().unwrap_or_default();
    let (quantile, limit) = parse::objective(text)?;
    if spec.rate.is_some() || spec.rate_shape.is_some() {
        return Err(LoadError::Settings("--slo searches the rate itself: leave out --rate and --rate-shape".into()));
    }
    if spec.calls.is_some() {
        return Err(LoadError::Settings(
            "--slo runs trials of a duration: use -z (default 5s per trial), not -n".into(),
        ));
    }
    let mut trial_spec = spec.clone();
    trial_spec.duration = Some(spec.duration.unwrap_or(DEFAULT_TRIAL));
    let say = |line: String| watch.say(&line);

    let capacity = built.run(trial_spec.plan(built.concurrency, None, cancel.clone())?, watch).await?;
    let max = capacity.stats.summary(&capacity.info).throughput_per_s;
    say(format!("search {text}: closed loop reaches {max:.0} calls/s"));
    if max <= 0.0 {
        return Err(LoadError::Run("no call succeeded in the closed-loop run: nothing to search".into()));
    }
    let (mut low, mut high) = (0.0, max);
    let mut rate = max;
    let mut trials = Vec::new();
    let mut best: Option<(f64, RunResult)> = None;
    let mut last = capacity;
    for _ in 0..=STEPS {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let result = built.run(trial_spec.plan(built.concurrency, Some(rate), cancel.clone())?, watch).await?;
        let summary = result.stats.summary(&result.info);
        let at = summary.latency_us.is_some().then(|| result.stats.latency_us.value_at_quantile(quantile));
        let achieved = summary.rate.map_or(0.0, |r| r.achieved);
        let passed = !result.info.cancelled
            && summary.calls.errors == 0
            && summary.rate.is_some_and(|r| r.kept)
            && achieved >= 0.99 * rate
            && at.is_some_and(|us| us as u128 <= limit.as_micros());
        say(format!(
            "  trial {rate:.0}/s: achieved {achieved:.0}/s, p{} {} µs, {} errors: {}",
            quantile * 100.0,
            at.map_or("-".into(), |v| v.to_string()),
            summary.calls.errors,
            if passed { "pass" } else { "fail" }
        ));
        trials.push(Trial {
            rate,
            achieved_per_s: achieved,
            latency_at_objective_us: at,
            errors: summary.calls.errors,
            passed,
        });
        if passed {
            low = rate;
            best = Some((rate, result));
            if rate >= high {
                break; // the closed-loop capacity itself keeps the objective
            }
        } else {
            high = rate;
            last = result;
        }
        rate = (low + high) / 2.0;
    }
    let best_rate = best.as_ref().map(|(r, _)| *r);
    let report = SearchReport { objective: text.to_string(), closed_loop_max_per_s: max, best_rate, trials };
    let result = best.map_or(last, |(_, r)| r);
    let load_report = LoadReport::new(&trial_spec, built, &result, Some(report));
    Ok((load_report, result))
}
