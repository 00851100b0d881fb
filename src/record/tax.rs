//! The report of `ipcmark tax` (`ipcmark.tax/1`): the same figures measured
//! bare and under each isolation layer, the variants interleaved pass by
//! pass, and each layer's difference from bare per figure with compare's
//! test behind it (docs/tax.md).

use super::build::BuildRecord;
use super::compare::PartsMoved;
use super::facts::IntervalRecord;
use serde::{Deserialize, Serialize};

/// The `schema` of a tax report.
pub const TAX_SCHEMA: &str = "ipcmark.tax/1";

/// `ipcmark tax`'s report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxReport {
    /// [`TAX_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    /// The host it ran on.
    pub host: String,
    /// The kernel it ran on.
    pub kernel: String,
    /// When it started and ended (RFC 3339).
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// Passes asked for: each variant (bare and every layer) ran once per
    /// pass, in an order rotated from pass to pass.
    pub passes: usize,
    /// Passes every variant completed (fewer when stopped).
    pub passes_done: usize,
    /// The significance level of each cell's test.
    pub alpha: f64,
    /// The boot-time speculation mitigations the kernel reports
    /// (/sys/devices/system/cpu/vulnerabilities: name, state), recorded
    /// because no layer can change them at run time.
    pub mitigations: Vec<(String, String)>,
    /// Every layer asked for: how it was applied, or why not.
    pub layers: Vec<LayerRecord>,
    /// Each figure's bare centre and its difference under each layer.
    pub rows: Vec<TaxRow>,
    /// The signal that stopped the study, if one did.
    pub stopped: Option<i32>,
    /// With `--explain`: how the anatomies were made, and each one that
    /// could not be.
    #[serde(default)]
    pub explain: Option<TaxExplainRecord>,
}

/// What `--explain` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxExplainRecord {
    /// Round trips (operations) in each traced pass.
    pub round_trips: usize,
    /// The pass the anatomies were made in (the last).
    pub pass: usize,
    /// "variant: figure: why" for each anatomy that could not be made.
    pub unexplained: Vec<String>,
}

/// A layer and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerRecord {
    /// As asked (`cgroup`, `cpu-max:20ms/100ms`, `seccomp:args:100`, …).
    pub name: String,
    /// `applied`, `partial` (a combined layer with some parts left out),
    /// `skipped` (before any pass: it cannot be applied here) or `failed`
    /// (a pass under it failed to start).
    pub status: String,
    /// How it was applied: what each pass's processes were put in or under.
    pub how: Vec<String>,
    /// Why it, or a part of it, was not applied.
    pub reasons: Vec<String>,
    /// A seccomp layer's rules (calls allowed, or argument comparisons).
    pub seccomp_rules: Option<usize>,
    /// A cgroup layer's cgroup version (`v1` or `v2`).
    pub cgroup_version: Option<String>,
    /// A CPU quota's throttling over all its passes.
    pub throttling: Option<ThrottlingRecord>,
}

/// What the cpu controller counted over a layer's passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThrottlingRecord {
    /// Enforcement periods that elapsed with a runnable task.
    pub periods: u64,
    /// Periods in which the cgroup was throttled.
    pub throttled_periods: u64,
    /// Time throttled, ns.
    pub throttled_ns: u64,
}

/// One figure: its bare centre and a cell per layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxRow {
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// How it was timed (`pingpong`, `op`, …).
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// The bare figure's median over its pooled samples, ns (null where
    /// bare did not measure it).
    pub bare_median_ns: Option<f64>,
    /// The bare figure's p99 (median of its passes' p99), ns.
    pub bare_p99_ns: Option<f64>,
    /// The bare figure's largest single time over its passes, ns.
    pub bare_max_ns: Option<f64>,
    /// The bare figure's median in each pass, in pass order (empty where
    /// it was not measured in every pass).
    #[serde(default)]
    pub bare_pass_medians_ns: Vec<f64>,
    /// One cell per applied layer, in the layers' order.
    pub cells: Vec<TaxCell>,
    /// With `seccomp:args:N` layers of two N or more: the line through
    /// their differences against N.
    pub rule_cost: Option<RuleCostRecord>,
}

/// What an argument-inspecting filter costs a figure: a fixed part for
/// having a filter at all and a part per rule, the least-squares line
/// through each `seccomp:args:N` layer's difference against N.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleCostRecord {
    /// The slope: ns per rule.
    pub per_rule_ns: f64,
    /// The intercept: ns for a filter of no rule (the filter's own entry).
    pub fixed_ns: f64,
    /// The N the line was fitted over.
    pub rules: Vec<usize>,
}

