//! `callbench run --duration/--warmup`: every timed cell of a suite measured for other times than the
//! suite's, for a quick look at any suite (the tests run the default suite this way).

use super::Suite;
use crate::RunError;
use callbench_load::parse;

impl Suite {
    /// Sets every experiment's measured time (where it is not counted in calls) and warm-up; each
    /// value checked as the suite's own would be, the error one line.
    pub fn override_times(&mut self, duration: Option<&str>, warmup: Option<&str>) -> Result<(), RunError> {
        let check = |flag: &str, text: &str| match parse::duration(text) {
            Ok(d) if flag == "--duration" && d.is_zero() => Err("--duration must be more than 0".to_string()),
            Ok(_) => Ok(()),
            Err(m) => Err(format!("{flag}: {m}")),
        };
        if let Some(d) = duration {
            check("--duration", d).map_err(RunError::Settings)?;
        }
        if let Some(w) = warmup {
            check("--warmup", w).map_err(RunError::Settings)?;
        }
        for e in &mut self.experiments {
            let timed = e.load.over(&self.defaults).calls.is_none();
            if let (Some(d), true) = (duration, timed) {
                e.load.duration = Some(d.to_string());
            }
            if let Some(w) = warmup {
                e.load.warmup = Some(w.to_string());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::{Suite, DEFAULT_SUITE};

    #[test]
    fn every_timed_experiment_takes_the_new_times() {
        let mut suite = Suite::parse(DEFAULT_SUITE).unwrap();
        suite.override_times(Some("50ms"), Some("10ms")).unwrap();
        for e in &suite.experiments {
            let fields = e.load.over(&suite.defaults);
            // An experiment counted in calls (the network one) keeps its count.
            if fields.calls.is_none() {
                assert_eq!(fields.duration.as_deref(), Some("50ms"), "{}", e.id);
            }
            assert_eq!(fields.warmup.as_deref(), Some("10ms"), "{}", e.id);
        }
    }

    #[test]
    fn a_cell_counted_in_calls_keeps_its_count_and_bad_times_are_one_line_errors() {
        let text = "name='t'\n[[experiment]]\nid='a'\ntitle='a'\nservers=['inproc']\nworkloads=['echo']\ncalls=100\n";
        let mut suite = Suite::parse(text).unwrap();
        suite.override_times(Some("50ms"), None).unwrap();
        assert_eq!(suite.experiments[0].load.duration, None);
        assert_eq!(suite.experiments[0].load.calls, Some(100));
        for (d, w) in [(Some("fast"), None), (Some("0s"), None), (None, Some("-1s"))] {
            let e = suite.override_times(d, w).unwrap_err().to_string();
            assert!(e.starts_with("--") && !e.contains('\n'), "{e}");
        }
    }
}
