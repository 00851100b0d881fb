//! The records of `ipcmark compare --json` (schema `ipcmark.compare/1`), in
//! the order the report writes them, and the records of the statistics it
//! embeds (built from `stats::compare`'s types in `analysis::compare`).

use super::build::BuildRecord;
use super::doctor::CheckStatus;
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The smallest change of B relative to A (a fraction: 0.05 = 5%) that
    /// `test` at alpha would have found with 80% power, from the spread
    /// this result showed: Welch's on the logs of the pass medians, or a
    /// normal approximation on the logs of the samples for Mann–Whitney.
    /// Absent where it could not be computed and in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_detectable_change: Option<f64>,
    /// The verdict: p < alpha.
    pub significant: bool,
    /// "slower", "faster" or "no significant difference" (B relative to A).
    pub verdict: String,
    /// The same test with B's samples divided by the common shift: whether
    /// this result moved beyond what all results moved together.
    pub beyond_shift: Option<Beyond>,
    /// Where the round trip moved, part by part, when both runs explained
    /// the figure (`ipcmark explain`) by one method; absent otherwise and in
    /// reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<PartsMoved>,
}

/// Which parts of an explained figure's round trip moved from A to B: the
/// two traced passes' means, part by part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartsMoved {
    /// A's traced mean round trip, ns (the sum of its parts' means).
    pub round_trip_a_ns: f64,
    /// B's, ns.
    pub round_trip_b_ns: f64,
    /// Every part either run has, matched by name (a part one run lacks
    /// is 0 there), the largest change first.
    pub parts: Vec<PartMove>,
    /// The part whose mean changed most (either way); none when no part changed.
    pub moved_most: Option<String>,
}

/// One part's mean per round trip in each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartMove {
    /// The part's name, as in `explain.parts[]`.
    pub name: String,
    /// Its mean per round trip in A, ns (0: A has no such part).
    pub mean_a_ns: f64,
    /// In B, ns.
    pub mean_b_ns: f64,
    /// B − A, ns.
    pub change_ns: f64,
    /// Its change over the round trip's change (the shares add up to 1);
    /// null when the round trip did not change.
    pub share_of_change: Option<f64>,
}

/// A result's difference beyond the shift common to all results.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The machine's checks that differ between the runs (their ids, see
    /// `checks_differ`), which may explain the shift; empty when none do
    /// and the shift is the machine's level (left out then, and in
    /// reports written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explained_by: Vec<String>,
}

/// A check of the machine that differs between the two runs, in its
/// verdict or in what it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckDifference {
    /// The check's id (`ipcmark doctor`'s).
    pub id: String,
    /// Its verdict in A (null: not taken there).
    pub status_a: Option<CheckStatus>,
    /// Its verdict in B (null: not taken there).
    pub status_b: Option<CheckStatus>,
    /// What changed, in words: "warn → pass", or what it found in A → in B.
    pub change: String,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The machine's checks at each run's start that differ between the
    /// two (verdict, or what a check that reads a setting found); null
    /// where a run has no checks (written before runs carried them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_differ: Option<Vec<CheckDifference>>,
    /// The two runs' placement probes side by side, where both have one;
    /// absent otherwise and in reports written before them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementDifference>,
    pub unmatched: Vec<Unmatched>,
}

/// The placement probes of two runs (`placement_probe`, docs/trust.md):
/// each run's cache-line round trip between its measured CPUs (the median
/// over its probes), the class each suggests, and whether they differ
/// beyond the probes' own spread, as the probes within one run are judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementDifference {
    /// A's CPUs.
    pub cpus_a: [usize; 2],
    /// B's CPUs.
    pub cpus_b: [usize; 2],
    /// A's round trip, ns.
    pub round_trip_a_ns: f64,
    /// B's round trip, ns.
    pub round_trip_b_ns: f64,
    /// The class A's round trip suggests.
    pub class_a: String,
    /// The class B's round trip suggests.
    pub class_b: String,
    /// Whether the host placed the CPUs differently in the two runs.
    pub differ: bool,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MannWhitneyRecord {
    /// U statistic of the first sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether the p-value is exact or from the normal approximation.
    pub exact: bool,
}

/// Welch's t test on the logs of replicates (`stats::compare::Welch`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WelchRecord {
    /// Two-sided p-value.
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Interval of the ratio of geometric means B / A.
    pub ratio_interval: IntervalRecord,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison written before `min_detectable_change` existed still reads.
    #[test]
    fn a_comparison_without_its_minimum_detectable_change_reads() {
        let old = r#"{"benchmark": "pipe", "mode": "pingpong", "size_bytes": 64,
            "median_a_ns": 1000.0, "median_b_ns": 1100.0, "diff_ns": 100.0,
            "diff_percent": 10.0, "test": "mann-whitney-samples", "p": 0.01,
            "mann_whitney": {"u": 3.0, "p": 0.01, "exact": true}, "welch": null,
            "ratio_interval": null, "interval_excludes_one": null,
            "significant": true, "verdict": "slower", "beyond_shift": null}"#;
        let c: Comparison = serde_json::from_str(old).unwrap();
        assert_eq!(c.min_detectable_change, None);
        let mut with = serde_json::to_value(&c).unwrap();
        assert!(with.get("min_detectable_change").is_none());
        with["min_detectable_change"] = 0.12.into();
        let c: Comparison = serde_json::from_value(with).unwrap();
        assert_eq!(c.min_detectable_change, Some(0.12));
    }
}
