//! The records of what applies to every result of a report: the machine
//! (also in the workload report) and the phase budget of a figure.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The machine (`environment`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// PM QoS CPU latency limit, µs (null unless root).
    pub cpu_dma_latency_us: Option<i64>,
    /// cpuidle driver, governor and states (null without cpuidle).
    pub cpu_idle: Option<CpuIdleRecord>,
    /// Whether the run held its CPU wake-up latency request; if not, why
    /// and what a cross-CPU wake-up costs.
    pub cpu_latency: CpuLatencyRecord,
    /// The CPU's family, model number and stepping (`/proc/cpuinfo`; x86
    /// reports them): absent where not reported and from earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_signature: Option<CpuSignatureRecord>,
    /// The CPU's microcode revision (`/proc/cpuinfo`'s `microcode`, as the
    /// kernel writes it, e.g. `0xd0003a5`): absent where not reported and
    /// from earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
    /// The NUMA nodes online (`/sys/devices/system/node/online`): absent
    /// where the kernel has no NUMA support and from earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<Vec<usize>>,
    /// The kernel's command line (`/proc/cmdline`), sanitised: the tokens
    /// that name a disk, an image, an address or a secret left out (see
    /// docs/json-schema.md); absent from earlier reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cmdline: Option<String>,
    /// `ipcmark mpi` only: the MPI library and every rank's place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiRecord>,
}

/// The CPU's signature (`environment.cpu_signature`), as `/proc/cpuinfo`
/// numbers it: what tells two steppings of one model name apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSignatureRecord {
    /// `cpu family`.
    pub family: u32,
    /// `model` (the number; `cpu_model` is the name).
    pub model: u32,
    /// `stepping`; null where not reported.
    pub stepping: Option<u32>,
}

/// The MPI job of an `ipcmark mpi` run (`environment.mpi`); read back by
/// `ipcmark show` ([`MpiRecord::job`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiRecord {
    /// `MPI_Get_library_version`.
    pub library: String,
    /// `MPI_Get_version`: the standard, "MAJOR.MINOR".
    pub standard: String,
    /// Ranks in the job.
    pub size: usize,
    /// Distinct hosts, in order of first appearance (node 0 is rank 0's).
    pub nodes: Vec<String>,
    /// Every rank's place, in rank order.
    pub ranks: Vec<RankRecord>,
}

/// Where one rank ran (`environment.mpi.ranks[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRecord {
    /// Its rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// Its host (`MPI_Get_processor_name`).
    pub host: String,
    /// The index of its host in `nodes`.
    pub node: usize,
    /// Its process id on that host.
    pub pid: u32,
    /// The CPUs it may run on: the launcher's binding, or all.
    pub allowed_cpus: Vec<usize>,
    /// The CPU it was on when the places were gathered.
    pub cpu: Option<usize>,
}

/// The kernel's CPU idle driver and states (`environment.cpu_idle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuIdleRecord {
    /// cpuidle driver.
    pub driver: String,
    /// cpuidle governor.
    pub governor: Option<String>,
    /// The first allowed CPU's idle states, shallowest first.
    pub states: Vec<IdleStateRecord>,
}

/// One CPU idle state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleStateRecord {
    /// Its name.
    pub name: String,
    /// Exit latency the driver declares, µs.
    pub exit_latency_us: Option<u64>,
    /// Whether it is disabled.
    pub disabled: bool,
}

/// What became of the CPU wake-up latency request (`environment.cpu_latency`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLatencyRecord {
    /// The limit asked for, µs; null when none was (`--cpu-latency off`, a
    /// preset measured with idle states).
    pub requested_us: Option<i32>,
    /// Whether a limit was held for the whole run.
    pub held: bool,
    /// Why not, when not held.
    pub not_held_reason: Option<String>,
    /// What a cross-CPU wake-up costs here, ns; measured only when no limit
    /// was held.
    pub wakeup_cost_ns: Option<f64>,
    /// Why `wakeup_cost_ns` is null.
    pub wakeup_cost_unmeasured: Option<String>,
    /// The probe that measured it.
    pub wakeup_probe: Option<WakeupProbeRecord>,
}

/// The round trips a wake-up's cost is read from (`environment.cpu_latency.wakeup_probe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeupProbeRecord {
    /// The timing side's CPU and the peer's.
    pub cpus: [usize; 2],
    /// Round trips timed each way.
    pub round_trips: usize,
    /// Median round trip when both sides block between messages, ns.
    pub blocking_round_trip_ns: f64,
    /// Median round trip when both sides busy-wait, ns.
    pub busy_wait_round_trip_ns: f64,
    /// Entries of the two CPUs into idle states deeper than polling during
    /// the probe (null without cpuidle); 0: something held them off.
    pub deep_idle_entries: Option<u64>,
}

/// The phases of one figure (`settings.budget`), durations in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// When a figure has enough samples (`settings.budget.precision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionTargetRecord {
    /// Largest acceptable half-width of the interval of the median, a fraction.
    pub target: f64,
    /// The longest the samples of one figure may take, ms.
    pub max_time: f64,
}
