//! The report of `ipcmark run` (schema `ipcmark.run/1`, documented in
//! docs/json-schema.md and docs/schema/run.schema.json): the run, its
//! settings and one [`FigureRecord`] per figure.

use super::doctor::{CheckRecord, PassChecksRecord};
use super::environment::BudgetRecord;
use super::facts::{
    CounterCheckRecord, EventsRecord, IntervalRecord, KernelCallRecord, OneWayRecord, PassesRecord,
    PeriodicRecord, PrecisionRecord, SchedulingRecord, ScoreRecord, StreamRecord, SweepRecord,
};
use super::header::Header;
use super::load::{CorrectionRecord, LoadRecord, LoadSettingsRecord};
use super::map::{MapRecord, MapSettingsRecord};
use super::remote::{RemoteRecord, RemoteRunRecord};
use super::summary::{CostModel, WarningRecord};
use serde::{Deserialize, Serialize};

/// Identifies the layout of the report; bumped on any incompatible change.
pub const SCHEMA: &str = "ipcmark.run/1";

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Schema ([`SCHEMA`]), build, start, end, command and machine, as every
    /// report opens ([`Header`]; its fields stay at the top of the JSON).
    #[serde(flatten)]
    pub header: Header,
    /// The machine's checks at the run's start (those of `ipcmark doctor`
    /// that need no window, docs/trust.md); absent from earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CheckRecord>>,
    /// The checks that can change (steal, quota throttling, pressure, swap)
    /// taken over each pass, in the order the passes ran; absent from
    /// earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_checks: Option<Vec<PassChecksRecord>>,
    /// With `--passes` 2 or more: the machine's level in each pass, common
    /// to every figure, and its interval (docs/trust.md); absent from
    /// earlier reports and runs of one pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LevelRecord>,
    /// The round trip of a cache line between the measured CPUs, before,
    /// between and after the passes (docs/trust.md); absent from earlier
    /// reports and from runs on one CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_probe: Option<super::placement::PlacementProbeRecord>,
    /// What comparing every byte of a message costs on this machine, as the
    /// verify rounds compare (measured at the start of a run with ping-pong,
    /// one-way, stream or rate figures, untimed by any figure); absent from
    /// earlier reports and from runs without such figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationRecord>,
    /// With `--remote`: the agent and its host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteRunRecord>,
    /// The settings that applied to every result.
    pub settings: Settings,
    /// One object per mechanism × size.
    pub results: Vec<FigureRecord>,
    /// Conditions that make the figures less trustworthy, with what to do.
    pub warnings: Vec<WarningRecord>,
    /// Cost model of each mechanism measured at 3 or more sizes.
    pub cost_models: Vec<CostModel>,
    /// `ipcmark map`'s matrices, once the map is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapRecord>,
}

/// `verification`: the cost per byte of the verify rounds' whole-content
/// check (`engine::verify_cost`, docs/method.md): the check timed on warm
/// buffers at two sizes, the slope between them (fixed costs cancel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerificationRecord {
    /// Cost of comparing one byte, ns: the median over repetitions of the
    /// slope between the sizes.
    pub ns_per_byte: f64,
    /// The message sizes compared, bytes, smallest first.
    pub sizes_bytes: Vec<usize>,
    /// Checks timed back to back in one block (each size's).
    pub calls: usize,
    /// Repetitions (one block of each size), whose median is the figure.
    pub repetitions: usize,
    /// What the measurement took in all, ns.
    pub took_ns: u64,
}

/// `level`: the machine's speed during each pass, the component common to
/// every figure of the pass, apart from each figure's own variation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelRecord {
    /// Figures with a median in every pass, that the level is read from.
    pub figures: usize,
    /// Passes of the run.
    pub passes: usize,
    /// Each pass's factor (the median over figures of a figure's pass
    /// median ÷ the geometric mean of its pass medians), in pass order;
    /// empty where too few figures or passes separate it.
    pub factors: Vec<f64>,
    /// The 95% interval of the run's level, as factors of its centre (the
    /// machine's share of every figure's interval); null where not separable.
    pub interval: Option<IntervalRecord>,
}

