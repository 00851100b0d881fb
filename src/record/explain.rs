//! The record of `ipcmark explain` (`explain` of a figure): where a traced
//! pass's round trips went, part by part, beside the untraced figure, and
//! how the pass was traced (docs/explain.md).

use serde::{Deserialize, Serialize};

/// One part of a round trip across the traced round trips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartRecord {
    /// "client user", "server read", "server wake-up: idle exit", …, and
    /// "residual" (the round trip less every other part).
    pub name: String,
    /// Mean per round trip, ns: the parts' means add up to the traced mean
    /// (a coarse residual may be below zero: the two sides' counters overlap).
    pub mean_ns: f64,
    /// Median per round trip, ns (null in a coarse anatomy: counters give
    /// only a total over the pass).
    pub median_ns: Option<f64>,
    /// 99th percentile per round trip, ns (null as the median).
    pub p99_ns: Option<f64>,
    /// Its mean over the traced mean round trip (0–1).
    pub share: f64,
}

/// A round trip's centre: mean and median, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundTripRecord {
    /// Mean, ns.
    pub mean: f64,
    /// Median, ns.
    pub median: f64,
}

/// `explain` of a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainRecord {
    /// "full" (tracepoints) or "coarse" (/proc counters, without root).
    pub method: String,
    /// The parts, largest mean first, the residual last.
    pub parts: Vec<PartRecord>,
    /// The traced pass's round trips (client clock, stamp to stamp).
    pub traced_round_trip_ns: RoundTripRecord,
    /// The figure as `run` measures it (twice its one-way time).
    pub untraced_round_trip_ns: Option<RoundTripRecord>,
    /// Round trips in the traced pass.
    pub round_trips: u64,
    /// Events the kernel lost during the pass (0: none).
    pub lost_events: u64,
    /// The tracefs instance the pass was traced in.
    pub instance: Option<String>,
    /// The events enabled, as `system:name`.
    pub events: Vec<String>,
    /// What a coarse anatomy could not see, and the command that gives the
    /// full one; with a load, the load's own handler time; where a broker
    /// relays each message, which task was traced as it (or that none was).
    pub note: Option<String>,
    /// The copy's cost from the run's cost model, where it swept sizes:
    /// inside the system calls, so beside the parts, not one of them
    /// (absent otherwise, and in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<CopyRecord>,
    /// With a load that has interrupt sources (`--load irq:`), its
    /// interrupt time as it accounts it beside the anatomy's interrupt
    /// parts (absent otherwise, and in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadInterruptRecord>,
    /// What the parts divide: absent for a ping-pong round trip (and in
    /// reports written before it); `operation` for an op-mode benchmark's
    /// operation, `wake-up latency` for a timer's wake-ups. Its
    /// `traced_round_trip_ns`, `untraced_round_trip_ns` and `round_trips`
    /// then hold that interval (an operation; a latency, deadline → the
    /// task's clock read) and how many were traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Anatomy>,
    /// Each side's wake-ups in a traced round trip's pass: how many the
    /// kernel left an event out of, and how many came early (absent in a
    /// coarse anatomy, an operation's or a timer's, and in reports written
    /// before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wake_ups: Vec<WakeUpRecord>,
    /// Round trips with a part named for two things because the kernel
    /// left a switch out: a side's own (`… wake-up + read return (no
    /// switch seen)`), or another task's into the CPU the side waited for
    /// (`… wake-up + irq handler (load) (no switch seen)`)
    /// (absent as `wake_ups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_round_trips: Option<u64>,
    /// The slowest round trips, with `explain --tail` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<TailRecord>,
    /// With `--tail --duration D`: how the soak went and what it held in
    /// memory (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakRecord>,
}

