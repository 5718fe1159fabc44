//! What a client run counts, the same way for both clients: calls completed inside the measured
//! window, the process's CPU time over it, and each call's round trip (from the previous answer on
//! its connection, which is when the call was sent, to its own).

use crate::socket::cpu_seconds;
use std::time::{Duration, Instant};

pub struct Plan {
    pub warmup: Duration,
    pub measured: Duration,
    /// What each call sends.
    pub request: Vec<u8>,
    /// Bytes of each answer.
    pub answer: usize,
}

pub struct Window {
    started: Instant,
    window_start: Instant,
    deadline: Instant,
    cpu_at_start: Option<f64>,
    calls: u64,
    round_trips_ns: Vec<u32>,
}

impl Window {
    pub fn new(plan: &Plan) -> Window {
        let started = Instant::now();
        Window {
            started,
            window_start: started + plan.warmup,
            deadline: started + plan.warmup + plan.measured,
            cpu_at_start: if plan.warmup.is_zero() { Some(cpu_seconds()) } else { None },
            calls: 0,
            round_trips_ns: Vec::with_capacity(1 << 20),
        }
    }

    /// A call sent at `sent` was answered at `now`. False once the run is over.
    pub fn answered(&mut self, sent: Instant, now: Instant) -> bool {
        if now >= self.window_start {
            if self.cpu_at_start.is_none() {
                self.cpu_at_start = Some(cpu_seconds());
            }
            if sent >= self.window_start {
                self.calls += 1;
                self.round_trips_ns.push((now - sent).as_nanos().min(u32::MAX as u128) as u32);
            }
        }
        now < self.deadline
    }

    pub fn over(&self, now: Instant) -> bool {
        now >= self.deadline
    }

    pub fn finish(mut self) -> Outcome {
        let end = Instant::now();
        let cpu = cpu_seconds() - self.cpu_at_start.unwrap_or_else(cpu_seconds);
        self.round_trips_ns.sort_unstable();
        let at = |q: f64| {
            let v = &self.round_trips_ns;
            if v.is_empty() {
                f64::NAN
            } else {
                v[((v.len() - 1) as f64 * q) as usize] as f64 / 1000.0
            }
        };
        Outcome {
            calls: self.calls,
            seconds: (end.min(self.deadline) - self.window_start.min(end)).as_secs_f64(),
            cpu_seconds: cpu,
            p50_us: at(0.5),
            p99_us: at(0.99),
            total_seconds: (end - self.started).as_secs_f64(),
        }
    }
}

pub struct Outcome {
    pub calls: u64,
    pub seconds: f64,
    pub cpu_seconds: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub total_seconds: f64,
}

impl Outcome {
    pub fn to_json(&self, io: crate::Io, connections: usize, size: usize) -> String {
        let per_call = if self.calls > 0 { self.cpu_seconds * 1e6 / self.calls as f64 } else { f64::NAN };
        let num = |v: f64| if v.is_finite() { serde_json::json!(v) } else { serde_json::Value::Null };
        serde_json::json!({
            "io": format!("{io:?}").to_lowercase(),
            "connections": connections,
            "size": size,
            "calls": self.calls,
            "seconds": self.seconds,
            "calls_per_s": num(self.calls as f64 / self.seconds),
            "client_cpu_us_per_call": num(per_call),
            "client_cpu_cores": num(self.cpu_seconds / self.seconds),
            "p50_us": num(self.p50_us),
            "p99_us": num(self.p99_us),
            "total_seconds": self.total_seconds,
        })
        .to_string()
    }
}
