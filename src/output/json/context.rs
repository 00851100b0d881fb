//! The records of what applies to every result of a report: the machine
//! (also in the workload report), the phase budget of a figure and the kind
//! of peer. Report fields hold the engine's values and name the function
//! here that writes them (`serialize_with`).

use super::ms;
use crate::engine::measure::{Budget, Precision};
use crate::engine::os::environment::Environment;
use crate::engine::os::peer::PeerKind;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// Writes the machine as its [`EnvironmentRecord`] (`serialize_with`).
pub fn environment<S: Serializer>(e: &Environment, s: S) -> Result<S::Ok, S::Error> {
    EnvironmentRecord::from(e).serialize(s)
}

/// Writes the phase budget as its [`BudgetRecord`] (`serialize_with`).
pub fn budget<S: Serializer>(b: &Budget, s: S) -> Result<S::Ok, S::Error> {
    BudgetRecord::from(b).serialize(s)
}

/// Writes how the echo server ran: "process" or "thread" (`serialize_with`).
pub fn peer<S: Serializer>(p: &PeerKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match p {
        PeerKind::Process => "process",
        PeerKind::Thread => "thread",
    })
}

/// The machine (`environment`).
#[derive(Debug, Serialize)]
pub struct EnvironmentRecord {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Kernel version string (`uname -v`).
    pub kernel_version: String,
    /// Machine architecture.
    pub arch: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// CPUs this process may run on.
    pub allowed_cpus: Vec<usize>,
    /// Hypervisor ("none" on bare metal).
    pub virtualization: String,
    /// Current clock source.
    pub clocksource: String,
    /// Timer slack of the measuring thread, ns.
    pub timer_slack_ns: Option<u64>,
    /// Preemption model.
    pub preemption: String,
    /// CPU clock of CPU 0, MHz.
    pub cpu_mhz: Option<f64>,
    /// cpufreq governor of CPU 0.
    pub frequency_governor: Option<String>,
    /// SMT state.
    pub smt: Option<String>,
    /// CPUs isolated from the scheduler (`isolcpus`).
    pub isolated_cpus: Vec<usize>,
    /// CPUs in adaptive-tick mode (`nohz_full`).
    pub nohz_full_cpus: Vec<usize>,
    /// Vulnerability → kernel status.
    pub mitigations: BTreeMap<String, String>,
    /// 1, 5 and 15 minute load averages at start.
    pub load_average: [f64; 3],
    /// Share of all CPUs busy just before the run, %.
    pub cpu_busy_percent_at_start: Option<f64>,
    /// PM QoS CPU latency limit, µs.
    pub cpu_dma_latency_us: Option<i64>,
}

impl From<&Environment> for EnvironmentRecord {
    fn from(e: &Environment) -> Self {
        EnvironmentRecord {
            hostname: e.hostname.clone(),
            kernel: e.kernel.clone(),
            kernel_version: e.kernel_version.clone(),
            arch: e.arch.clone(),
            cpu_model: e.cpu_model.clone(),
            logical_cpus: e.logical_cpus,
            allowed_cpus: e.allowed_cpus.clone(),
            virtualization: e.virtualization.clone(),
            clocksource: e.clocksource.clone(),
            timer_slack_ns: e.timer_slack_ns,
            preemption: e.preemption.clone(),
            cpu_mhz: e.cpu_mhz,
            frequency_governor: e.frequency_governor.clone(),
            smt: e.smt.clone(),
            isolated_cpus: e.isolated_cpus.clone(),
            nohz_full_cpus: e.nohz_full_cpus.clone(),
            mitigations: e.mitigations.clone(),
            load_average: e.load_average,
            cpu_busy_percent_at_start: e.cpu_busy_percent_at_start,
            cpu_dma_latency_us: e.cpu_dma_latency_us,
        }
    }
}

/// The phases of one figure (`settings.budget`), durations in ms.
#[derive(Debug, Serialize)]
pub struct BudgetRecord {
    /// Warm-up.
    pub warmup: f64,
    /// Target duration of one sample.
    pub sample_time: f64,
    /// Samples every figure takes at least.
    pub samples: usize,
    /// The precision target and its time limit.
    pub precision: PrecisionTargetRecord,
    /// The per-round-trip (histogram) pass.
    pub histogram_time: f64,
    /// Round trips whose whole content is checked, before and after timing.
    pub verify_rounds: u64,
    /// How long the peer may take beyond a phase's expected duration.
    pub timeout: f64,
}

impl From<&Budget> for BudgetRecord {
    fn from(b: &Budget) -> Self {
        BudgetRecord {
            warmup: ms(b.warmup),
            sample_time: ms(b.sample_time),
            samples: b.samples,
            precision: (&b.precision).into(),
            histogram_time: ms(b.histogram_time),
            verify_rounds: b.verify_rounds,
            timeout: ms(b.timeout),
        }
    }
}

/// When a figure has enough samples (`settings.budget.precision`).
#[derive(Debug, Serialize)]
pub struct PrecisionTargetRecord {
    /// Largest acceptable half-width of the interval of the median, a fraction.
    pub target: f64,
    /// The longest the samples of one figure may take, ms.
    pub max_time: f64,
}

impl From<&Precision> for PrecisionTargetRecord {
    fn from(p: &Precision) -> Self {
        PrecisionTargetRecord {
            target: p.target,
            max_time: ms(p.max_time),
        }
    }
}