/// A soak (`explain --tail --duration D`): a traced pass in segments on one
/// channel, the slowest round trips kept, the rest let go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakRecord {
    /// The duration asked for, s.
    pub asked_s: f64,
    /// How long it ran, s.
    pub ran_s: f64,
    /// Segments run.
    pub segments: u64,
    /// Round trips in each.
    pub segment_round_trips: u64,
    /// Segments whose events were decoded: the first (the waterfall and
    /// the typical round trip), then those with a round trip slower than
    /// the slowest kept so far.
    pub segments_decoded: u64,
    /// Segments with a round trip to keep whose events the kernel lost:
    /// their slow round trips could not be cut and are not kept.
    pub segments_lost: u64,
    /// Time between segments, s: no round trip runs then (the loop is
    /// closed), so a stall then delays none and is not seen.
    pub between_segments_s: f64,
    /// The slowest round trips kept.
    pub kept: u64,
    /// The trace buffer, KiB per traced CPU (the kernel's memory).
    pub buffer_kb_per_cpu: u64,
    /// The CPUs traced.
    pub cpus: Vec<usize>,
    /// This process's peak resident memory before the soak, KiB (`VmHWM`).
    pub rss_before_kb: u64,
    /// Its peak after the first segment was cut, KiB.
    pub rss_after_first_kb: u64,
    /// Its peak at the end, KiB.
    pub peak_rss_kb: u64,
    /// The most events one decoded segment held.
    pub events_max: u64,
    /// The memory bound, KiB: the larger of the peak after the first
    /// segment and the memory before it plus the most events the buffers
    /// can hold decoded (full of the smallest, 16 bytes each), plus 8 KiB
    /// per round trip kept (docs/explain.md).
    pub bound_kb: u64,
}

/// One side's wake-ups in a traced pass (`explain.wake_ups[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeUpRecord {
    /// "client", "server" or "broker".
    pub side: String,
    /// Wake-ups seen (asleep, then running).
    pub seen: u64,
    /// Of them, running with no `sched_switch` to it seen: part of the
    /// wake-up is then named for two things.
    pub no_switch_in: u64,
    /// Of them, running with no `sched_waking` of it seen.
    pub no_waking: u64,
    /// Wake-ups by the side before it on the path that came before the
    /// message was sent (a socket's reader woken by its peer's read: write
    /// space); off the path.
    pub early: u64,
}

/// What an anatomy's parts divide, where it is not a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Anatomy {
    /// One operation of an op-mode benchmark, stamp to stamp.
    #[serde(rename = "operation")]
    Operation,
    /// A timer's wake-up latency: its deadline to the task's clock read
    /// after the sleep returned.
    #[serde(rename = "wake-up latency")]
    WakeUpLatency,
}

impl ExplainRecord {
    /// Whether its intervals are operations rather than round trips.
    pub fn per_operation(&self) -> bool {
        self.kind == Some(Anatomy::Operation)
    }

    /// Whether its intervals are a timer's wake-up latencies.
    pub fn wake_up_latency(&self) -> bool {
        self.kind == Some(Anatomy::WakeUpLatency)
    }

    /// What one interval is and what many are called: "round trip(s)",
    /// "operation(s)" or "wake-up latency" / "wake-ups".
    pub fn interval_words(&self) -> (&'static str, &'static str) {
        match self.kind {
            None => ("round trip", "round trips"),
            Some(Anatomy::Operation) => ("operation", "operations"),
            Some(Anatomy::WakeUpLatency) => ("wake-up latency", "wake-ups"),
        }
    }
}

/// A held load's interrupt time per traced round trip, as the load
/// accounts it and as the anatomy finds it on the round trip's path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadInterruptRecord {
    /// The measured CPUs whose interrupt time the load accounted.
    pub cpus: Vec<usize>,
    /// The windows the accounting covers (the untraced figure's and the
    /// traced pass's, where the figure has one), ms.
    pub window_ms: f64,
    /// f: the kernel's interrupt and softirq time on those CPUs
    /// (/proc/stat) plus the CPU time of the load's handler processes
    /// there, ÷ (window × CPUs): the fraction a run's corrected figure
    /// takes off.
    pub fraction: f64,
    /// f × the traced mean round trip: the interrupt time per round trip
    /// as the load accounts it, ns.
    pub accounted_ns: f64,
    /// Of it, the time the handlers stamped in their own work (`work=`),
    /// per round trip and CPU, ns.
    pub stamped_ns: f64,
    /// The anatomy's interrupt parts (the kernel's interrupts and the
    /// load's handlers on the round trip's path), summed means, ns.
    pub parts_ns: f64,
    /// Of them, the parts behind the load's handler processes, ns.
    pub handler_parts_ns: f64,
    /// parts_ns ÷ accounted_ns (null when nothing was accounted).
    pub ratio: Option<f64>,
}

