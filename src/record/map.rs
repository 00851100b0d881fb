//! What `ipcmark map` adds to a run's report (docs/map.md): in its settings,
//! the topology read, the pairs planned with their class and where the
//! shared pages were homed ([`MapSettingsRecord`]); once the run is over,
//! each mechanism's matrix and its classes ([`MapRecord`]). The figures
//! themselves are the run's `results`, each naming its `pair`: pair by pair
//! in the order of `settings.map.pairs`, each pair's figures in the order
//! of `settings.map.figures`.

use super::Status;
use serde::{Deserialize, Serialize};

/// `settings.map`: what the map measured and on what machine layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSettingsRecord {
    /// The CPUs mapped, in topology order, with where each sits.
    pub topology: TopologyRecord,
    /// Where the channels' shared pages were placed.
    pub home: HomeRecord,
    /// `--sample K`: pairs measured per class (null: every pair).
    pub sample: Option<usize>,
    /// The figures measured at each pair, in order.
    pub figures: Vec<MapFigureRecord>,
    /// The pairs measured, in the order they ran.
    pub pairs: Vec<PairRecord>,
}

/// The machine's layout as read from sysfs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyRecord {
    /// Each CPU mapped, in topology order (node, package, last-level cache, core).
    pub cpus: Vec<CpuRecord>,
    /// NUMA nodes among them.
    pub nodes: usize,
    /// What could not be read and what was assumed instead.
    pub notes: Vec<String>,
}

/// One CPU's place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuRecord {
    /// The CPU number.
    pub cpu: usize,
    /// Its package (socket).
    pub package: usize,
    /// Its core id within the package.
    pub core: usize,
    /// Its NUMA node.
    pub node: usize,
    /// Its last-level cache group (the lowest CPU sharing that cache).
    pub llc: usize,
    /// The level of that cache, where sysfs gives it.
    pub llc_level: Option<u8>,
    /// The hardware threads of its core, itself included.
    pub smt_siblings: Vec<usize>,
    /// "performance" or "efficiency" on a machine with two core types.
    pub core_type: Option<String>,
    /// Its `cpu_capacity` (1024 for the largest core), where exposed.
    pub capacity: Option<u32>,
}

/// `--home`: where the shared pages were placed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HomeRecord {
    /// What was asked: `fresh`, `writer`, `reader` or `node:N`.
    pub requested: String,
    /// Whether a memory policy was applied (false on one node, where every
    /// choice is the same node, and for `fresh`).
    pub applied: bool,
    /// What that means on this machine.
    pub note: String,
}

/// A figure measured at every pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapFigureRecord {
    /// The mechanism.
    pub benchmark: String,
    /// Its message size, bytes.
    pub size_bytes: usize,
}

/// One ordered pair of CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    /// The client's (the row's) CPU.
    pub client: usize,
    /// The server's (the column's) CPU.
    pub server: usize,
    /// Its class: `same-cpu`, `smt`, `same-llc`, …, with core types on a hybrid machine.
    pub class: String,
    /// The NUMA node its pages were preferred on, if one was.
    pub home_node: Option<usize>,
}

/// `map`: the matrices, once the run is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapRecord {
    /// One matrix per figure of `settings.map.figures`.
    pub matrices: Vec<MatrixRecord>,
}

/// One mechanism and size over every pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRecord {
    /// The mechanism.
    pub benchmark: String,
    /// Its message size, bytes.
    pub size_bytes: usize,
    /// One cell per pair of `settings.map.pairs`, in that order.
    pub cells: Vec<CellRecord>,
    /// The classes, nearest first.
    pub classes: Vec<ClassRecord>,
}

/// One pair's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The client's CPU.
    pub client: usize,
    /// The server's CPU.
    pub server: usize,
    /// How the figure ended.
    pub status: Status,
    /// The one-way median, ns (null unless measured).
    pub median_ns: Option<f64>,
    /// Its 95% interval's larger side as a fraction of the median.
    pub interval: Option<f64>,
    /// Why it was not measured, or how it failed.
    pub reason: Option<String>,
    /// The figure's index in the run's `results`.
    pub figure: usize,
}

/// The pairs of one class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    /// The class.
    pub class: String,
    /// Pairs of the class measured (ok).
    pub measured: usize,
    /// Pairs of the class planned.
    pub pairs: usize,
    /// Median of the measured pairs' medians, ns (null: none measured).
    pub median_ns: Option<f64>,
    /// Lowest pair median, ns.
    pub min_ns: Option<f64>,
    /// Highest pair median, ns.
    pub max_ns: Option<f64>,
    /// (max − min) / median: how far apart the class's pairs are.
    pub spread: Option<f64>,
}

/// Schema of `ipcmark compare`'s JSON when both runs are maps.
pub const MAP_COMPARE_SCHEMA: &str = "ipcmark.map-compare/1";

/// Two maps compared class by class (`ipcmark compare A B` of two maps).
#[derive(Debug, Serialize, Deserialize)]
pub struct MapCompareRecord {
    /// [`MAP_COMPARE_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: super::build::BuildRecord,
    /// Significance level of the tests.
    pub alpha: f64,
    /// The baseline.
    pub a: super::compare::Side,
    /// The map compared with it.
    pub b: super::compare::Side,
    /// One row per matrix and class present in both.
    pub classes: Vec<ClassChangeRecord>,
    /// Matrices or classes in one map only.
    pub unmatched: Vec<String>,
}

/// One class of one matrix in both maps.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClassChangeRecord {
    /// The mechanism.
    pub benchmark: String,
    /// Its message size, bytes.
    pub size_bytes: usize,
    /// The class.
    pub class: String,
    /// Pairs measured in A.
    pub pairs_a: usize,
    /// Pairs measured in B.
    pub pairs_b: usize,
    /// A's class median (of its pairs' medians), ns.
    pub median_a_ns: f64,
    /// B's, ns.
    pub median_b_ns: f64,
    /// (B − A) / A, percent.
    pub change_percent: f64,
    /// Welch's t on the logs of the class's pass medians (every pair's
    /// passes), two-sided; null when a side has fewer than two.
    pub p: Option<f64>,
    /// Interval of the ratio of geometric means B / A at 1 − alpha.
    pub ratio_interval: Option<super::compare::IntervalRecord>,
    /// "slower", "faster", "no significant difference", or why untested.
    pub verdict: String,
}
