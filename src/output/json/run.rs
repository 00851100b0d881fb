//! The report of `ipcmark run` (schema `ipcmark.run/1`, documented in
//! docs/json-schema.md and docs/schema/run.schema.json): the run, its
//! settings and one [`ResultRecord`] per figure.

use super::context;
use super::facts::{
    CounterCheckRecord, EventsRecord, KernelCallRecord, OneWayRecord, PassesRecord, PeriodicRecord,
    PrecisionRecord, SchedulingRecord, ScoreRecord, StreamRecord, SweepRecord,
};
use crate::engine::measure::Budget;
use crate::engine::os::environment::Environment;
use crate::engine::os::peer::PeerKind;
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use serde::Serialize;

/// Identifies the layout of the report; bumped on any incompatible change.
pub const SCHEMA: &str = "ipcmark.run/1";

/// A whole run.
#[derive(Debug, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Version of ipcmark that wrote it.
    pub ipcmark_version: &'static str,
    /// The build that wrote it: version, git commit, dirty tree, features.
    pub build: super::build::BuildRecord,
    /// RFC 3339 time the run started.
    pub started_at: String,
    /// RFC 3339 time the run ended; null while it is still going.
    pub finished_at: Option<String>,
    /// Whether every planned figure was attempted (false for a partial file).
    pub complete: bool,
    /// The arguments, program name first.
    pub command_line: Vec<String>,
    /// The machine.
    #[serde(serialize_with = "context::environment")]
    pub environment: Environment,
    /// With `--remote`: the agent and its host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<super::remote::RemoteRunRecord>,
    /// The settings that applied to every result.
    pub settings: Settings,
    /// One object per mechanism × size.
    pub results: Vec<ResultRecord>,
    /// Conditions that make the figures less trustworthy, with what to do.
    pub warnings: Vec<crate::output::warnings::WarningRecord>,
    /// Cost model of each mechanism measured at 3 or more sizes.
    pub cost_models: Vec<crate::output::cost_model::CostModel>,
}

/// Run-wide settings.
#[derive(Debug, Clone, Serialize)]
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
    #[serde(serialize_with = "context::peer")]
    pub peer: PeerKind,
    /// Whether --quick was given.
    pub quick: bool,
    /// Passes over each ping-pong and operation figure (`--passes`).
    pub passes: usize,
    /// Phase durations (ms) and counts of the whole figure; each of its
    /// passes has a 1/passes share of the times and of the samples, at
    /// precision target × √passes.
    #[serde(serialize_with = "context::budget")]
    pub budget: Budget,
    /// A remark on the placement, e.g. a one-CPU machine.
    pub placement_note: Option<String>,
    /// PM QoS CPU latency limit ipcmark held during the run (µs), if any.
    pub cpu_latency_us: Option<i32>,
    /// The load held during every figure (`--load`), if one was stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<super::load::LoadSettingsRecord>,
    /// With `--load-sweep`: the load of each level, in the order they ran
    /// (each result's `load.specs` says which it was measured at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_sweep: Option<Vec<super::load::LoadSettingsRecord>>,
}

/// One mechanism at one size, or one operation benchmark.
#[derive(Debug, Serialize)]
pub struct ResultRecord {
    /// Mechanism or benchmark id.
    pub benchmark: &'static str,
    /// Measurement mode: "pingpong", "op", "event", "periodic", "oneway", "score" or "stream".
    pub mode: &'static str,
    /// Payload bytes per message; for an operation, bytes it moves (0 if none).
    pub size_bytes: usize,
    /// "ok", "skipped", "failed" or "below_resolution" (measured, but the
    /// overheads subtracted left nothing: no cost is reported).
    pub status: &'static str,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// CPUs the client and the server reported running on.
    pub cpus: Vec<usize>,
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
    pub observations: Option<std::collections::BTreeMap<&'static str, u64>>,
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
    pub load: Option<super::load::LoadRecord>,
    /// With `--load`, a measured operation or score figure: the figure
    /// corrected for the interrupt time accounted, with its inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correction: Option<super::load::CorrectionRecord>,
    /// With `--remote`: the agent, the link, the link's best for the
    /// figure and the fraction reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<super::remote::RemoteRecord>,
}

/// One-way latency: median/mean/stddev over samples, the rest over
/// individually timed round trips. Two populations, each named: what a
/// sample is (`median_of`) and what the percentiles are of
/// (`percentiles_of`, whose own mean is `single_mean`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    /// Median of the samples.
    pub median: f64,
    /// Mean of the samples.
    pub mean: f64,
    /// Standard deviation of the samples.
    pub stddev: f64,
    /// What `median`, `mean` and `stddev` are over: what one sample is
    /// (`batch_means`: each sample is the mean time of a calibrated batch).
    pub median_of: &'static str,
    /// What `min` … `max` and `single_mean` are over (`single_operations`:
    /// operations each timed on its own, not those of the batches).
    pub percentiles_of: &'static str,
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

