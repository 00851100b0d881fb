//! The records of what each figure measured beyond its samples: the
//! precision of its median, the proof of an operation, and the facts each
//! timing model adds (periodic, one-way, score, stream), the sweep it was
//! sampled in and its passes. Each is built from the engine's type
//! (`From<&…>`) field for field, in the order the schema lists them.

use super::ms;
use crate::engine::measure::{Achieved, Basis};
use crate::engine::models::oneway::{OneWayFacts, Window};
use crate::engine::models::oploop::CounterCheck;
use crate::engine::models::periodic::{IrqFacts, PeriodicFacts};
use crate::engine::models::score::{CounterRecord, ScoreFacts, ThreadRecord};
use crate::engine::models::stream::{Busy, CpuPerMessage, StreamFacts};
use crate::engine::op::Events;
use crate::engine::os::probe::KernelCheck;
use crate::engine::run::figure::{PassFacts, Scheduling, SweepFacts};
use serde::Serialize;

/// How precisely a figure's level is known (`precision`).
#[derive(Debug, Serialize)]
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
    pub basis: &'static str,
    /// How many passes or samples it rests on.
    pub units: usize,
}

/// A confidence interval.
#[derive(Debug, Serialize)]
pub struct IntervalRecord {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl From<&Achieved> for PrecisionRecord {
    fn from(a: &Achieved) -> Self {
        PrecisionRecord {
            target: a.target,
            achieved: a.achieved.is_finite().then_some(a.achieved),
            met: a.met,
            basis: match a.basis {
                Basis::Passes(_) => "passes",
                Basis::Batches(_) => "batches",
            },
            units: match a.basis {
                Basis::Passes(n) | Basis::Batches(n) => n,
            },
            interval_ns: IntervalRecord {
                low: a.interval_ns.low,
                high: a.interval_ns.high,
            },
        }
    }
}

/// A system call the benchmark names and whether an operation made it (`kernel_calls`).
#[derive(Debug, Serialize)]
pub struct KernelCallRecord {
    /// The call.
    pub call: &'static str,
    /// Whether the operation must make it.
    pub must_enter: bool,
    /// Whether it did; null if seccomp is unavailable.
    pub entered: Option<bool>,
}

impl From<&KernelCheck> for KernelCallRecord {
    fn from(k: &KernelCheck) -> Self {
        KernelCallRecord {
            call: k.call,
            must_enter: k.must_enter,
            entered: k.entered,
        }
    }
}

/// The kernel's count of the operations' work (`kernel_counter`).
#[derive(Debug, Serialize)]
pub struct CounterCheckRecord {
    /// What was counted, and where.
    pub source: &'static str,
    /// The least it must grow by per operation.
    pub per_op: u64,
    /// Operations performed between the two readings.
    pub ops: u64,
    /// How much it grew.
    pub observed: u64,
}

impl From<&CounterCheck> for CounterCheckRecord {
    fn from(c: &CounterCheck) -> Self {
        CounterCheckRecord {
            source: c.source,
            per_op: c.per_op,
            ops: c.ops,
            observed: c.observed,
        }
    }
}

/// What one operation is made of, when the figures are per event (`events`).
#[derive(Debug, Serialize)]
pub struct EventsRecord {
    /// What one event is.
    pub name: &'static str,
    /// Events per operation.
    pub per_op: u32,
}

impl From<&Events> for EventsRecord {
    fn from(e: &Events) -> Self {
        EventsRecord {
            name: e.name,
            per_op: e.per_op,
        }
    }
}

/// The policy a benchmark's threads ran under (`scheduling`).
#[derive(Debug, Serialize)]
pub struct SchedulingRecord {
    /// `SCHED_FIFO`, or `SCHED_OTHER` when SCHED_FIFO was refused.
    pub policy: &'static str,
    /// The measuring thread's SCHED_FIFO priority.
    pub base_priority: Option<i32>,
    /// Why SCHED_FIFO was not used.
    pub fifo_refused: Option<String>,
}

impl From<&Scheduling> for SchedulingRecord {
    fn from(s: &Scheduling) -> Self {
        SchedulingRecord {
            policy: s.policy,
            base_priority: s.base_priority,
            fifo_refused: s.fifo_refused.clone(),
        }
    }
}

/// Mode periodic's fields of a result (flattened into it).
#[derive(Debug, Serialize)]
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
    pub sched_policy: &'static str,
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
#[derive(Debug, Serialize)]
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

impl From<&PeriodicFacts> for PeriodicRecord {
    fn from(p: &PeriodicFacts) -> Self {
        PeriodicRecord {
            period_ns: p.period_ns,
            frequency_hz: p.frequency_hz,
            duration_ms: p.duration_ms,
            timer_slack_ns: p.timer_slack_ns,
            sched_policy: p.sched_policy,
            wakeups: p.wakeups,
            tolerance: p.tolerance,
            failures: p.failures,
            fail_ratio: p.fail_ratio,
            irq: p.irq.as_ref().map(Into::into),
        }
    }
}

impl From<&IrqFacts> for IrqRecord {
    fn from(i: &IrqFacts) -> Self {
        IrqRecord {
            rounds: i.rounds,
            loop_without_ns: i.loop_without_ns,
            loop_with_ns: i.loop_with_ns,
            interrupts: i.interrupts,
            overruns: i.overruns,
            dropped_blocks: i.dropped_blocks,
            cost_per_interrupt_ns: i.cost_per_interrupt_ns,
            round_costs_ns: i.round_costs_ns.clone(),
        }
    }
}

/// Mode oneway's fields of a result (flattened into it).
#[derive(Debug, Serialize)]
pub struct OneWayRecord {
    /// "saturated" or "sporadic".
    pub pacing: &'static str,
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
    pub sender_sched_policy: &'static str,
}

/// Min / max / mean of one window of messages, ns.
#[derive(Debug, Serialize)]
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

impl From<&OneWayFacts> for OneWayRecord {
    fn from(f: &OneWayFacts) -> Self {
        OneWayRecord {
            pacing: f.pacing,
            interval_ns: f.interval_ns,
            messages_sent: f.messages_sent,
            messages_received: f.messages_received,
            gaps: f.gaps,
            window: f.window,
            windows: f.windows.iter().map(Into::into).collect(),
            mean_ns: f.mean_ns,
            time_bounded: f.time_bounded,
            sender_timer_slack_ns: f.sender_timer_slack_ns,
            sender_sched_policy: f.sender_sched_policy,
        }
    }
}

impl From<&Window> for WindowRecord {
    fn from(w: &Window) -> Self {
        WindowRecord {
            messages: w.messages,
            min_ns: w.min_ns,
            max_ns: w.max_ns,
            mean_ns: w.mean_ns,
        }
    }
}

/// Mode score's `score` object.
#[derive(Debug, Serialize)]
pub struct ScoreRecord {
    /// What one operation is.
    pub operation: &'static str,
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
    pub baseline: Option<&'static str>,
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
    pub sched_policy: &'static str,
    /// The test's threads.
    pub threads: Vec<ScoreThreadRecord>,
    /// Every counter at the last report.
    pub counters: Vec<ScoreCounterRecord>,
    /// The checks made at every report.
    pub checks: Vec<&'static str>,
}

/// One thread of a score test.
#[derive(Debug, Serialize)]
pub struct ScoreThreadRecord {
    /// Name.
    pub name: &'static str,
    /// Thread-Metric priority.
    pub priority: u8,
    /// SCHED_FIFO priority it ran at.
    pub fifo_priority: Option<i32>,
}

/// One counter of a score test at the last report.
#[derive(Debug, Serialize)]
pub struct ScoreCounterRecord {
    /// Name.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
}

impl From<&ScoreFacts> for ScoreRecord {
    fn from(f: &ScoreFacts) -> Self {
        ScoreRecord {
            operation: f.operation,
            period_ns: f.period_ns,
            elapsed_ns: f.elapsed_ns,
            operations: f.operations,
            ops_per_s: f.ops_per_s,
            is_baseline: f.is_baseline,
            baseline: f.baseline,
            relative_to_baseline: f.relative_to_baseline,
            interval_operations: f.interval_operations.clone(),
            interval_ns: f.interval_ns.clone(),
            interval_spread: f.interval_spread,
            intervals_without_operation: f.intervals_without_operation,
            sched_policy: f.sched_policy,
            threads: f.threads.iter().map(Into::into).collect(),
            counters: f.counters.iter().map(Into::into).collect(),
            checks: f.checks.clone(),
        }
    }
}

impl From<&ThreadRecord> for ScoreThreadRecord {
    fn from(t: &ThreadRecord) -> Self {
        ScoreThreadRecord {
            name: t.name,
            priority: t.priority,
            fifo_priority: t.fifo_priority,
        }
    }
}

impl From<&CounterRecord> for ScoreCounterRecord {
    fn from(c: &CounterRecord) -> Self {
        ScoreCounterRecord {
            name: c.name,
            value: c.value,
        }
    }
}

/// Mode stream's fields of a result (flattened into it).
#[derive(Debug, Serialize)]
pub struct StreamRecord {
    /// Messages received per second at the median time per message.
    pub messages_per_s: Option<f64>,
    /// CPU time per message of each side.
    pub cpu_ns_per_message: CpuPerMessageRecord,
    /// Share of the timed part each side spent on a CPU.
    pub cpu_busy: BusyRecord,
    /// "sender", "receiver" or "both": whose loop overhead was subtracted.
    pub bounded_by: &'static str,
    /// Messages sent in the timed part.
    pub sent: u64,
    /// Messages received in the timed part.
    pub received: u64,
    /// 1 − received / sent.
    pub loss_ratio: f64,
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
#[derive(Debug, Serialize)]
pub struct CpuPerMessageRecord {
    /// The sender's.
    pub sender: Option<f64>,
    /// The receiver's.
    pub receiver: Option<f64>,
}

/// Share of the timed part each side spent on a CPU.
#[derive(Debug, Serialize)]
pub struct BusyRecord {
    /// The sender's.
    pub sender: f64,
    /// The receiver's.
    pub receiver: f64,
}

impl From<&StreamFacts> for StreamRecord {
    fn from(f: &StreamFacts) -> Self {
        StreamRecord {
            messages_per_s: f.messages_per_s,
            cpu_ns_per_message: (&f.cpu_ns_per_message).into(),
            cpu_busy: (&f.busy).into(),
            bounded_by: f.bounded_by.as_str(),
            sent: f.sent,
            received: f.received,
            loss_ratio: f.loss_ratio,
            samples_bytes_per_s: f.samples_bytes_per_s.clone(),
            verified_messages: f.verified_messages,
            sender_loop_overhead_ns: f.sender_loop_overhead_ns,
            receiver_loop_overhead_ns: f.receiver_loop_overhead_ns,
            messages_per_window: f.window,
            pairs: f.pairs,
        }
    }
}

impl From<&Busy> for BusyRecord {
    fn from(b: &Busy) -> Self {
        BusyRecord {
            sender: b.sender,
            receiver: b.receiver,
        }
    }
}

impl From<&CpuPerMessage> for CpuPerMessageRecord {
    fn from(c: &CpuPerMessage) -> Self {
        CpuPerMessageRecord {
            sender: c.sender,
            receiver: c.receiver,
        }
    }
}

/// How a figure of an interleaved sweep was sampled (`sweep`).
#[derive(Debug, Serialize)]
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

impl From<&SweepFacts> for SweepRecord {
    fn from(s: &SweepFacts) -> Self {
        SweepRecord {
            figures: s.figures,
            rounds: s.rounds,
            sample_time: ms(s.sample_time),
            drift_corrected_median_ns: s.drift_corrected_median_ns,
        }
    }
}

/// What the passes of a merged figure measured one by one (`passes`).
#[derive(Debug, Serialize)]
pub struct PassesRecord {
    /// Passes merged into the figure.
    pub count: usize,
    /// Each pass's median one-way time, ns.
    pub medians_ns: Vec<f64>,
    /// Each pass's drift-corrected median, ns; left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift_corrected_medians_ns: Vec<f64>,
}

impl From<&PassFacts> for PassesRecord {
    fn from(p: &PassFacts) -> Self {
        PassesRecord {
            count: p.count,
            medians_ns: p.medians_ns.clone(),
            drift_corrected_medians_ns: p.drift_corrected_medians_ns.clone(),
        }
    }
}
