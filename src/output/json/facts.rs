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
use crate::record::facts::{
    BusyRecord, CounterCheckRecord, CpuPerMessageRecord, EventsRecord, IntervalRecord, IrqRecord,
    KernelCallRecord, OneWayRecord, PassesRecord, PeriodicRecord, PrecisionRecord,
    SchedulingRecord, ScoreCounterRecord, ScoreRecord, ScoreThreadRecord, StreamRecord,
    SweepRecord, WindowRecord,
};

impl From<&Achieved> for PrecisionRecord {
    fn from(a: &Achieved) -> Self {
        PrecisionRecord {
            target: a.target,
            achieved: a.achieved.is_finite().then_some(a.achieved),
            met: a.met,
            basis: match a.basis {
                Basis::Passes(_) => "passes",
                Basis::Batches(_) => "batches",
            }
            .into(),
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

impl From<&KernelCheck> for KernelCallRecord {
    fn from(k: &KernelCheck) -> Self {
        KernelCallRecord {
            call: k.call.into(),
            must_enter: k.must_enter,
            entered: k.entered,
        }
    }
}

impl From<&CounterCheck> for CounterCheckRecord {
    fn from(c: &CounterCheck) -> Self {
        CounterCheckRecord {
            source: c.source.into(),
            per_op: c.per_op,
            ops: c.ops,
            observed: c.observed,
        }
    }
}

impl From<&Events> for EventsRecord {
    fn from(e: &Events) -> Self {
        EventsRecord {
            name: e.name.into(),
            per_op: e.per_op,
        }
    }
}

impl From<&Scheduling> for SchedulingRecord {
    fn from(s: &Scheduling) -> Self {
        SchedulingRecord {
            policy: s.policy.into(),
            base_priority: s.base_priority,
            fifo_refused: s.fifo_refused.clone(),
        }
    }
}

impl From<&PeriodicFacts> for PeriodicRecord {
    fn from(p: &PeriodicFacts) -> Self {
        PeriodicRecord {
            period_ns: p.period_ns,
            frequency_hz: p.frequency_hz,
            duration_ms: p.duration_ms,
            timer_slack_ns: p.timer_slack_ns,
            sched_policy: p.sched_policy.into(),
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

impl From<&OneWayFacts> for OneWayRecord {
    fn from(f: &OneWayFacts) -> Self {
        OneWayRecord {
            pacing: f.pacing.into(),
            interval_ns: f.interval_ns,
            messages_sent: f.messages_sent,
            messages_received: f.messages_received,
            gaps: f.gaps,
            window: f.window,
            windows: f.windows.iter().map(Into::into).collect(),
            mean_ns: f.mean_ns,
            time_bounded: f.time_bounded,
            sender_timer_slack_ns: f.sender_timer_slack_ns,
            sender_sched_policy: f.sender_sched_policy.into(),
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

impl From<&ScoreFacts> for ScoreRecord {
    fn from(f: &ScoreFacts) -> Self {
        ScoreRecord {
            operation: f.operation.into(),
            period_ns: f.period_ns,
            elapsed_ns: f.elapsed_ns,
            operations: f.operations,
            ops_per_s: f.ops_per_s,
            is_baseline: f.is_baseline,
            baseline: f.baseline.map(Into::into),
            relative_to_baseline: f.relative_to_baseline,
            interval_operations: f.interval_operations.clone(),
            interval_ns: f.interval_ns.clone(),
            interval_spread: f.interval_spread,
            intervals_without_operation: f.intervals_without_operation,
            sched_policy: f.sched_policy.into(),
            threads: f.threads.iter().map(Into::into).collect(),
            counters: f.counters.iter().map(Into::into).collect(),
            checks: f.checks.iter().map(|c| c.to_string()).collect(),
        }
    }
}

impl From<&ThreadRecord> for ScoreThreadRecord {
    fn from(t: &ThreadRecord) -> Self {
        ScoreThreadRecord {
            name: t.name.into(),
            priority: t.priority,
            fifo_priority: t.fifo_priority,
        }
    }
}

impl From<&CounterRecord> for ScoreCounterRecord {
    fn from(c: &CounterRecord) -> Self {
        ScoreCounterRecord {
            name: c.name.into(),
            value: c.value,
        }
    }
}

impl From<&StreamFacts> for StreamRecord {
    fn from(f: &StreamFacts) -> Self {
        StreamRecord {
            messages_per_s: f.messages_per_s,
            cpu_ns_per_message: (&f.cpu_ns_per_message).into(),
            cpu_busy: (&f.busy).into(),
            bounded_by: f.bounded_by.as_str().into(),
            sent: f.sent,
            received: f.received,
            loss_ratio: f.loss_ratio,
            lossy: f.lossy,
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

impl From<&PassFacts> for PassesRecord {
    fn from(p: &PassFacts) -> Self {
        PassesRecord {
            count: p.count,
            medians_ns: p.medians_ns.clone(),
            drift_corrected_medians_ns: p.drift_corrected_medians_ns.clone(),
            // Known once every figure is measured (`analysis::level`).
            own_interval: None,
        }
    }
}