/// A figure under a layer, against bare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxCell {
    /// The layer's name.
    pub layer: String,
    /// `ok`, or why there is no difference to give (`failed: …`,
    /// `skipped: …`, `not measured bare`).
    pub status: String,
    /// The median under the layer, ns.
    pub median_ns: Option<f64>,
    /// The median under the layer in each pass, in pass order: pass `i`
    /// pairs with bare's `i` (empty where the layer has no figure).
    #[serde(default)]
    pub pass_medians_ns: Vec<f64>,
    /// Layer − bare, ns: with the paired test, bare's median times the
    /// geometric mean of the passes' ratios layer / bare, less bare's
    /// median (the centre of its interval); else the difference of the
    /// pooled medians.
    pub diff_ns: Option<f64>,
    /// Layer − bare, % of bare.
    pub diff_percent: Option<f64>,
    /// The interval of the difference at 1 − alpha, ns (the interval of
    /// the ratio of the pass medians, times the bare median).
    pub diff_interval_ns: Option<IntervalRecord>,
    /// p of the test: paired t on the logs of each pass's ratio layer /
    /// bare (`paired-passes`, both sides measured in the same passes);
    /// Welch on the logs of the pass medians where the passes do not pair;
    /// Mann–Whitney on the samples where a side had a single pass.
    pub p: Option<f64>,
    /// The test behind `p`.
    pub test: Option<String>,
    /// `p` adjusted over every cell of the ledger (Benjamini–Hochberg):
    /// the ledger is one family of tests, and of 80 cells tested at 0.05
    /// each about four would differ by chance alone.
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// `p_adjusted` < alpha (`p` < alpha in a report written before it).
    pub significant: bool,
    /// The p99 under the layer (median of its passes' p99), ns.
    pub p99_ns: Option<f64>,
    /// The largest single time under the layer over its passes, ns.
    pub max_ns: Option<f64>,
    /// A `seccomp:args:N` layer: the difference ÷ N, ns (a filter's fixed
    /// cost included: `rule_cost` separates the two where two N or more
    /// were measured).
    pub per_rule_ns: Option<f64>,
    /// With `--explain`: each part of the anatomy under the layer against
    /// bare's, the largest change first (both cut by one method).
    #[serde(default)]
    pub parts: Option<PartsMoved>,
}

/// The `schema` of two tax reports compared.
pub const TAX_COMPARE_SCHEMA: &str = "ipcmark.tax-compare/1";

/// `ipcmark compare A.json B.json` of two tax reports: for every figure
/// and layer both measured, whether the layer costs more in B than in A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxCompareReport {
    /// [`TAX_COMPARE_SCHEMA`].
    pub schema: String,
    /// The build that compared them.
    pub build: BuildRecord,
    /// The significance level of each change's test.
    pub alpha: f64,
    /// The baseline.
    pub a: TaxSide,
    /// The report compared with it.
    pub b: TaxSide,
    /// One per (figure, layer) both measured with pass medians.
    pub changes: Vec<TaxChange>,
    /// (figure, layer) pairs not compared, and why.
    pub unmatched: Vec<TaxUnmatched>,
    /// Layers applied differently (`applied` in one, `skipped` in the other…).
    pub layers_differ: Vec<Differs>,
    /// Boot-time mitigations whose state differs (absent on a side: null).
    pub mitigations_differ: Vec<Differs>,
}

/// One side of a tax comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxSide {
    /// The file as named.
    pub path: String,
    /// Its host and kernel.
    pub host: String,
    /// Its kernel.
    pub kernel: String,
    /// When it started.
    pub started_at: String,
    /// Passes every variant completed.
    pub passes_done: usize,
}

/// What one layer costs one figure in A and in B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxChange {
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// How it was timed.
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// The layer.
    pub layer: String,
    /// The layer's difference from bare in A, ns and % of A's bare, and
    /// whether A's own test found it.
    pub diff_a_ns: f64,
    /// In % of A's bare.
    pub diff_a_percent: f64,
    /// A's cell was significant.
    pub significant_a: bool,
    /// The same in B.
    pub diff_b_ns: f64,
    /// In % of B's bare.
    pub diff_b_percent: f64,
    /// B's cell was significant.
    pub significant_b: bool,
    /// How much more (or less) the figure costs under the layer in B than
    /// in A, relative to each one's bare: (B's ratio layer / bare ÷ A's)
    /// − 1, in %, from the geometric means of each side's pass ratios.
    pub change_percent: f64,
    /// Its interval at 1 − alpha, in %.
    pub change_interval_percent: IntervalRecord,
    /// p of Welch's t on the logs of the two sides' pass ratios.
    pub p: f64,
    /// `p` adjusted over every change compared (Benjamini–Hochberg), as a
    /// ledger's cells are.
    pub p_adjusted: f64,
    /// `p_adjusted` < alpha.
    pub significant: bool,
    /// `costs more`, `costs less`, `no significant change`.
    pub verdict: String,
}

/// A (figure, layer) not compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaxUnmatched {
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// How it was timed.
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// The layer.
    pub layer: String,
    /// Why (`only in A`, `no pass medians in B`, `A: failed: …`).
    pub why: String,
}

/// A name whose value differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Differs {
    /// The layer or mitigation.
    pub name: String,
    /// Its value in A (null: absent).
    pub a: Option<String>,
    /// In B.
    pub b: Option<String>,
}
