//! The report of `ipcmark fleet` (`ipcmark.fleet/1`, docs/fleet.md): the
//! newest run of each host, the hosts grouped by their machine's class
//! ([`MachineClass`]), per class and figure the median across hosts and
//! each host's ratio to it, the hosts whose figures are shifted beyond the
//! class's spread (the outlier test, [`OutlierTestRecord`]), and for each
//! such host the settings in which it differs from the rest of its class.

use super::build::BuildRecord;
use super::class::MachineClass;
use serde::{Deserialize, Serialize};

/// The `schema` of a fleet report.
pub const FLEET_SCHEMA: &str = "ipcmark.fleet/1";

/// `ipcmark fleet`'s report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// [`FLEET_SCHEMA`].
    pub schema: String,
    /// The build that wrote it.
    pub build: BuildRecord,
    /// The outlier test and its thresholds.
    pub test: OutlierTestRecord,
    /// Runs read (files, or runs of the history).
    pub runs_read: usize,
    /// Runs left out because a newer run of the same host was read.
    pub superseded: Vec<SupersededRecord>,
    /// Each class of machine, with its hosts (classes in order of their
    /// label).
    pub classes: Vec<ClassRecord>,
}

/// How a host is judged an outlier of its class (docs/fleet.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierTestRecord {
    /// The test in one sentence.
    pub method: String,
    /// Fewest hosts a class needs for the test.
    pub min_hosts: usize,
    /// Fewest figures a host needs for the test (fewer cannot reach
    /// `sign_alpha` in the sign test).
    pub min_figures: usize,
    /// |z| above which a host's shift is beyond the class's hosts'.
    pub z_threshold: f64,
    /// The factor that makes a MAD estimate a normal standard deviation.
    pub mad_scale: f64,
    /// The smallest scale of the hosts' shifts the z divides by (a log
    /// ratio): hosts that agree more closely than this are not told
    /// apart by it.
    pub scale_floor: f64,
    /// The smallest shift an outlier has (a fraction: 0.10 = 10%).
    pub min_effect: f64,
    /// The one-sided sign test's level: a host is an outlier only if its
    /// figures lie on the side of its shift more often than chance allows.
    pub sign_alpha: f64,
}

/// A run left out: its host has a newer one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupersededRecord {
    /// The host.
    pub host: String,
    /// The run left out (a file, or `run N`).
    pub source: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// The run taken instead.
    pub by: String,
}

/// One class of machine and its hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    /// [`MachineClass::id`].
    pub id: String,
    /// [`MachineClass::label`].
    pub label: String,
    /// The class's fields.
    pub class: MachineClass,
    /// The figures the class's hosts are compared on: each measured (with a
    /// latency) by at least 3 of them, in key order.
    pub figures: Vec<ClassFigureRecord>,
    /// The host-to-host spread of the class: the median over its figures of
    /// each figure's `spread`; null without figures or with one host.
    pub spread: Option<f64>,
    /// Whether the outlier test could be made.
    pub tested: bool,
    /// Why not, when not.
    pub not_tested: Option<String>,
    /// Each host, in order of name.
    pub hosts: Vec<HostRecord>,
}

/// A figure across a class's hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassFigureRecord {
    /// The figure's identity (`FigureKey`'s text: `pipe/pingpong/64`).
    pub key: String,
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// How it was timed (`pingpong`, `oneway (saturated)`, …).
    pub mode: String,
    /// Payload bytes.
    pub size_bytes: usize,
    /// Hosts that measured it.
    pub hosts: usize,
    /// The median of the hosts' centres, ns.
    pub median_ns: f64,
    /// Host-to-host spread: 1.4826 × the MAD of the hosts' log ratios to
    /// the median (≈ the standard deviation of ln(ratio) were they normal).
    pub spread: f64,
}

/// What a host is, by the outlier test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Its figures are shifted beyond the class's spread.
    Outlier,
    /// Within the class's spread.
    Normal,
    /// Not tested (too few hosts in the class, or figures of its own).
    Untested,
}

impl Verdict {
    /// The name the report writes.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Outlier => "outlier",
            Verdict::Normal => "normal",
            Verdict::Untested => "untested",
        }
    }
}

/// One host of a class: its run, its ratios and the test's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    /// The host name.
    pub host: String,
    /// Where its run was read: a file, or `run N` of the history.
    pub source: String,
    /// The run's id in the history; null for a file.
    pub run_id: Option<i64>,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// The class's figures it measured.
    pub figures: usize,
    /// Its centre ÷ the class's median, per figure of `figures` (the
    /// class's), in that order; null where it did not measure the figure.
    pub ratios: Vec<Option<f64>>,
    /// Its shift: the median over its figures of its ratio (above 1:
    /// slower than the class); null without figures.
    pub shift: Option<f64>,
    /// The robust z of its log shift among the class's hosts' (their
    /// median, and MAD × 1.4826, the scale at least `scale_floor`); null
    /// where not tested.
    pub z: Option<f64>,
    /// Figures where it is slower than the class's median.
    pub slower: usize,
    /// Figures where it is faster.
    pub faster: usize,
    /// The one-sided sign test's p in the direction of its shift; null
    /// where not tested.
    pub sign_p: Option<f64>,
    /// The test's verdict.
    pub verdict: Verdict,
    /// An outlier's direction: `slower` or `faster`.
    pub direction: Option<String>,
    /// An outlier's settings that differ from the value most of its class
    /// holds, best aligned with the outliers first; empty for other hosts.
    pub differs: Vec<SettingDiffRecord>,
}

/// A setting in which an outlier differs from its class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingDiffRecord {
    /// The setting (`frequency_governor`, `kernel_cmdline:intel_idle.max_cstate`,
    /// `mitigations.spectre_v2`, `cpu_idle.state:C6`, `check:thp`, …).
    pub setting: String,
    /// The host's value.
    pub value: String,
    /// The value most of the class's hosts hold.
    pub class_value: String,
    /// Hosts of the class that hold `class_value`.
    pub hosts_with_class_value: usize,
    /// Outliers of the class (this one included) that differ from
    /// `class_value` in this setting.
    pub outliers_differing: usize,
    /// Hosts of the class that are not outliers and differ all the same.
    pub normal_differing: usize,
}
