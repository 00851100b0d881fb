//! The records of what applies to every result of a report: the machine
//! (also in the workload report), the phase budget of a figure and the kind
//! of peer. Report fields hold the engine's values and name the function
//! here that writes them (`serialize_with`).

use super::ms;
use crate::engine::measure::{Budget, Precision};
use crate::engine::os::environment::{
    CpuIdle, CpuLatencyState, Environment, IdleState, MpiJob, RankPlace,
};
use crate::engine::os::peer::PeerKind;
use crate::engine::os::wakeup::WakeupCost;
use serde::{Deserialize, Serialize, Serializer};
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
    /// PM QoS CPU latency limit, µs (null unless root).
    pub cpu_dma_latency_us: Option<i64>,
    /// cpuidle driver, governor and states (null without cpuidle).
    pub cpu_idle: Option<CpuIdleRecord>,
    /// Whether the run held its CPU wake-up latency request; if not, why
    /// and what a cross-CPU wake-up costs.
    pub cpu_latency: CpuLatencyRecord,
    /// `ipcmark mpi` only: the MPI library and every rank's place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiRecord>,
}

/// The MPI job of an `ipcmark mpi` run (`environment.mpi`); read back by
/// `ipcmark show` ([`MpiRecord::job`]).
#[derive(Debug, Serialize, Deserialize)]
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
#[derive(Debug, Serialize, Deserialize)]
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

impl From<&MpiJob> for MpiRecord {
    fn from(j: &MpiJob) -> Self {
        let nodes = crate::engine::os::environment::nodes(&j.ranks);
        let node_of = |p: &RankPlace| nodes.iter().position(|&n| n == p.host).unwrap_or(0);
        MpiRecord {
            library: j.library.clone(),
            standard: format!("{}.{}", j.standard.0, j.standard.1),
            size: j.ranks.len(),
            ranks: j
                .ranks
                .iter()
                .map(|p| RankRecord {
                    rank: p.rank,
                    host: p.host.clone(),
                    node: node_of(p),
                    pid: p.pid,
                    allowed_cpus: p.allowed_cpus.clone(),
                    cpu: p.cpu,
                })
                .collect(),
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        }
    }
}

impl MpiRecord {
    /// The job this record was written from; `None` if its standard is not
    /// "MAJOR.MINOR".
    pub fn job(self) -> Option<MpiJob> {
        let (major, minor) = self.standard.split_once('.')?;
        Some(MpiJob {
            library: self.library,
            standard: (major.parse().ok()?, minor.parse().ok()?),
            ranks: self
                .ranks
                .into_iter()
                .map(|r| RankPlace {
                    rank: r.rank,
                    host: r.host,
                    pid: r.pid,
                    allowed_cpus: r.allowed_cpus,
                    cpu: r.cpu,
                })
                .collect(),
        })
    }
}

/// The kernel's CPU idle driver and states (`environment.cpu_idle`).
#[derive(Debug, Serialize)]
pub struct CpuIdleRecord {
    /// cpuidle driver.
    pub driver: String,
    /// cpuidle governor.
    pub governor: Option<String>,
    /// The first allowed CPU's idle states, shallowest first.
    pub states: Vec<IdleStateRecord>,
}

/// One CPU idle state.
#[derive(Debug, Serialize)]
pub struct IdleStateRecord {
    /// Its name.
    pub name: String,
    /// Exit latency the driver declares, µs.
    pub exit_latency_us: Option<u64>,
    /// Whether it is disabled.
    pub disabled: bool,
}

impl From<&CpuIdle> for CpuIdleRecord {
    fn from(c: &CpuIdle) -> Self {
        CpuIdleRecord {
            driver: c.driver.clone(),
            governor: c.governor.clone(),
            states: c.states.iter().map(IdleStateRecord::from).collect(),
        }
    }
}

impl From<&IdleState> for IdleStateRecord {
    fn from(s: &IdleState) -> Self {
        IdleStateRecord {
            name: s.name.clone(),
            exit_latency_us: s.exit_latency_us,
            disabled: s.disabled,
        }
    }
}

/// What became of the CPU wake-up latency request (`environment.cpu_latency`).
#[derive(Debug, Serialize)]
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
#[derive(Debug, Serialize)]
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

impl From<&CpuLatencyState> for CpuLatencyRecord {
    fn from(c: &CpuLatencyState) -> Self {
        CpuLatencyRecord {
            requested_us: c.requested_us,
            held: c.not_held.is_none(),
            not_held_reason: c.not_held.as_ref().map(|n| n.reason().to_string()),
            wakeup_cost_ns: c.wakeup.as_ref().ok().map(WakeupCost::wakeup_ns),
            wakeup_cost_unmeasured: c.wakeup.as_ref().err().cloned(),
            wakeup_probe: c.wakeup.as_ref().ok().map(|w| WakeupProbeRecord {
                cpus: w.cpus,
                round_trips: w.round_trips,
                blocking_round_trip_ns: w.blocking_round_trip_ns,
                busy_wait_round_trip_ns: w.busy_round_trip_ns,
                deep_idle_entries: w.deep_idle_entries,
            }),
        }
    }
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
            cpu_idle: e.cpu_idle.as_ref().map(CpuIdleRecord::from),
            cpu_latency: (&e.cpu_latency).into(),
            mpi: e.mpi.as_ref().map(Into::into),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest without a cpuidle driver lists no states, so the run reports
    /// of such a host cannot show a state's fields (tests/field_paths.rs
    /// leaves them out there): they are proven here on any host.
    #[test]
    fn an_idle_state_keeps_its_fields() {
        let idle = CpuIdle {
            driver: "haltpoll".into(),
            governor: None,
            states: vec![IdleState {
                name: "haltpoll idle".into(),
                exit_latency_us: Some(30),
                disabled: false,
            }],
        };
        let v = serde_json::to_value(CpuIdleRecord::from(&idle)).unwrap();
        assert_eq!(v["driver"], "haltpoll");
        assert!(v["governor"].is_null(), "{v}");
        let state = &v["states"][0];
        assert_eq!(state["name"], "haltpoll idle");
        assert_eq!(state["exit_latency_us"], 30);
        assert_eq!(state["disabled"], false);
        assert_eq!(state.as_object().unwrap().len(), 3, "{state}");
    }
}