/// Run-wide settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Requested payload sizes, bytes.
    pub sizes: Vec<usize>,
    /// Client CPU (null: not pinned).
    pub client_cpu: Option<usize>,
    /// Server CPU (null: not pinned).
    pub server_cpu: Option<usize>,
    /// SCHED_FIFO priority of both sides, null for SCHED_OTHER.
    pub rt_priority: Option<i32>,
    /// "process" or "thread".
    pub peer: Peer,
    /// Whether --quick was given.
    pub quick: bool,
    /// Passes over each ping-pong and operation figure (`--passes`).
    pub passes: usize,
    /// Phase durations (ms) and counts of the whole figure; each of its
    /// passes has a 1/passes share of the times and of the samples, at
    /// precision target × √passes.
    pub budget: BudgetRecord,
    /// A remark on the placement, e.g. a one-CPU machine.
    pub placement_note: Option<String>,
    /// PM QoS CPU latency limit ipcmark held during the run (µs), if any.
    pub cpu_latency_us: Option<i32>,
    /// The load held during every figure (`--load`), if one was stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadSettingsRecord>,
    /// With `--load-sweep`: the load of each level, in the order they ran
    /// (each result's `load.specs` says which it was measured at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_sweep: Option<Vec<LoadSettingsRecord>>,
    /// With `--preset`: the study preset measured (its table follows the
    /// figures on the page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// With Thread-Metric figures: where their threads ran and under what
    /// policy, and the counting period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoreSettingsRecord>,
    /// `ipcmark map`: the topology, the pairs and where pages were homed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapSettingsRecord>,
}

/// `settings.scores`: how the Thread-Metric tests of a run were counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreSettingsRecord {
    /// The CPU each test's threads and its reporter ran on (null: any).
    pub cpu: Option<usize>,
    /// The counting period, ns.
    pub period_ns: u64,
    /// Reports in the period.
    pub intervals: usize,
    /// Why SCHED_FIFO was refused (the tests then ran under SCHED_OTHER);
    /// null when it was used.
    pub fifo_refused: Option<String>,
}

/// One mechanism at one size, or one operation benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRecord {
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// Measurement mode: "pingpong", "op", "event", "periodic", "oneway",
    /// "score", "stream" or "rate".
    pub mode: Mode,
    /// Payload bytes per message; for an operation, bytes it moves (0 if none).
    pub size_bytes: usize,
    /// "ok", "skipped", "failed" or "below_resolution" (measured, but the
    /// overheads subtracted left nothing: no cost is reported).
    pub status: Status,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// CPUs the client and the server reported running on.
    pub cpus: Vec<usize>,
    /// `ipcmark map`: the pair of CPUs (client, server) the figure was
    /// placed on, part of its identity (absent from other runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<[usize; 2]>,
    /// A fact about the channel (e.g. the file system of a FIFO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Round trips per sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// One-way time of each sample, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_ns: Option<Vec<f64>>,
    /// One-way latency statistics, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<Latency>,
    /// Modes pingpong and op: the 95% interval of the median (ns) and whether
    /// it met the precision target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<PrecisionRecord>,
    /// Loop overhead subtracted from every one-way figure, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_overhead_ns: Option<f64>,
    /// Clock-read cost subtracted from each individually timed round trip, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_overhead_ns: Option<f64>,
    /// Round trips individually timed for the percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_round_trips: Option<u64>,
    /// Round trips whose whole content was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_round_trips: Option<u64>,
    /// size_bytes / median one-way time (per operation in mode op).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_bytes_per_s: Option<f64>,
    /// With `--cold`: bytes of the region each side's messages walked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_region_bytes: Option<usize>,
    /// Mode op: operations individually timed for the percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_ops: Option<u64>,
    /// Mode op: for each system call the benchmark names, whether an
    /// operation made it (seccomp probe).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_calls: Option<Vec<KernelCallRecord>>,
    /// Mode op: the kernel's own count of the operations' work, checked
    /// against the number of operations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_counter: Option<CounterCheckRecord>,
    /// Mode op: what one operation is made of, when the figures are per
    /// event (per context switch) rather than per operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<EventsRecord>,
    /// Mode op: the baseline's time per operation, subtracted before the
    /// division by events (e.g. passing a token without a switch), ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_ns: Option<f64>,
    /// Modes op and event, for a benchmark that needs SCHED_FIFO: the policy
    /// its threads ran under, the base priority, why SCHED_FIFO was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<SchedulingRecord>,
    /// Modes op and event: named counts of what the benchmark observed
    /// besides its times (e.g. rounds with a priority inversion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observations: Option<std::collections::BTreeMap<String, u64>>,
    /// Mode periodic: period, frequency, wake-ups, failures, timer slack,
    /// policy and the interrupt comparison, as fields of the result.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub periodic: Option<PeriodicRecord>,
    /// Mode oneway: pacing, interval, messages sent and received, gaps and
    /// the windows, as fields of the result.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub oneway: Option<OneWayRecord>,
    /// Mode score: the score, its intervals, R, threads, counters and checks
    /// (also on a failed figure, up to the failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreRecord>,
    /// Mode stream: messages per second, CPU per message of each side,
    /// messages sent and received, loss, per-sample throughput.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamRecord>,
    /// Mode rate: the curve of offered rates, point by point and round by
    /// round, its knee and saturation rate; absent from other modes and
    /// earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_curve: Option<super::rate::RateCurveRecord>,
    /// Mode pingpong, a figure sampled in rounds with the others of its sweep:
    /// how many, how many rounds, how long a sample, the drift-corrected median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepRecord>,
    /// Modes pingpong and op with `--passes` 2 or more: how many passes were
    /// pooled into this figure and each one's median (what `compare` tests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<PassesRecord>,
    /// With `--load`: what the load did while the figure was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadRecord>,
    /// With `--load`, a measured operation or score figure: the figure
    /// corrected for the interrupt time accounted, with its inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correction: Option<CorrectionRecord>,
    /// With `--remote`: the agent, the link, the link's best for the
    /// figure and the fraction reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteRecord>,
    /// `ipcmark explain`: where the figure's round trip goes, part by part,
    /// from a separate traced pass (absent from `run`'s reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<super::explain::ExplainRecord>,
}

