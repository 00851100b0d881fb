//! The record of what a stated load did while a figure was measured
//! (`load` of a result, `--load`): each load process's requested and
//! achieved rate and its handler's count and time.

use crate::engine::os::load::LoadPlan;
use crate::engine::run::correct::{Corrected, Correction, Status};
use crate::engine::run::load::FigureLoad;
use crate::record::load::{
    CorrectionRecord, CpuRecord, LoadRecord, LoadSettingsRecord, SourceRecord,
};

impl From<&FigureLoad> for LoadRecord {
    fn from(l: &FigureLoad) -> LoadRecord {
        LoadRecord {
            specs: l.specs.iter().map(|s| s.label()).collect(),
            window_ms: l.window_ns as f64 / 1e6,
            sources: l
                .sources
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let irq = s.spec.kind() == "irq";
                    SourceRecord {
                        spec: s.spec.label(),
                        kind: s.spec.kind().into(),
                        cpu: s.cpu,
                        policy: if s.fifo { "SCHED_FIFO" } else { "SCHED_OTHER" }.into(),
                        requested_per_s: s.requested_per_s(),
                        achieved_per_s: l.achieved_per_s(i),
                        count: s.count,
                        other: s.other,
                        handler_ns: irq.then_some(s.handler_ns),
                        cpu_time_ns: irq.then_some(s.cpu_time_ns),
                    }
                })
                .collect(),
            cpus: l
                .cpus
                .iter()
                .map(|c| {
                    let (n, h, cpu_ns) = l.sources_on(c.cpu);
                    CpuRecord {
                        cpu: c.cpu,
                        interrupts: c.interrupts.clone(),
                        softirqs: c.softirqs.clone(),
                        irq_ns: c.irq_ns,
                        softirq_ns: c.softirq_ns,
                        load_handlers: n,
                        load_handler_ns: h,
                        load_cpu_ns: cpu_ns,
                        interrupt_ns: l.interrupt_ns_on(c.cpu),
                    }
                })
                .collect(),
        }
    }
}

impl From<&LoadPlan> for LoadSettingsRecord {
    fn from(p: &LoadPlan) -> LoadSettingsRecord {
        LoadSettingsRecord {
            specs: p.specs.iter().map(|s| s.label()).collect(),
            cpus: p.cpus.clone(),
            label: None,
        }
    }
}

impl From<&Correction> for CorrectionRecord {
    fn from(c: &Correction) -> CorrectionRecord {
        let passes_zero = c.status == Status::PassesZero;
        let mut r = CorrectionRecord {
            method: "time".into(),
            status: if passes_zero { "passes_zero" } else { "ok" }.into(),
            note: passes_zero.then(|| {
                format!(
                    "the interrupt time accounted ({:.1} ms on {} CPU(s)) is the whole window \
                     ({:.1} ms) or more: the correction would reach or pass zero",
                    c.interrupt_ns as f64 / 1e6,
                    c.cpus.len(),
                    c.window_ns as f64 / 1e6
                )
            }),
            cpus: c.cpus.clone(),
            window_ms: c.window_ns as f64 / 1e6,
            interrupt_ns: c.interrupt_ns,
            interrupt_fraction: c.fraction,
            measured_ns: None,
            interrupt_ns_per_op: None,
            corrected_ns: None,
            operations: None,
            elapsed_ms: None,
            interrupts_in_window: None,
            s_int: None,
            t_int_ns: None,
            t_op_ns: None,
            omega: None,
            corrected_operations: None,
            corrected_ops_per_s: None,
            corrected_relative_to_baseline: None,
        };
        match c.kind {
            Corrected::Time {
                measured_ns,
                interrupt_ns_per_op,
                corrected_ns,
            } => {
                r.measured_ns = Some(measured_ns);
                r.interrupt_ns_per_op = Some(interrupt_ns_per_op);
                r.corrected_ns = Some(corrected_ns);
            }
            Corrected::Score {
                operations,
                elapsed_ns,
                interrupts_in_window,
                s_int,
                t_int_ns,
                t_op_ns,
                omega,
                corrected_operations,
                corrected_ops_per_s,
                corrected_relative_to_baseline,
            } => {
                r.method = "score".into();
                r.operations = Some(operations);
                r.elapsed_ms = Some(elapsed_ns as f64 / 1e6);
                r.interrupts_in_window = Some(interrupts_in_window);
                r.s_int = Some(s_int);
                r.t_int_ns = Some(t_int_ns);
                r.t_op_ns = Some(t_op_ns);
                r.omega = Some(omega);
                r.corrected_operations = Some(corrected_operations);
                r.corrected_ops_per_s = Some(corrected_ops_per_s);
                r.corrected_relative_to_baseline = Some(corrected_relative_to_baseline);
            }
        }
        r
    }
}
