//! The records of `ipcmark watch --json` (schema `ipcmark.watch/1`): the
//! change points of every figure series of the history, each with its
//! verdict, and the changes grouped by the run they happened at, with what
//! changed on the machine beside them. Built in `analysis::watch`.

use super::build::BuildRecord;
use super::compare::IntervalRecord;
use serde::{Deserialize, Serialize};

/// Schema of the watch JSON.
pub const WATCH_SCHEMA: &str = "ipcmark.watch/1";

/// What a change means for the figure (lower latency is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The figure got slower, by at least the minimum magnitude and by more
    /// than the series' own run-to-run noise.
    Regression,
    /// The figure got faster, likewise.
    Improvement,
    /// Significant, but below the minimum magnitude or within the series'
    /// own run-to-run noise: a single run may move that much by itself.
    Unstable,
    /// A group whose figures moved both ways.
    Mixed,
}

impl Verdict {
    /// The name the report writes.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Unstable => "unstable",
            Verdict::Mixed => "mixed",
        }
    }
}

/// A run of the history, as a change names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    /// Its id in the history.
    pub id: i64,
    /// When it started (RFC 3339).
    pub started_at: String,
}

/// The method's settings, as the report was made with them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchSettings {
    /// Runs per window of the split phase.
    pub window: usize,
    /// A change point is kept below this p (adjusted for the split's choice).
    pub max_p: f64,
    /// Smallest relative change that is a regression or an improvement.
    pub min_magnitude: f64,
    /// Confidence level of each change's interval.
    pub level: f64,
}

/// One change of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRecord {
    /// Position (0-based) in the series of the first run at the new level.
    pub index: usize,
    /// The series' last run before the change.
    pub run_before: RunRef,
    /// Its first run after the change.
    pub run_after: RunRef,
    /// Runs of the series on the old level (from the previous change).
    pub runs_before: usize,
    /// Runs on the new level (up to the next change).
    pub runs_after: usize,
    /// Mean of the figure's centres before the change, ns.
    pub mean_before_ns: f64,
    /// Mean after, ns.
    pub mean_after_ns: f64,
    /// Relative change (geometric mean after / before − 1).
    pub magnitude: f64,
    /// Its interval at `settings.level`.
    pub interval: IntervalRecord,
    /// p of the t test between the two sides, adjusted for the split's choice.
    pub p: f64,
    /// What it means.
    pub verdict: Verdict,
    /// Index of the group it belongs to in `groups`.
    pub group: usize,
}

/// The runs of one figure on one host, and where they changed level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesRecord {
    /// The figure's identity (the history's `figures.key`).
    pub key: String,
    /// Mechanism or benchmark.
    pub benchmark: String,
    /// Mode, with how it was timed (`pingpong (cold)`).
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// The host it was measured on.
    pub host: String,
    /// Runs that measured it.
    pub runs: usize,
    /// Its run-to-run noise: the standard deviation of the logarithms of its
    /// centres within its levels (about a relative spread); null with too
    /// few runs.
    pub noise: Option<f64>,
    /// Its changes, oldest first.
    pub changes: Vec<ChangeRecord>,
}

/// A field of the machine or the run's settings that differs between the
/// run before a change and the run after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    /// Its name (`kernel`, `mitigations.spectre_v2`, `settings.peer`).
    pub field: String,
    /// Its value in the run before.
    pub before: String,
    /// Its value in the run after.
    pub after: String,
}

/// Changes of several series at one run (±1), as a kernel or machine
/// change moves many figures at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeGroup {
    /// The host.
    pub host: String,
    /// The last run before (the one most of its changes name).
    pub run_before: RunRef,
    /// The first run after.
    pub run_after: RunRef,
    /// The keys of the figures that moved.
    pub figures: Vec<String>,
    /// Median of their magnitudes.
    pub median_magnitude: f64,
    /// Regression or improvement when every figure that moved beyond its
    /// noise moved that way; mixed when they moved both ways; unstable
    /// when none did.
    pub verdict: Verdict,
    /// What differs between the two runs: the machine and the settings.
    pub changed: Vec<FieldChange>,
}

/// The whole report of `ipcmark watch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchReport {
    /// [`WATCH_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    /// The method's settings.
    pub settings: WatchSettings,
    /// Runs read.
    pub runs: usize,
    /// Every series watched (figures with a latency), by key and host.
    pub series: Vec<SeriesRecord>,
    /// The changes grouped by run, oldest first.
    pub groups: Vec<ChangeGroup>,
}