/// What a figure's samples are (`latency_ns.median_of`) and what its
/// percentiles are of (`latency_ns.percentiles_of`), by timing model.
fn populations(f: &FigureResult) -> (&'static str, &'static str) {
    match f.mode() {
        Mode::PingPong => ("batch_means", "single_round_trips"),
        Mode::Op => ("batch_means", "single_operations"),
        Mode::Event => ("event_means", "sampled_events"),
        Mode::Periodic if f.periodic().is_some_and(|p| p.irq.is_some()) => ("rounds", "rounds"),
        Mode::Periodic => ("slice_means", "wakeups"),
        Mode::OneWay if f.oneway().is_some_and(|o| o.pacing == "sporadic") => {
            ("messages", "messages")
        }
        Mode::OneWay => ("window_means", "messages"),
        // Neither writes `latency_ns`.
        Mode::Stream | Mode::Score => ("samples", "samples"),
    }
}

impl ResultRecord {
    /// Converts an engine result.
    pub fn from_figure(f: &FigureResult) -> ResultRecord {
        let mut r = ResultRecord {
            benchmark: f.id,
            mode: f.mode().name(),
            size_bytes: f.size,
            status: "ok",
            reason: None,
            error: None,
            cpus: f.cpus.clone(),
            note: f.note.clone(),
            iterations: None,
            samples_ns: None,
            latency_ns: None,
            precision: None,
            loop_overhead_ns: None,
            clock_overhead_ns: None,
            timed_round_trips: None,
            verified_round_trips: None,
            throughput_bytes_per_s: None,
            cold_region_bytes: f.cold_region,
            timed_ops: None,
            kernel_calls: f
                .proof()
                .map(|p| p.kernel_calls.iter().map(Into::into).collect()),
            kernel_counter: None,
            events: None,
            baseline_ns: None,
            scheduling: f
                .proof()
                .and_then(|p| p.scheduling.as_ref())
                .map(Into::into),
            observations: None,
            periodic: f.periodic().map(Into::into),
            oneway: f.oneway().map(Into::into),
            score: f.score().map(Into::into),
            stream: None,
            sweep: f.sweep.as_ref().map(Into::into),
            passes: f.passes.as_ref().map(Into::into),
            load: f.load.as_ref().map(Into::into),
            correction: f.correction.as_ref().map(Into::into),
            remote: super::remote::RemoteRecord::of(f),
        };
        match &f.outcome {
            Outcome::Skipped(why) => {
                r.status = "skipped";
                r.reason = Some(why.clone());
            }
            Outcome::Failed(why) => {
                r.status = "failed";
                r.error = Some(why.clone());
            }
            Outcome::BelowResolution(why) => {
                r.status = "below_resolution";
                r.reason = Some(why.clone());
            }
            Outcome::Ok(m) => {
                let s = m.summary;
                let l = m.latency;
                let ns = |v: u64| l.resolved(v).map(|v| v as f64);
                r.iterations = Some(m.iterations);
                r.samples_ns = Some(m.samples_ns.clone());
                r.loop_overhead_ns = Some(m.loop_overhead_ns);
                r.clock_overhead_ns = Some(m.clock_overhead_ns);
                if f.mode() == Mode::Stream {
                    // No single-message latencies: time per message per
                    // sample, and the stream's own facts.
                    r.stream = f.stream().map(Into::into);
                    r.throughput_bytes_per_s = f.stream().and_then(|x| x.bytes_per_s);
                    // Sampled to a precision (MPI's windows) or not (local streams: none).
                    r.precision = m.precision.as_ref().map(Into::into);
                    return r;
                }
                let (median_of, percentiles_of) = populations(f);
                r.latency_ns = Some(Latency {
                    median: s.median,
                    mean: s.mean,
                    stddev: s.stddev,
                    median_of,
                    percentiles_of,
                    single_mean: l.mean,
                    min: ns(l.min),
                    max: ns(l.max),
                    p50: ns(l.p50),
                    p90: ns(l.p90),
                    p99: ns(l.p99),
                    p999: ns(l.p999),
                    at_or_below_zero: (l.at_or_below_zero > 0).then_some(l.at_or_below_zero),
                });
                r.precision = m.precision.as_ref().map(Into::into);
                match f.mode() {
                    // Counts over a period: no single operation is timed, so
                    // only the intervals' time per operation is reported.
                    Mode::Score => {
                        r.latency_ns = None;
                        r.loop_overhead_ns = None;
                        r.clock_overhead_ns = None;
                    }
                    Mode::Op | Mode::Event => {
                        r.observations = f
                            .proof()
                            .as_ref()
                            .and_then(|p| p.findings.as_ref())
                            .map(|x| x.counts.clone());
                        r.timed_ops = Some(l.count);
                        r.kernel_counter =
                            f.proof().and_then(|p| p.counter.as_ref()).map(Into::into);
                        r.events = f.proof().and_then(|p| p.events.as_ref()).map(Into::into);
                        r.baseline_ns = f.proof().as_ref().and_then(|p| p.baseline_ns);
                    }
                    Mode::PingPong => {
                        r.timed_round_trips = Some(l.count);
                        r.verified_round_trips = Some(m.verified_round_trips);
                    }
                    // Counts are in the periodic fields; nothing moves bytes.
                    // (Stream returned above.)
                    Mode::Periodic | Mode::Stream => {}
                    // Counts are in the oneway fields.
                    Mode::OneWay => r.verified_round_trips = Some(m.verified_round_trips),
                }
                r.throughput_bytes_per_s = (matches!(f.mode(), Mode::PingPong | Mode::Op)
                    && s.median > 0.0)
                    .then(|| f.size as f64 / (s.median * 1e-9));
            }
        }
        r
    }
}
