//! The record of `ipcmark selftest --json` (schema `ipcmark.selftest/1`):
//! A/A pairs of one short suite run back to back, each pair compared by
//! `compare`'s own test, and what that says of the test on this machine:
//! how often it flagged a figure that did not change (its false-positive
//! rate, against α), how far the machine's speed moved between two runs
//! a few seconds apart (the common shift), which figures it flagged, and
//! how often `check`, judging each pair, failed it (a false failure).
//! Built in `analysis::selftest`; kept in the history's `selftests` table
//! (schema version 4) beside the runs it names.

use super::build::BuildRecord;
use super::compare::{CommonShift, IntervalRecord};
use serde::{Deserialize, Serialize};

/// Schema of the selftest JSON.
pub const SELFTEST_SCHEMA: &str = "ipcmark.selftest/1";

/// One A/A pair: two runs of the suite, back to back, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelftestPair {
    /// Its place, from 1.
    pub pair: usize,
    /// The history's id of its first run (A), if it was saved.
    pub run_a: Option<i64>,
    /// The history's id of its second run (B), if it was saved.
    pub run_b: Option<i64>,
    /// Figures both runs measured and compare tested.
    pub compared: usize,
    /// Of those, how many its test called significant (p < α).
    pub flagged: usize,
    /// Of those, how many were significant beyond the pair's common shift
    /// (as `check` judges); equal to `flagged` where there is no shift.
    pub flagged_beyond_shift: usize,
    /// How much every figure moved together from A to B (null with fewer
    /// than five figures).
    pub common_shift: Option<CommonShift>,
    /// Whether `check` failed the pair at the selftest's
    /// `--max-regression` (a false failure); absent from selftests before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_failed: Option<bool>,
}

/// One figure of the suite over all pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelftestFigure {
    /// Mechanism or benchmark.
    pub benchmark: String,
    /// Mode, with how it was timed.
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// Pairs in which it was compared.
    pub compared: usize,
    /// Pairs in which compare called it significant.
    pub flagged: usize,
    /// Pairs in which it was significant beyond the common shift.
    pub flagged_beyond_shift: usize,
    /// Median over its pairs of its minimum detectable change (a fraction,
    /// 80% power at α); null where compare gave none.
    pub median_min_detectable_change: Option<f64>,
}

/// A false-positive rate: figures flagged ÷ figures compared over every
/// pair, with its 95% binomial (Wilson) interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Figures flagged.
    pub flagged: usize,
    /// Figures compared.
    pub compared: usize,
    /// flagged ÷ compared (null when nothing was compared).
    pub rate: Option<f64>,
    /// Its 95% Wilson interval (null when nothing was compared).
    pub interval: Option<IntervalRecord>,
}

/// How often `ipcmark check` failed an A/A pair: A and B measured the
/// same code on the same machine, so every failure is a false one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckFalseFailures {
    /// The `--max-regression` each pair was judged at, a fraction.
    pub max_regression: f64,
    /// The common shift check took out of its verdicts, at most (a
    /// fraction), as a check on this host would when the selftest began.
    pub max_common_shift: f64,
    /// Where that bound came from: `selftest N` (the host's newest
    /// selftest before this one) or `default`.
    pub max_common_shift_from: String,
    /// Pairs judged.
    pub pairs: usize,
    /// Pairs check failed.
    pub failed: usize,
    /// failed ÷ pairs (null when no pair was judged).
    pub rate: Option<f64>,
    /// Its 95% Wilson interval (null when no pair was judged).
    pub interval: Option<IntervalRecord>,
}

/// The machine's run-to-run shift over the pairs (each pair's common
/// factor B / A).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftSpread {
    /// Pairs with a common shift.
    pub pairs: usize,
    /// Median of the factors.
    pub median: f64,
    /// Median of |factor − 1|: how far a run typically is from the one
    /// before it.
    pub median_abs_change: f64,
    /// Smallest factor.
    pub low: f64,
    /// Largest factor.
    pub high: f64,
    /// Pairs whose shift was significant (its interval excludes 1).
    pub significant: usize,
}

/// The whole selftest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelftestReport {
    /// [`SELFTEST_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    /// The host it ran on.
    pub host: String,
    /// When it started and ended (RFC 3339).
    pub started_at: String,
    /// When it ended.
    pub finished_at: String,
    /// The suite: the `ipcmark run` arguments of each run, program name
    /// left out.
    pub suite: Vec<String>,
    /// Significance level of compare's test.
    pub alpha: f64,
    /// The most the false-positive rate may be and pass: α + 0.02.
    pub limit: f64,
    /// Pairs asked for.
    pub pairs_asked: usize,
    /// Pairs done (fewer when stopped or when a run failed).
    pub pairs_done: usize,
    /// Why it ended early (a signal, a failed run); null when it did not.
    pub stopped: Option<String>,
    /// Every pair done, in order.
    pub pairs: Vec<SelftestPair>,
    /// Every figure compared in any pair.
    pub figures: Vec<SelftestFigure>,
    /// compare's false-positive rate: its test's verdicts as they are.
    pub false_positives: Rate,
    /// The rate of figures significant beyond each pair's common shift.
    pub false_positives_beyond_shift: Rate,
    /// The common shift across pairs (null when no pair had one).
    pub shift: Option<ShiftSpread>,
    /// `check`'s false-failure rate on the pairs at `--max-regression`;
    /// absent from selftests before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_false_failures: Option<CheckFalseFailures>,
    /// The false-positive rate is at most `limit` (exit 0); else exit 1.
    /// False when nothing was compared.
    pub passed: bool,
}
