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
