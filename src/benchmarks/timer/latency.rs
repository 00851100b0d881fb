//! `timer-latency`: a cyclictest-like task sleeping with
//! `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to successive deadlines
//! `--period` apart for `--duration`; the figure is the distribution of
//! wake-up latencies (wake time − deadline).

use crate::engine::models::periodic::{Model, Periodic, PeriodicInfo, PeriodicSettings};
use std::time::Duration;

/// The wake-up latency benchmark.
pub struct Latency;

/// Length of a run without `--duration`; `--quick` runs one second.
const DEFAULT_DURATION: Duration = Duration::from_secs(5);

impl Periodic for Latency {
    fn info(&self) -> PeriodicInfo {
        PeriodicInfo {
            id: "timer-latency",
            summary: "wake-up latency of a task sleeping to absolute deadlines one --period apart (cyclictest)",
            group: super::GROUP,
        }
    }

    fn plan(&self, s: &PeriodicSettings) -> Vec<Model> {
        let duration = s.duration.unwrap_or(if s.quick {
            Duration::from_secs(1)
        } else {
            DEFAULT_DURATION
        });
        vec![Model::Wakeups {
            period: s.period,
            duration,
            tolerance: None,
        }]
    }
}