/// The copy's cost of a figure's size, from its mechanism's cost model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyRecord {
    /// The model's slope over the range holding the size, ns per byte
    /// (one way).
    pub per_byte_ns: f64,
    /// Slope × size × 2 (a message each way), ns per round trip.
    pub round_trip_ns: f64,
    /// The range of sizes the slope was fitted over, bytes.
    pub from_bytes: usize,
    /// Its largest size, bytes.
    pub to_bytes: usize,
}

/// What a culprit's name says after its task's id where that task's
/// priority was below the real-time side it delayed (the events' `prio`): the
/// scheduler would have run the side, so the kernel ran on in that task
/// without a preemption point, or the host held the vCPU.
pub const LOWER_PRIORITY: &str = ", lower priority than the side";

/// The slowest round trips of a traced pass (`explain.tail`): each one's
/// excess over the typical round trip, part by part, with what each part
/// was spent behind, and the slow round trips grouped by their largest
/// excess and its culprit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailRecord {
    /// Round trips the slowest were taken from.
    pub round_trips_seen: u64,
    /// What was asked: "0.1%" (a share, at least 10) or "25" (a count).
    pub asked: String,
    /// The fastest of the slowest kept, ns.
    pub threshold_ns: f64,
    /// The typical round trip the excess is counted from: the median
    /// round trip (the one at the middle rank), ns.
    pub typical_ns: f64,
    /// The slowest round trips, slowest first.
    pub slowest: Vec<SlowRoundTripRecord>,
    /// The slowest grouped by signature, most frequent first.
    pub signatures: Vec<SignatureRecord>,
}

/// One of the slowest round trips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowRoundTripRecord {
    /// Its place in the traced pass (0: the first).
    pub index: u64,
    /// Its length, ns; its parts add up to it.
    pub round_trip_ns: f64,
    /// Its length less the typical round trip's, ns.
    pub excess_ns: f64,
    /// Its parts, largest excess first; every part of it or of the
    /// typical round trip, the residual included.
    pub parts: Vec<TailPartRecord>,
    /// Its largest excess and the culprit of it.
    pub signature: String,
}

/// One part of a slow round trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailPartRecord {
    /// The part, as the anatomy names it.
    pub name: String,
    /// Its time in this round trip, ns.
    pub ns: f64,
    /// Its time in the typical round trip, ns.
    pub typical_ns: f64,
    /// ns − typical_ns.
    pub excess_ns: f64,
    /// What most of its time was spent behind: a task ("stress-ng-cpu
    /// [pid 4121]"), an interrupt ("softirq TIMER"), an idle state, "its
    /// own work" or "no event".
    pub culprit: String,
    /// Every culprit of it with its time, ns, largest first.
    pub culprits: Vec<CulpritRecord>,
}

/// A culprit's time within a part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CulpritRecord {
    /// As [`TailPartRecord::culprit`].
    pub name: String,
    /// ns.
    pub ns: f64,
}

/// Slow round trips that share their largest excess and its culprit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignatureRecord {
    /// "server wake-up: run-queue wait behind stress-ng-cpu [pid 4121]".
    pub signature: String,
    /// The part.
    pub part: String,
    /// Its culprit.
    pub culprit: String,
    /// Slow round trips with it.
    pub count: u64,
    /// count ÷ the slow round trips (0–1).
    pub share: f64,
    /// Their mean excess, ns.
    pub mean_excess_ns: f64,
}