/// A figure's timing model: how it was measured, and so which fields it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Round trips between two processes, halved.
    PingPong,
    /// An operation timed in one process.
    Op,
    /// Latencies the operation's threads time themselves.
    Event,
    /// Wake-ups at deadlines, or a loop under a periodic interrupt.
    Periodic,
    /// One-way latency from a stamp in the message.
    OneWay,
    /// Operations counted in a period.
    Score,
    /// Messages per second, one way.
    Stream,
    /// Latency under an offered load, one way, timed from the schedule.
    Rate,
}

impl Mode {
    /// The name the report writes.
    pub fn name(self) -> &'static str {
        match self {
            Mode::PingPong => "pingpong",
            Mode::Op => "op",
            Mode::Event => "event",
            Mode::Periodic => "periodic",
            Mode::OneWay => "oneway",
            Mode::Score => "score",
            Mode::Stream => "stream",
            Mode::Rate => "rate",
        }
    }
}

/// How a figure ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured.
    Ok,
    /// Not attempted (`reason` says why).
    Skipped,
    /// Attempted and failed (`error` says why).
    Failed,
    /// Measured, but the overheads subtracted left nothing (`reason`).
    BelowResolution,
}

impl Status {
    /// The name the report writes.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
            Status::BelowResolution => "below_resolution",
        }
    }
}

/// How the echo server ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// A forked process.
    Process,
    /// A thread of the measuring process.
    Thread,
}

/// One-way latency: median/mean/stddev over samples, the rest over
/// individually timed round trips. Two populations, each named: what a
/// sample is (`median_of`) and what the percentiles are of
/// (`percentiles_of`, whose own mean is `single_mean`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median of the samples.
    pub median: f64,
    /// Mean of the samples.
    pub mean: f64,
    /// Standard deviation of the samples.
    pub stddev: f64,
    /// What `median`, `mean` and `stddev` are over: what one sample is
    /// (`batch_means`: each sample is the mean time of a calibrated batch).
    pub median_of: String,
    /// What `min` … `max` and `single_mean` are over (`single_operations`:
    /// operations each timed on its own, not those of the batches).
    pub percentiles_of: String,
    /// Mean of the population of the percentiles, every value as measured
    /// (signed, those at or below zero included).
    pub single_mean: f64,
    /// Smallest individual one-way time. Each percentile is null where it
    /// fell among the single times that were at or below zero once the
    /// clock read was subtracted (below the clock's resolution).
    pub min: Option<f64>,
    /// Largest individual one-way time.
    pub max: Option<f64>,
    /// Percentiles of individual one-way times.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// 99.9th percentile.
    pub p999: Option<f64>,
    /// Single times at or below zero once the clock read was subtracted
    /// (absent when none were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_or_below_zero: Option<u64>,
}

