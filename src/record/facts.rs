//! The records of what each figure measured beyond its samples: the
//! precision of its median, the proof of an operation, and the facts each
//! timing model adds (periodic, one-way, score, stream), the sweep it was
//! sampled in and its passes, in the order the schema lists them.

use serde::{Deserialize, Serialize};

/// How precisely a figure's level is known (`precision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionRecord {
    /// The target it was sampled for.
    pub target: f64,
    /// The interval's larger side as a fraction of its centre; null when
    /// the centre is at or below zero.
    pub achieved: Option<f64>,
    /// Whether `achieved ≤ target`.
    pub met: bool,
    /// The 95% interval, ns.
    pub interval_ns: IntervalRecord,
    /// What the interval rests on: "passes" (Student t over the pass
    /// medians, centred on their mean) or "batches" (one pass: the
    /// order-statistic interval of the median of its samples).
    pub basis: String,
    /// How many passes or samples it rests on.
    pub units: usize,
}

/// A confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// A system call the benchmark names and whether an operation made it (`kernel_calls`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCallRecord {
    /// The call.
    pub call: String,
    /// Whether the operation must make it.
    pub must_enter: bool,
    /// Whether it did; null if seccomp is unavailable.
    pub entered: Option<bool>,
}

/// The kernel's count of the operations' work (`kernel_counter`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterCheckRecord {
    /// What was counted, and where.
    pub source: String,
    /// The least it must grow by per operation.
    pub per_op: u64,
    /// Operations performed between the two readings.
    pub ops: u64,
    /// How much it grew.
    pub observed: u64,
}

/// What one operation is made of, when the figures are per event (`events`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsRecord {
    /// What one event is.
    pub name: String,
    /// Events per operation.
    pub per_op: u32,
}

/// The policy a benchmark's threads ran under (`scheduling`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulingRecord {
    /// `SCHED_FIFO`, or `SCHED_OTHER` when SCHED_FIFO was refused.
    pub policy: String,
    /// The measuring thread's SCHED_FIFO priority.
    pub base_priority: Option<i32>,
    /// Why SCHED_FIFO was not used.
    pub fifo_refused: Option<String>,
}

/// Mode periodic's fields of a result (flattened into it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodicRecord {
    /// Period of the wake-ups or of the timer interrupt, ns.
    pub period_ns: u64,
    /// 1 / period, Hz.
    pub frequency_hz: f64,
    /// Planned length of the figure, ms.
    pub duration_ms: f64,
    /// Timer slack of the measuring thread, ns.
    pub timer_slack_ns: u64,
    /// Scheduling policy of the measuring thread.
    pub sched_policy: String,
    /// Wake-ups timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<u64>,
    /// Failure threshold as a fraction of the period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Wake-ups later than tolerance × period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<u64>,
    /// failures / wake-ups (Fail_sys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_ratio: Option<f64>,
    /// The interrupt-overhead comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub irq: Option<IrqRecord>,
}

/// The handler-overhead comparison (`irq`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IrqRecord {
    /// Pairs of loops run.
    pub rounds: usize,
    /// Median loop time without the timer, ns.
    pub loop_without_ns: f64,
    /// The same with the timer, ns.
    pub loop_with_ns: f64,
    /// Interrupts handled.
    pub interrupts: u64,
    /// Timer expirations that coalesced.
    pub overruns: u64,
    /// Blocks left out as disturbed.
    pub dropped_blocks: usize,
    /// Median over rounds of the cost per interrupt, ns.
    pub cost_per_interrupt_ns: f64,
    /// Each round's cost per interrupt, ns.
    pub round_costs_ns: Vec<f64>,
}

/// Mode oneway's fields of a result (flattened into it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWayRecord {
    /// "saturated" or "sporadic".
    pub pacing: String,
    /// ns between two sends; null when saturated.
    pub interval_ns: Option<u64>,
    /// Timed messages sent.
    pub messages_sent: u64,
    /// Timed messages the receiver counted.
    pub messages_received: u64,
    /// Sequence gaps or repeats seen.
    pub gaps: u64,
    /// Messages per window.
    pub window: u64,
    /// One entry per window, in order.
    pub windows: Vec<WindowRecord>,
    /// Mean latency over every timed message, ns.
    pub mean_ns: f64,
    /// Whether the saturated phase stopped at its time bound.
    pub time_bounded: bool,
    /// Timer slack of the sending thread, ns.
    pub sender_timer_slack_ns: u64,
    /// Scheduling policy of the sending thread.
    pub sender_sched_policy: String,
}

/// Min / max / mean of one window of messages, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowRecord {
    /// Messages in the window.
    pub messages: u64,
    /// Smallest latency (at or below 0: below the clock's resolution).
    pub min_ns: f64,
    /// Largest latency.
    pub max_ns: f64,
    /// Mean latency.
    pub mean_ns: f64,
}

