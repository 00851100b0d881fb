//! What a report says of its figures as a whole: the cost model fitted on
//! each mechanism's sizes and the warnings about the conditions they ran
//! under.

use serde::{Deserialize, Serialize};

/// One range of sizes and its line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Smallest size in the range, bytes.
    pub from_bytes: usize,
    /// Largest size in the range, bytes.
    pub to_bytes: usize,
    /// Fixed cost of a transfer, ns (the intercept).
    pub setup_ns: f64,
    /// Cost per byte, ns (the slope).
    pub per_byte_ns: f64,
    /// Coefficient of determination over the range's points (one per size).
    pub r2: f64,
    /// 95% confidence interval of `setup_ns`.
    pub setup_ci_ns: [f64; 2],
    /// 95% confidence interval of `per_byte_ns`.
    pub per_byte_ci_ns: [f64; 2],
    /// Sizes fitted: one point each, its median one-way time.
    pub sizes: usize,
}

/// The cost model of one mechanism (`cost_models[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Mechanism id.
    pub benchmark: String,
    /// Whether its messages used cold buffers (`--cold`): a separate model.
    pub cold: bool,
    /// Ranges of sizes in increasing order; more than one where the per-byte
    /// cost changes (a breakpoint: cache sizes, buffer limits).
    pub segments: Vec<Segment>,
}

/// A warning as saved in the report (`warnings[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarningRecord {
    /// Stable kind.
    pub kind: String,
    /// The message shown to the user.
    pub message: String,
}