/// Why a text is not a run report this ipcmark reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Not JSON of a run report's shape (serde's message, which may quote
    /// the text: sanitise it before printing).
    #[error("not an ipcmark run report: {0}")]
    NotARunReport(String),
    /// A report of another schema (or version).
    #[error("schema '{0}' is not {SCHEMA}")]
    Schema(String),
}

impl RunRecord {
    /// Reads a run report's text: its schema checked first (so another
    /// report is named as such, not as a shape error), then every field.
    /// (Readers of a file sanitise its strings first, so they parse it as
    /// JSON themselves and call [`Self::from_value`].)
    #[cfg(test)]
    pub fn parse(text: &str) -> Result<RunRecord, ReadError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ReadError::NotARunReport(e.to_string()))?;
        Self::from_value(value)
    }

    /// Reads a run report already parsed as JSON (from a file or the
    /// history), its schema checked first.
    pub fn from_value(value: serde_json::Value) -> Result<RunRecord, ReadError> {
        match value.get("schema").and_then(serde_json::Value::as_str) {
            Some(SCHEMA) => {}
            Some(other) => return Err(ReadError::Schema(other.to_string())),
            None => return Err(ReadError::NotARunReport("no schema".into())),
        }
        serde_json::from_value(value).map_err(|e| ReadError::NotARunReport(e.to_string()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Reports of every mode, as `run --json` wrote them (tests/reports/).
    pub(crate) const FIXTURES: &[(&str, &str)] = &[
        (
            "ipc-quick",
            include_str!("../../tests/reports/ipc-quick.json"),
        ),
        ("op", include_str!("../../tests/reports/op.json")),
        ("oneway", include_str!("../../tests/reports/oneway.json")),
        ("event", include_str!("../../tests/reports/event.json")),
        (
            "periodic",
            include_str!("../../tests/reports/periodic.json"),
        ),
        ("passes", include_str!("../../tests/reports/passes.json")),
        (
            "cost-model",
            include_str!("../../tests/reports/cost-model.json"),
        ),
        ("load", include_str!("../../tests/reports/load.json")),
        (
            "load-sweep",
            include_str!("../../tests/reports/load-sweep.json"),
        ),
        ("score", include_str!("../../tests/reports/score.json")),
        ("stream", include_str!("../../tests/reports/stream.json")),
        ("rate", include_str!("../../tests/reports/rate.json")),
        ("map", include_str!("../../tests/reports/map.json")),
        (
            "explain-a",
            include_str!("../../tests/reports/explain-a.json"),
        ),
        (
            "explain-b",
            include_str!("../../tests/reports/explain-b.json"),
        ),
    ];

    /// Reading a report and writing it again gives the same bytes: every
    /// field is read (none dropped, none defaulted) and written as it was.
    #[test]
    fn every_modes_report_reads_back_byte_for_byte() {
        for (name, text) in FIXTURES {
            let record = RunRecord::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            crate::record::assert_writes_back(name, &record, text);
        }
    }

    #[test]
    fn another_schema_is_named_and_a_shape_error_says_so() {
        assert_eq!(
            RunRecord::parse(r#"{"schema": "ipcmark.workload/1"}"#),
            Err(ReadError::Schema("ipcmark.workload/1".into()))
        );
        assert!(matches!(
            RunRecord::parse(r#"{"schema": "ipcmark.run/1", "results": 3}"#),
            Err(ReadError::NotARunReport(_))
        ));
        assert!(matches!(
            RunRecord::parse("[1, 2]"),
            Err(ReadError::NotARunReport(_))
        ));
    }
}
