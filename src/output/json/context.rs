//! The records of what applies to every result of a report (the machine,
//! also in the workload report, the phase budget of a figure, and the cost
//! of the verify rounds' check), built from the engine's values.

use super::ms;
use crate::engine::measure::{Budget, Precision};
use crate::engine::verify_cost::VerifyCost;
use crate::machine::cpu_latency::CpuLatencyState;
use crate::machine::environment::{CpuIdle, Environment, IdleState, MpiJob, RankPlace};

use crate::machine::wakeup::WakeupCost;
use crate::record::environment::{
    BudgetRecord, CpuIdleRecord, CpuLatencyRecord, CpuSignatureRecord, EnvironmentRecord,
    IdleStateRecord, MpiRecord, PrecisionTargetRecord, RankRecord, WakeupProbeRecord,
};
use crate::record::run::VerificationRecord;

impl From<&MpiJob> for MpiRecord {
    fn from(j: &MpiJob) -> Self {
        let nodes = crate::machine::environment::nodes(&j.ranks);
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
            cpu_signature: e.cpu_signature.map(|c| CpuSignatureRecord {
                family: c.family,
                model: c.model,
                stepping: c.stepping,
            }),
            microcode: e.microcode.clone(),
            numa_nodes: e.numa_nodes.clone(),
            kernel_cmdline: e.kernel_cmdline.clone(),
            mpi: e.mpi.as_ref().map(Into::into),
        }
    }
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

impl From<&VerifyCost> for VerificationRecord {
    fn from(c: &VerifyCost) -> Self {
        VerificationRecord {
            ns_per_byte: c.ns_per_byte,
            sizes_bytes: c.sizes_bytes.to_vec(),
            calls: c.calls,
            repetitions: c.repetitions,
            took_ns: c.took_ns,
        }
    }
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
