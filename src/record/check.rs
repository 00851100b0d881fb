//! The record of `ipcmark check --json` (schema `ipcmark.check/1`): every
//! figure the baseline and the run share, whether it regressed beyond the
//! threshold and beyond the machine's common shift, and the verdict the
//! exit code gives. Built in `analysis::check` from `analysis::compare`'s
//! comparison.

use super::build::BuildRecord;
use super::compare::{CommonShift, Side, Unmatched};
use serde::{Deserialize, Serialize};

/// Schema of the check JSON.
pub const CHECK_SCHEMA: &str = "ipcmark.check/1";

/// One figure of the run against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckFigure {
    /// Mechanism or benchmark.
    pub benchmark: String,
    /// Mode, with how it was timed.
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// The baseline's median, ns.
    pub baseline_ns: f64,
    /// The run's median, ns.
    pub run_ns: f64,
    /// Relative change: run / baseline − 1.
    pub change: f64,
    /// Relative change with the common shift divided out (null without one).
    pub beyond_shift: Option<f64>,
    /// p of the test that decided (`compare`'s, beyond the shift where
    /// there is one).
    pub p: f64,
    /// p < alpha.
    pub significant: bool,
    /// Significantly slower, by more than the threshold (beyond the shift
    /// where there is one).
    pub regressed: bool,
    /// `compare`'s minimum detectable change (a fraction, 80% power at
    /// alpha); absent where compare had none and in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_detectable_change: Option<f64>,
}

/// A figure the baseline measured that the run did not: failed, skipped
/// or absent there. It fails the check unless the flag that allows it was
/// given (`--allow-skipped`, `--allow-missing`; a failure is never allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostFigure {
    /// Mechanism or benchmark.
    pub benchmark: String,
    /// Mode, with how it was timed.
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// What became of it in the run: `failed`, `skipped` or `absent`.
    pub in_run: String,
    /// Why, as the run says (its skip reason or error); null when absent.
    pub reason: Option<String>,
    /// Whether a flag allowed it (it then does not fail the check).
    pub allowed: bool,
}

/// How far the common shift may go and still be taken out of the figures'
/// verdicts as the machine's run-to-run level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftBound {
    /// The largest |factor − 1| taken out, a fraction.
    pub bound: f64,
    /// Where it comes from: `--max-common-shift`, `selftest N` (the
    /// largest shift of that selftest's A/A pairs on the run's host) or
    /// `default`.
    pub from: String,
    /// The shift went beyond it: the whole run moved, which fails the
    /// check, and the figures are judged as they moved.
    pub exceeded: bool,
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// [`CHECK_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    /// The baseline.
    pub baseline: Side,
    /// The run checked.
    pub run: Side,
    /// The largest slowdown allowed, a fraction (0.05 for 5%).
    pub max_regression: f64,
    /// Significance level of the tests.
    pub alpha: f64,
    /// How much every figure moved together (the machine's speed), which
    /// the verdicts leave out; null with fewer than five figures.
    pub common_shift: Option<CommonShift>,
    /// Every figure both measured.
    pub figures: Vec<CheckFigure>,
    /// Figures only one side measured.
    pub unmatched: Vec<Unmatched>,
    /// Figures the baseline measured and the run did not (each fails the
    /// check unless allowed); absent from reports written before it.
    #[serde(default)]
    pub lost: Vec<LostFigure>,
    /// The bound on the common shift the verdicts leave out; null without a
    /// shift and in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift_bound: Option<ShiftBound>,
    /// The two runs' placement probes side by side, where both have one
    /// (`compare`'s); absent otherwise and in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<super::compare::PlacementDifference>,
    /// Where the placement differs: whether the figures were judged all the
    /// same (`--allow-placement-change`); without it the check fails on the
    /// placement and calls no figure a regression of the code.
    #[serde(default)]
    pub placement_allowed: bool,
    /// How many regressed.
    pub regressions: usize,
    /// No figure regressed, none the baseline measured was lost but as
    /// allowed, the common shift stayed within its bound and the host placed
    /// the CPUs alike (or that was allowed) (exit 0); else exit 1.
    pub passed: bool,
}
