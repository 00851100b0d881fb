//! The records of `ipcmark compare --json` (schema `ipcmark.compare/1`), in
//! the order the report writes them, and the records of the statistics it
//! embeds (built from `stats::compare`'s types in `analysis::compare`).

use super::build::BuildRecord;
use serde::{Deserialize, Serialize};

/// Schema of the comparison JSON.
pub const COMPARE_SCHEMA: &str = "ipcmark.compare/1";

/// Which test decided a result's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Welch's t on the logs of the pass medians (both runs had passes).
    WelchPasses,
    /// Mann–Whitney U on the samples (a run had one pass).
    MannWhitneySamples,
}

/// One side's identity in the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub path: String,
    pub started_at: String,
    pub hostname: String,
    pub kernel: String,
}

/// One matched result.
#[derive(Debug, Serialize, Deserialize)]
pub struct Comparison {
    pub benchmark: String,
    pub mode: String,
    pub size_bytes: usize,
    pub median_a_ns: f64,
    pub median_b_ns: f64,
    pub diff_ns: f64,
    pub diff_percent: f64,
    /// The test the verdict is the one of.
    pub test: Test,
    /// p of that test.
    pub p: f64,
    /// Mann–Whitney U on the samples (the verdict's test only without passes).
    pub mann_whitney: MannWhitneyRecord,
    /// Welch's t on the logs of the pass medians, when both runs had passes.
    pub welch: Option<WelchRecord>,
    /// Interval of B / A at 1 − alpha: Welch's (of the geometric means of the
    /// pass medians) with passes, else a bootstrap of the ratio of medians.
    pub ratio_interval: Option<IntervalRecord>,
    /// Whether that interval excludes 1 (beside the test's p, which may disagree at the edge).
    pub interval_excludes_one: Option<bool>,
    /// The verdict: p < alpha.
    pub significant: bool,
    /// "slower", "faster" or "no significant difference" (B relative to A).
    pub verdict: String,
    /// The same test with B's samples divided by the common shift: whether
    /// this result moved beyond what all results moved together.
    pub beyond_shift: Option<Beyond>,
}

/// A result's difference beyond the shift common to all results.
#[derive(Debug, Serialize, Deserialize)]
pub struct Beyond {
    /// p of the result's test with B divided by the shift factor.
    pub p: f64,
    /// p < alpha.
    pub significant: bool,
    /// "slower", "faster" or "no significant difference", beyond the shift.
    pub verdict: String,
}

/// How much every result moved together from A to B: the median over
/// results of median(B) / median(A), with a bootstrap interval over results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommonShift {
    /// The factor B / A.
    pub factor: f64,
    /// Its interval at 1 − alpha (results resampled).
    pub interval: IntervalRecord,
    /// Whether the interval excludes 1.
    pub significant: bool,
    /// Results it is the median of.
    pub results: usize,
}

/// A result present on one side only, or not measured on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unmatched {
    pub benchmark: String,
    pub mode: String,
    pub size_bytes: usize,
    pub why: String,
}

/// The whole comparison.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompareReport {
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    pub alpha: f64,
    pub a: Side,
    pub b: Side,
    pub comparisons: Vec<Comparison>,
    /// Null with fewer than [`super::SHIFT_MIN_RESULTS`] results.
    pub common_shift: Option<CommonShift>,
    pub unmatched: Vec<Unmatched>,
}

/// A confidence interval (`stats::compare::Interval`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// A two-sided Mann–Whitney U test (`stats::compare::MannWhitney`).
#[derive(Debug, Serialize, Deserialize)]
pub struct MannWhitneyRecord {
    /// U statistic of the first sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether the p-value is exact or from the normal approximation.
    pub exact: bool,
}

/// Welch's t test on the logs of replicates (`stats::compare::Welch`).
#[derive(Debug, Serialize, Deserialize)]
pub struct WelchRecord {
    /// Two-sided p-value.
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Interval of the ratio of geometric means B / A.
    pub ratio_interval: IntervalRecord,
}
