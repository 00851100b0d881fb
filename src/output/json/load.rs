//! The record of what a stated load did while a figure was measured
//! (`load` of a result, `--load`): each load process's requested and
//! achieved rate and its handler's count and time.

use crate::engine::os::load::LoadPlan;
use crate::engine::run::load::FigureLoad;
use serde::Serialize;
use std::collections::BTreeMap;

/// `load` of a result.
#[derive(Debug, Serialize)]
pub struct LoadRecord {
    /// Length of the window the counts cover, ms (the figure, or the sweep
    /// it was sampled in).
    pub window_ms: f64,
    /// One per load process, in start order.
    pub sources: Vec<SourceRecord>,
    /// The interrupt accounting of each load CPU and each CPU of the figure.
    pub cpus: Vec<CpuRecord>,
}

/// What was counted of interrupts on one CPU in the window.
#[derive(Debug, Serialize)]
pub struct CpuRecord {
    /// The CPU.
    pub cpu: usize,
    /// `/proc/interrupts` lines that counted on it (LOC, RES, CAL, TLB,
    /// device lines by number), with how many.
    pub interrupts: BTreeMap<String, u64>,
    /// `/proc/softirqs` kinds that counted on it (TIMER, HRTIMER, NET_RX, …).
    pub softirqs: BTreeMap<String, u64>,
    /// `/proc/stat` hard-interrupt time, ns (in steps of 10⁹ / USER_HZ).
    pub irq_ns: u64,
    /// `/proc/stat` soft-interrupt time, ns (same steps).
    pub softirq_ns: u64,
    /// Interrupts the load's interrupt sources on this CPU handled.
    pub load_handlers: u64,
    /// Their handler time, stamped in the handler, ns.
    pub load_handler_ns: u64,
    /// Their CPU time as the scheduler counts it, ns (the handler time
    /// where that could not be read).
    pub load_cpu_ns: u64,
    /// The interrupt time accounted on this CPU: irq + softirq + the
    /// sources' CPU time, ns. What the corrections subtract.
    pub interrupt_ns: u64,
}

/// What one load process did in the window.
#[derive(Debug, Serialize)]
pub struct SourceRecord {
    /// The part of the load, as written (`irq:4000:work=2000ns`, `cpu:2:mixed`, `net:20000`).
    pub spec: String,
    /// "irq", "cpu" or "net".
    pub kind: &'static str,
    /// The CPU it was pinned to; null: free on the load CPUs.
    pub cpu: Option<usize>,
    /// "SCHED_FIFO" (an interrupt source when permitted) or "SCHED_OTHER".
    pub policy: &'static str,
    /// What was asked per second: interrupts (irq) or datagrams (net);
    /// null for cpu (as fast as it goes).
    pub requested_per_s: Option<f64>,
    /// What it did per second of the window: interrupts handled, rounds
    /// computed and checked, or datagrams sent.
    pub achieved_per_s: Option<f64>,
    /// Interrupts handled, rounds computed and checked, or datagrams sent.
    pub count: u64,
    /// irq: deadlines passed while the handler was late (skipped, not run
    /// late); net: datagrams received.
    pub other: u64,
    /// irq: handler time stamped in the handler, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler_ns: Option<u64>,
    /// irq: the source's CPU time as the scheduler counts it
    /// (/proc/PID/schedstat), ns: its handler plus its wake-ups and timer
    /// system calls; null if unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time_ns: Option<Option<u64>>,
}

impl From<&FigureLoad> for LoadRecord {
    fn from(l: &FigureLoad) -> LoadRecord {
        LoadRecord {
            window_ms: l.window_ns as f64 / 1e6,
            sources: l
                .sources
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let irq = s.spec.kind() == "irq";
                    SourceRecord {
                        spec: s.spec.label(),
                        kind: s.spec.kind(),
                        cpu: s.cpu,
                        policy: if s.fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
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

/// `settings.load`: the load the run held.
#[derive(Debug, Clone, Serialize)]
pub struct LoadSettingsRecord {
    /// Its parts as written; empty for `--load none` (accounting only).
    pub specs: Vec<String>,
    /// The CPUs it ran on.
    pub cpus: Vec<usize>,
}

impl From<&LoadPlan> for LoadSettingsRecord {
    fn from(p: &LoadPlan) -> LoadSettingsRecord {
        LoadSettingsRecord {
            specs: p.specs.iter().map(|s| s.label()).collect(),
            cpus: p.cpus.clone(),
        }
    }
}
