//! What a verification found: a verdict per vector, grouped in steps, and the counts.

/// The verdict on one vector.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub class: String,
    pub failure: Option<String>,
}

/// One step of a verification, e.g. "vectors (mode preloaded)" or "flood".
#[derive(Debug, Clone)]
pub struct Step {
    pub title: String,
    pub outcomes: Vec<Outcome>,
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    pub steps: Vec<Step>,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.steps.iter().flat_map(|s| &s.outcomes).filter(|o| o.failure.is_none() && o.class != "deviation").count()
    }
    /// Failures the server's manifest declares (see `apply_deviations`).
    pub fn deviations(&self) -> usize {
        self.steps.iter().flat_map(|s| &s.outcomes).filter(|o| o.class == "deviation").count()
    }
    /// `N passed, N failed`, and the declared deviations when there are some.
    pub fn summary(&self) -> String {
        match self.deviations() {
            0 => format!("{} passed, {} failed", self.passed(), self.failed()),
            d => format!("{} passed, {} failed, {d} declared deviation(s)", self.passed(), self.failed()),
        }
    }
    pub fn failed(&self) -> usize {
        self.steps.iter().flat_map(|s| &s.outcomes).filter(|o| o.failure.is_some()).count()
    }
}
