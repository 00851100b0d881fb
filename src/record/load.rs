//! The records of a stated load (`--load`): what it was (`settings.load`),
//! what it did while a figure was measured (`load` of a result: each load
//! process's requested and achieved rate, its handler's count and time) and
//! the figure corrected for it (`correction`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `load` of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// The load held, its parts as written (empty for `--load none`): with
    /// `--load-sweep`, the level the figure was measured at.
    pub specs: Vec<String>,
    /// Length of the window the counts cover, ms (the figure, or the sweep
    /// it was sampled in).
    pub window_ms: f64,
    /// One per load process, in start order.
    pub sources: Vec<SourceRecord>,
    /// The interrupt accounting of each load CPU and each CPU of the figure.
    pub cpus: Vec<CpuRecord>,
}

/// What was counted of interrupts on one CPU in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// The part of the load, as written (`irq:4000:work=2000ns`, `cpu:2:mixed`, `net:20000`).
    pub spec: String,
    /// "irq", "cpu" or "net".
    pub kind: String,
    /// The CPU it was pinned to; null: free on the load CPUs.
    pub cpu: Option<usize>,
    /// "SCHED_FIFO" (an interrupt source when permitted) or "SCHED_OTHER".
    pub policy: String,
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
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_time_ns: Option<Option<u64>>,
}

/// `settings.load`: the load the run held (with `--load-sweep`, one per level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSettingsRecord {
    /// Its parts as written; empty for `--load none` (accounting only).
    pub specs: Vec<String>,
    /// The CPUs it ran on.
    pub cpus: Vec<usize>,
    /// With `--load-sweep`: the level's name on the page ("no load",
    /// "irq 4000 Hz").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `correction` of a result: the figure corrected for the interrupt time
/// accounted while it was measured, with its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorrectionRecord {
    /// "time" (T' = T − f·T) or "score" (S' = S + Ω·S_int, R' = S'/H).
    pub method: String,
    /// "ok", or "passes_zero": the correction would reach or pass zero, so
    /// there is no corrected figure (never clamped).
    pub status: String,
    /// Why there is no corrected figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The CPUs whose interrupt time was accounted (the figure's).
    pub cpus: Vec<usize>,
    /// The window the accounting covers, ms.
    pub window_ms: f64,
    /// Interrupt time accounted on those CPUs in the window, ns.
    pub interrupt_ns: u64,
    /// f = interrupt_ns ÷ (window × CPUs).
    pub interrupt_fraction: f64,
    /// time: T, the figure's median time per operation, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_ns: Option<f64>,
    /// time: f · T, the interrupt time per operation, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupt_ns_per_op: Option<f64>,
    /// time: T' = T − f · T, ns (null when status is passes_zero).
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub corrected_ns: Option<Option<f64>>,
    /// score: S, operations counted in the period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operations: Option<u64>,
    /// score: the period's measured length, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// score: interrupts counted on the test's CPU in the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupts_in_window: Option<u64>,
    /// score: S_int, those interrupts scaled to the period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s_int: Option<f64>,
    /// score: t_int, one interrupt's handling, ns (null without interrupts).
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub t_int_ns: Option<Option<f64>>,
    /// score: t_op, one counted operation, ns.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub t_op_ns: Option<Option<f64>>,
    /// score: Ω = t_int ÷ t_op.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub omega: Option<Option<f64>>,
    /// score: S' = S + Ω · S_int.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub corrected_operations: Option<Option<f64>>,
    /// score: S' per second of the period.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub corrected_ops_per_s: Option<Option<f64>>,
    /// score: R' = S' ÷ H, H the baseline's rate as measured (null without a baseline).
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub corrected_relative_to_baseline: Option<Option<f64>>,
}
