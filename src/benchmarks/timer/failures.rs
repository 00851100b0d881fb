//! `timer-failures`: the RTOS study's interrupt-response failures under
//! periodic events. For each frequency f of `--frequencies` a task wakes at
//! deadlines T = 1/f apart; a wake-up later than T × P (`--tolerance` P)
//! after its deadline is a failure, and Fail_sys = failures ÷ wake-ups,
//! one figure per frequency (the study's Figure 1).

use crate::engine::models::periodic::{Model, Periodic, PeriodicInfo, PeriodicSettings};
use std::time::Duration;

/// The failure-count benchmark.
pub struct Failures;

/// Periods per frequency wanted for a stable count.
const PERIODS: f64 = 2000.0;

/// Bounds on one frequency's run without `--duration`: at least long enough
/// for a count at high frequencies, at most short enough that the five
/// default frequencies take about 22 s together (60 Hz is the one capped).
fn bounds(quick: bool) -> (f64, f64) {
    if quick { (0.5, 2.0) } else { (1.0, 10.0) }
}

impl Periodic for Failures {
    fn info(&self) -> PeriodicInfo {
        PeriodicInfo {
            id: "timer-failures",
            summary: "wake-ups later than --tolerance × period, per frequency of --frequencies (RTOS study's Fail_sys)",
            group: super::GROUP,
        }
    }

    fn plan(&self, s: &PeriodicSettings) -> Vec<Model> {
        let (low, high) = bounds(s.quick);
        s.frequencies
            .iter()
            .map(|&f| {
                let duration = s
                    .duration
                    .unwrap_or_else(|| Duration::from_secs_f64((PERIODS / f).clamp(low, high)));
                Model::Wakeups {
                    period: Duration::from_secs_f64(1.0 / f),
                    duration,
                    tolerance: Some(s.tolerance),
                }
            })
            .collect()
    }
}
