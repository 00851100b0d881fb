//! The record of `ipcmark advise --json` (schema `ipcmark.advise/1`): a
//! stated need (a message size and bounds on p50, p99, rate and CPU per
//! message), every ping-pong mechanism measured on the host ranked by it,
//! each predicted figure with the run and figure it came from, those that
//! could not be ranked with why, the crossover sizes between the top picks,
//! and, with `--verify`, the prediction against a fresh measurement. Built
//! in `analysis::advise` from the history's run records.

use super::build::BuildRecord;
use serde::{Deserialize, Serialize};

/// Schema of the advise JSON.
pub const ADVISE_SCHEMA: &str = "ipcmark.advise/1";

/// What the user needs (`--size`, `--rate`, `--p50`, `--p99`,
/// `--cpu-per-msg`, `--cpus`); a bound not stated is null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Need {
    /// Message size, bytes.
    pub size_bytes: usize,
    /// Messages per second to sustain.
    pub rate_per_s: Option<f64>,
    /// Largest one-way median, ns.
    pub p50_ns: Option<f64>,
    /// Largest one-way 99th percentile, ns.
    pub p99_ns: Option<f64>,
    /// Largest CPU time per message (sender and receiver together), ns.
    pub cpu_per_msg_ns: Option<f64>,
    /// The CPUs the figures must have been measured on (null: any).
    pub cpus: Option<Vec<usize>>,
}

/// A predicted or measured number and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sourced {
    /// The number (ns, or messages per second for a rate).
    pub value: f64,
    /// The run of the history it was read from.
    pub run_id: i64,
    /// How it was obtained, in words: the figure or the model and the size.
    pub from: String,
}

/// Whether a mechanism meets each stated bound: null where the bound was
/// not stated or the figure it needs was not measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meets {
    /// p50 bound.
    pub p50: Option<bool>,
    /// p99 bound.
    pub p99: Option<bool>,
    /// Rate bound.
    pub rate: Option<bool>,
    /// CPU-per-message bound.
    pub cpu_per_msg: Option<bool>,
}

/// Where a mechanism stands against the need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Every stated bound met.
    MeetsAll,
    /// No bound missed, but a stated one could not be judged (its figure
    /// was not measured).
    Unknown,
    /// At least one bound missed.
    Misses,
}

/// One ranked mechanism.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// Place in the ranking, from 1.
    pub rank: usize,
    /// Mechanism id.
    pub benchmark: String,
    /// Predicted one-way median at the size: of single messages, from
    /// ping-pong figures (one way = round trip ÷ 2).
    pub p50: Sourced,
    /// Predicted one-way 99th percentile at the size (null: no p99 measured).
    pub p99: Option<Sourced>,
    /// Sustainable messages per second, from a stream figure (null: not measured).
    pub rate: Option<Sourced>,
    /// CPU per message, sender and receiver together, from a stream figure
    /// (null: not measured).
    pub cpu_per_msg: Option<Sourced>,
    /// Each stated bound, met or not.
    pub meets: Meets,
    /// Where it stands.
    pub standing: Standing,
    /// Its largest relative miss of a bound (0 when none missed).
    pub miss: f64,
    /// The one-way prediction at the size, from the history's one-way
    /// figures of it there (the shape `--verify` measures); the ranking
    /// stays on `p50` and `p99` (ping-pong, which every mechanism has).
    /// Absent where the history holds no one-way figure at the size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oneway: Option<OneWayPrediction>,
    /// The latency at the need's `--rate`, from the mechanism's measured
    /// rate curve at the size (`run --mode rate`); where it is there, the
    /// p99 and rate bounds are judged by it. Absent without `--rate` or
    /// without a curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_rate: Option<AtRate>,
}