/// Mode score's `score` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreRecord {
    /// What one operation is.
    pub operation: String,
    /// Planned counting period, ns.
    pub period_ns: u64,
    /// Measured length from the start to the last report, ns.
    pub elapsed_ns: u64,
    /// The score S.
    pub operations: u64,
    /// operations ÷ elapsed, per second.
    pub ops_per_s: f64,
    /// Whether this test is the baseline.
    pub is_baseline: bool,
    /// The baseline that ran in the same run.
    pub baseline: Option<String>,
    /// R = S / H; null without a baseline.
    pub relative_to_baseline: Option<f64>,
    /// Operations in each reporting interval.
    pub interval_operations: Vec<u64>,
    /// Length of each reporting interval, ns.
    pub interval_ns: Vec<u64>,
    /// (max − min) ÷ median of the intervals' rates.
    pub interval_spread: f64,
    /// Intervals in which no operation completed: left out of
    /// `samples_ns` (no time per operation), counted here.
    pub intervals_without_operation: usize,
    /// Scheduling policy of the test's threads.
    pub sched_policy: String,
    /// The test's threads.
    pub threads: Vec<ScoreThreadRecord>,
    /// Every counter at the last report.
    pub counters: Vec<ScoreCounterRecord>,
    /// The checks made at every report.
    pub checks: Vec<String>,
}

/// One thread of a score test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreThreadRecord {
    /// Name.
    pub name: String,
    /// Thread-Metric priority.
    pub priority: u8,
    /// SCHED_FIFO priority it ran at.
    pub fifo_priority: Option<i32>,
}

/// One counter of a score test at the last report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreCounterRecord {
    /// Name.
    pub name: String,
    /// Its value.
    pub value: u64,
}

/// Mode stream's fields of a result (flattened into it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamRecord {
    /// Messages received per second at the median time per message.
    pub messages_per_s: Option<f64>,
    /// CPU time per message of each side.
    pub cpu_ns_per_message: CpuPerMessageRecord,
    /// Share of the timed part each side spent on a CPU.
    pub cpu_busy: BusyRecord,
    /// "sender", "receiver" or "both": whose loop overhead was subtracted.
    pub bounded_by: String,
    /// Messages sent in the timed part.
    pub sent: u64,
    /// Messages received in the timed part.
    pub received: u64,
    /// 1 − received / sent.
    pub loss_ratio: f64,
    /// Whether the channel may lose messages (a datagram socket): its loss
    /// is a figure; a channel that may not has none to show.
    #[serde(default)]
    pub lossy: bool,
    /// Bytes received per second in each sample (null: its time per
    /// message was at or below zero).
    pub samples_bytes_per_s: Vec<Option<f64>>,
    /// Messages compared byte for byte by the receiver.
    pub verified_messages: u64,
    /// The sender's loop per message, ns.
    pub sender_loop_overhead_ns: f64,
    /// The receiver's loop per message, ns.
    pub receiver_loop_overhead_ns: f64,
    /// Messages per acknowledged window (MPI's streams only; named apart
    /// from mode oneway's `window`, which is another thing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_per_window: Option<u64>,
    /// Sender–receiver pairs counted together (`mpi rate` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u64>,
}

/// CPU time per message of each side, ns (null: at or below zero once the
/// side's loop overhead is subtracted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPerMessageRecord {
    /// The sender's.
    pub sender: Option<f64>,
    /// The receiver's.
    pub receiver: Option<f64>,
}

/// Share of the timed part each side spent on a CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyRecord {
    /// The sender's.
    pub sender: f64,
    /// The receiver's.
    pub receiver: f64,
}

/// How a figure of an interleaved sweep was sampled (`sweep`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    /// Figures sampled together.
    pub figures: usize,
    /// Rounds this figure took part in.
    pub rounds: usize,
    /// How long each of its samples lasted, ms.
    pub sample_time: f64,
    /// Median with the sweep's common drift divided out, ns.
    pub drift_corrected_median_ns: Option<f64>,
}

/// What the passes of a merged figure measured one by one (`passes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassesRecord {
    /// Passes merged into the figure.
    pub count: usize,
    /// Each pass's median one-way time, ns.
    pub medians_ns: Vec<f64>,
    /// Each pass's drift-corrected median, ns; left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_corrected_medians_ns: Vec<f64>,
    /// The figure's own 95% interval, as factors of its centre (e.g. 0.96
    /// and 1.04): the Student t interval of its pass medians once each is
    /// divided by its pass's factor of the run's `level` (docs/trust.md).
    /// Absent where the run's level could not be separated (too few
    /// figures or passes) and in earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_interval: Option<IntervalRecord>,
}
