//! What a score figure records (JSON `score`): the score, the rate, each
//! interval, the threads and counters, the checks made.

use super::contract::{ScoreInfo, ScoreSettings};
use super::reporter::Reports;
use crate::stats::quantile_sorted;

/// One thread as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRecord {
    /// Name ("thread 0").
    pub name: &'static str,
    /// The benchmark's priority (Thread-Metric: lower is more urgent).
    pub priority: u8,
    /// SCHED_FIFO priority it ran at; null under SCHED_OTHER.
    pub fifo_priority: Option<i32>,
}

/// One counter at the last report.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterRecord {
    /// Name ("thread 0", "interrupt handler").
    pub name: &'static str,
    /// Its value.
    pub value: u64,
}

/// What a score figure recorded (JSON `score`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreFacts {
    /// What one operation is.
    pub operation: &'static str,
    /// Planned counting period, ns.
    pub period_ns: u64,
    /// Measured length from the start to the last report, ns.
    pub elapsed_ns: u64,
    /// The score S: operations completed in the period.
    pub operations: u64,
    /// operations ÷ elapsed, per second.
    pub ops_per_s: f64,
    /// Whether this test is the baseline others are normalised by.
    pub is_baseline: bool,
    /// The baseline that ran in the same run, if one did.
    pub baseline: Option<&'static str>,
    /// R = this rate ÷ the baseline's rate (S / H); null without a baseline.
    pub relative_to_baseline: Option<f64>,
    /// Operations in each reporting interval.
    pub interval_operations: Vec<u64>,
    /// Length of each reporting interval, ns.
    pub interval_ns: Vec<u64>,
    /// (max − min) ÷ median of the intervals' rates.
    pub interval_spread: f64,
    /// Intervals in which no operation completed (RT throttling pauses
    /// every SCHED_FIFO thread of the CPU for up to 50 ms a second): they
    /// count in the score and the rates, and have no time per operation.
    pub intervals_without_operation: usize,
    /// Scheduling policy of the test's threads.
    pub sched_policy: &'static str,
    /// The test's threads.
    pub threads: Vec<ThreadRecord>,
    /// Every counter at the last report.
    pub counters: Vec<CounterRecord>,
    /// The checks made at every report (all passed when the status is ok).
    pub checks: Vec<&'static str>,
}

/// Why a score figure did not produce a figure, with what was recorded so far.
pub struct ScoreFailure {
    /// One line.
    pub message: String,
    /// The counters and threads up to the failure, if the test started.
    pub facts: Option<Box<ScoreFacts>>,
}

impl From<String> for ScoreFailure {
    fn from(message: String) -> Self {
        ScoreFailure {
            message,
            facts: None,
        }
    }
}

/// The record of a test that reported `r` (all of them, or those up to a
/// failure).
pub(super) fn facts(
    info: &ScoreInfo,
    s: &ScoreSettings,
    r: &Reports,
    counter_names: &[&'static str],
    score: &[usize],
    threads: &[ThreadRecord],
    checks: &[&'static str],
) -> ScoreFacts {
    let ops = r.operations(score);
    let lengths = r.lengths();
    let mut rates: Vec<f64> = ops
        .iter()
        .zip(&lengths)
        .map(|(&n, &t)| n as f64 / t.max(1) as f64)
        .collect();
    rates.sort_by(f64::total_cmp);
    let median = quantile_sorted(&rates, 0.5);
    let spread = if median > 0.0 {
        (rates[rates.len() - 1] - rates[0]) / median
    } else {
        0.0
    };
    let last = r.counters.len() - 1;
    let operations = r.score_at(last, score);
    let elapsed = r.elapsed();
    ScoreFacts {
        operation: info.operation,
        period_ns: s.period.as_nanos() as u64,
        elapsed_ns: elapsed,
        operations,
        ops_per_s: operations as f64 / (elapsed.max(1) as f64 * 1e-9),
        is_baseline: info.is_baseline,
        baseline: None,
        relative_to_baseline: None,
        intervals_without_operation: ops.iter().filter(|&&n| n == 0).count(),
        interval_operations: ops,
        interval_ns: lengths,
        interval_spread: spread,
        sched_policy: if s.fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
        threads: threads.to_vec(),
        counters: counter_names
            .iter()
            .zip(&r.counters[last])
            .map(|(&name, &value)| CounterRecord { name, value })
            .collect(),
        checks: checks.to_vec(),
    }
}