/// A mechanism under the need's offered rate, read from a rate curve: the
/// latencies from the intended send interpolated in log rate between the
/// two offered rates around it (medians over the curve's rounds), never
/// extrapolated past the highest rate the curve kept up with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtRate {
    /// The rate asked for, messages a second.
    pub rate: f64,
    /// Predicted p50 from the intended send, ns (null: beyond the curve).
    pub p50: Option<Sourced>,
    /// Predicted p99 from the intended send, ns (null: beyond the curve).
    pub p99: Option<Sourced>,
    /// The highest offered rate every round kept up with (achieved within
    /// 5%), messages a second (null: none).
    pub highest_kept_up: Option<Sourced>,
    /// The curve's knee, messages a second (null: none within its rates).
    pub knee: Option<Sourced>,
    /// Why no latency is predicted, where none is.
    pub note: Option<String>,
}

/// A one-way prediction: the medians of the messages' own p50 and p99 of
/// the latest one-way figures of the mechanism at the size (one a run, up
/// to five).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWayPrediction {
    /// Predicted one-way median, ns.
    pub p50: Sourced,
    /// Predicted one-way 99th percentile, ns (never below the median).
    pub p99: Sourced,
    /// The shape it is of: `oneway, saturated`, `oneway, sporadic every N
    /// ns` (the pacing asked for), or, paced with no figure of that pacing,
    /// `oneway, saturated; leaves out the wake-up per message`.
    pub predicted_as: String,
}

/// A mechanism measured on the host that could not be ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unrankable {
    /// Mechanism id.
    pub benchmark: String,
    /// Why, in words.
    pub reason: String,
}

/// Where two mechanisms' cost models cross.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// One mechanism.
    pub a: String,
    /// The other.
    pub b: String,
    /// The size at which their lines cross, bytes (null: they do not cross
    /// within the sizes both measured).
    pub size_bytes: Option<f64>,
    /// The faster of the two below the crossover (or over the whole shared
    /// range when there is none).
    pub faster_below: String,
    /// The runs the two models came from.
    pub run_ids: [i64; 2],
}

/// One mechanism of `--verify`: predicted against measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verified {
    /// Mechanism id.
    pub benchmark: String,
    /// The run that measured it (saved in the history).
    pub run_id: Option<i64>,
    /// Predicted median, ns.
    pub predicted_p50_ns: f64,
    /// Measured median, ns (null: the figure did not measure).
    pub measured_p50_ns: Option<f64>,
    /// Predicted p99, ns.
    pub predicted_p99_ns: Option<f64>,
    /// Measured p99, ns.
    pub measured_p99_ns: Option<f64>,
    /// How it was measured: `oneway, sporadic every N ns` (paced at
    /// `--rate`) or `oneway, saturated` (no rate stated); absent in
    /// reports written when verify ran a ping-pong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_as: Option<String>,
    /// The shape the prediction is of: the one-way figure's
    /// ([`OneWayPrediction::predicted_as`], starting `oneway`) where the
    /// history has one at the size, else `pingpong, one way = round trip ÷
    /// 2, back to back` (absent in earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_as: Option<String>,
    /// Messages timed (absent as `measured_as`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// Whether the measured p99 lies within ±25% of the predicted one
    /// (null where either is missing; absent as `measured_as`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_within_25_percent: Option<bool>,
}

/// The report of `ipcmark advise`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviseReport {
    /// [`ADVISE_SCHEMA`].
    pub schema: String,
    /// The build that advised.
    pub build: BuildRecord,
    /// The host whose runs were read.
    pub host: String,
    /// The need.
    pub need: Need,
    /// Runs of the host read.
    pub runs_read: usize,
    /// The ranking, best first.
    pub ranking: Vec<Advice>,
    /// Mechanisms that could not be ranked.
    pub unrankable: Vec<Unrankable>,
    /// Crossovers between the top picks that have cost models.
    pub crossovers: Vec<Crossover>,
    /// `--verify`'s measurements (null without it).
    pub verify: Option<Vec<Verified>>,
}
