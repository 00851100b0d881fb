//! The JSON records of `ipcmark workload` (schema `ipcmark.workload/1`,
//! documented in docs/workloads.md and docs/schema/workload.schema.json),
//! built from the runs as they ended.

use super::{ConfigResult, factors, ok_runs};
use crate::engine::os::group::Migration;
use crate::stats::Summary;
use crate::workloads::{Headline, RunRecord, WorkloadInfo};
use serde::Serialize;
use std::collections::BTreeMap;

/// Identifies the layout of the report; bumped on any incompatible change.
pub const SCHEMA: &str = "ipcmark.workload/1";

/// Whole command.
#[derive(Debug, Serialize)]
pub struct WorkloadReport {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Version of ipcmark that wrote it.
    pub ipcmark_version: &'static str,
    /// The build that wrote it: version, git commit, dirty tree, features.
    pub build: crate::record::build::BuildRecord,
    /// RFC 3339 start time.
    pub started_at: String,
    /// RFC 3339 end time; null while running.
    pub finished_at: Option<String>,
    /// Whether every planned run was attempted.
    pub complete: bool,
    /// The arguments, program name first.
    pub command_line: Vec<String>,
    /// The machine.
    pub environment: crate::record::environment::EnvironmentRecord,
    /// Workload id.
    pub workload: &'static str,
    /// What the headline figure is.
    pub figure: FigureInfo,
    /// What applied to every run.
    pub settings: WorkloadSettings,
    /// `--load`: what the load did over the whole command; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::record::load::LoadRecord>,
    /// One entry per placement, in command-line order.
    pub configurations: Vec<ConfigurationRecord>,
}

/// Meaning of the headline figure.
#[derive(Debug, Serialize)]
pub struct FigureInfo {
    /// "count" (operations in a fixed time) or "time" (ns for a fixed amount of work).
    pub kind: &'static str,
    /// "operations" or "ns".
    pub unit: &'static str,
    /// "higher" or "lower".
    pub better: &'static str,
    /// What one operation is ("meal", "vector", "pass").
    pub operation: &'static str,
}

/// Settings of the command.
#[derive(Debug, Serialize)]
pub struct WorkloadSettings {
    /// Runs per configuration.
    pub runs: u32,
    /// Length of a timed run, ms; null for workloads that run to completion.
    pub duration_ms: Option<f64>,
    /// Time-out for start-up, silence and finishing, ms.
    pub timeout_ms: f64,
    /// Role of each process, in process order (process 1 first).
    pub processes: Vec<String>,
    /// The workload's own resolved settings.
    pub parameters: serde_json::Value,
    /// Migrations applied in every configuration.
    pub migrations: Vec<MigrationRecord>,
}

/// One `--migrate`.
#[derive(Debug, Serialize)]
pub struct MigrationRecord {
    /// Process number (from 1).
    pub process: usize,
    /// Its role.
    pub role: String,
    /// The plan.
    #[serde(flatten)]
    pub plan: MigrationPlan,
}

/// When and where a process moves (flattened into its [`MigrationRecord`]).
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MigrationPlan {
    /// Between two CPUs every `ops` operations.
    Every {
        /// Operations between moves.
        ops: u64,
        /// The two CPUs.
        cpus: [usize; 2],
    },
    /// Once, to `cpu`, before operation `op`.
    At {
        /// The operation the move precedes.
        op: u64,
        /// Where to.
        cpu: usize,
    },
}

impl From<&Migration> for MigrationPlan {
    fn from(m: &Migration) -> Self {
        match *m {
            Migration::Every { ops, cpus } => MigrationPlan::Every { ops, cpus },
            Migration::At { op, cpu } => MigrationPlan::At { op, cpu },
        }
    }
}

/// One placement and its runs.
#[derive(Debug, Serialize)]
pub struct ConfigurationRecord {
    /// "packed", "spread", "free" or the CPU list.
    pub name: String,
    /// CPU per process (null: not pinned).
    pub placement: Vec<Option<usize>>,
    /// `--engine mpi`: the rank playing each role of the configuration, in
    /// `--place` order, with its node; absent for a local configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<CastRoleJson>>,
    /// Every run.
    pub runs: Vec<RunJson>,
    /// Over the successful runs; null if none succeeded.
    pub summary: Option<ConfigSummary>,
}

/// The rank playing one role of a configuration (`--engine mpi`).
#[derive(Debug, Serialize)]
pub struct CastRoleJson {
    /// The role.
    pub role: String,
    /// The rank in `MPI_COMM_WORLD`.
    pub rank: usize,
    /// Its node's number, as in the runs' `ranks`.
    pub node: usize,
    /// Its node's host name.
    pub host: String,
}

/// One run.
#[derive(Debug, Serialize)]
pub struct RunJson {
    /// Run number (from 1).
    pub run: usize,
    /// "ok" or "failed".
    pub status: &'static str,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The headline figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    /// Start barrier to the last process finishing, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    /// Start barrier to the stop (timed runs), ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_after_ns: Option<u64>,
    /// Run-level figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<BTreeMap<&'static str, f64>>,
    /// Every process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<ProcessJson>>,
    /// `--engine mpi`: every rank of the job, in rank order, with its node
    /// and CPU; absent for a local run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<RankJson>>,
}

/// One MPI rank of one run (`--engine mpi`).
#[derive(Debug, Serialize)]
pub struct RankJson {
    /// The rank in `MPI_COMM_WORLD`.
    pub rank: usize,
    /// What it did in the run.
    pub role: String,
    /// Its node's number, by first appearance in rank order (node 0 is rank 0's).
    pub node: usize,
    /// Its node's host name (`MPI_Get_processor_name`).
    pub host: String,
    /// Its process id on that node.
    pub pid: u32,
    /// The CPUs the launcher bound it to.
    pub allowed_cpus: Vec<usize>,
    /// The CPU it was on at the start of the run.
    pub cpu: Option<usize>,
}

/// One process of one run.
#[derive(Debug, Serialize)]
pub struct ProcessJson {
    /// Process number (from 1).
    pub process: usize,
    /// Its role.
    pub role: String,
    /// CPU it was placed on (null: not pinned).
    pub cpu_placed: Option<usize>,
    /// CPU it ran on once placed, before the start (sched_getcpu).
    pub cpu_start: Option<usize>,
    /// CPU it ran on when it finished.
    pub cpu_end: Option<usize>,
    /// Every CPU it was seen on.
    pub cpus_seen: Vec<usize>,
    /// Migrations carried out.
    pub migrations: u64,
    /// Migrations after which it was not on the target CPU.
    pub migration_misses: u64,
    /// Operations completed.
    pub ops: u64,
    /// Its own time from the start barrier to finishing, ns.
    pub time_ns: u64,
    /// The workload's counters.
    pub counters: BTreeMap<&'static str, u64>,
    /// `--engine mpi`: its rank (absent for a local run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// `--engine mpi`: its node's number (see the run's `ranks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    /// `--engine mpi`: its node's host name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Over the successful runs of a configuration.
#[derive(Debug, Serialize)]
pub struct ConfigSummary {
    /// Runs that produced a figure.
    pub runs_ok: usize,
    /// Mean of the runs' figures.
    pub figure_mean: f64,
    /// Smallest figure.
    pub figure_min: f64,
    /// Largest figure.
    pub figure_max: f64,
    /// Sample standard deviation of the figures.
    pub figure_stddev: f64,
    /// Against the best configuration of the command (1 = best, ≥ 1 otherwise).
    pub factor: Option<f64>,
    /// Mean operations per process.
    pub ops_mean: Vec<f64>,
    /// Mean of each run-level metric.
    pub metrics_mean: BTreeMap<&'static str, f64>,
}

/// Describes the headline figure of `info`.
pub fn figure_info(info: &WorkloadInfo) -> FigureInfo {
    match info.headline {
        Headline::Count => FigureInfo {
            kind: "count",
            unit: "operations",
            better: "higher",
            operation: info.operation,
        },
        Headline::Time => FigureInfo {
            kind: "time",
            unit: "ns",
            better: "lower",
            operation: info.operation,
        },
    }
}

fn summary(c: &ConfigResult, factor: Option<f64>) -> Option<ConfigSummary> {
    let runs = ok_runs(c);
    let figures: Vec<f64> = runs.iter().map(|r| r.figure).collect();
    let s = Summary::of(&figures)?;
    let n = runs.len() as f64;
    let processes = runs[0].processes.len();
    let ops_mean = (0..processes)
        .map(|p| {
            runs.iter()
                .map(|r| r.processes[p].report.ops as f64)
                .sum::<f64>()
                / n
        })
        .collect();
    let mut metrics_mean = BTreeMap::new();
    for r in &runs {
        for &(k, v) in &r.metrics {
            *metrics_mean.entry(k).or_insert(0.0) += v / n;
        }
    }
    Some(ConfigSummary {
        runs_ok: runs.len(),
        figure_mean: s.mean,
        figure_min: s.min,
        figure_max: s.max,
        figure_stddev: s.stddev,
        factor,
        ops_mean,
        metrics_mean,
    })
}

fn run_json(i: usize, r: &Result<RunRecord, String>) -> RunJson {
    match r {
        Err(e) => RunJson {
            run: i + 1,
            status: "failed",
            error: Some(e.clone()),
            figure: None,
            elapsed_ns: None,
            stopped_after_ns: None,
            metrics: None,
            processes: None,
            ranks: None,
        },
        Ok(r) => RunJson {
            run: i + 1,
            status: "ok",
            error: None,
            figure: Some(r.figure),
            elapsed_ns: Some(r.elapsed_ns),
            stopped_after_ns: r.stopped_after_ns,
            metrics: Some(r.metrics.iter().copied().collect()),
            processes: Some(
                r.processes
                    .iter()
                    .enumerate()
                    .map(|(p, pr)| {
                        let place = pr
                            .rank
                            .and_then(|k| r.places.iter().find(|pl| pl.rank == k));
                        ProcessJson {
                            process: p + 1,
                            role: pr.role.clone(),
                            cpu_placed: pr.report.cpu_placed,
                            cpu_start: pr.report.cpu_start,
                            cpu_end: pr.report.cpu_end,
                            cpus_seen: pr.report.cpus_seen.clone(),
                            migrations: pr.report.migrations,
                            migration_misses: pr.report.migration_misses,
                            ops: pr.report.ops,
                            time_ns: pr.report.time_ns,
                            counters: pr.counters.iter().copied().collect(),
                            rank: pr.rank,
                            node: place.map(|pl| pl.node),
                            host: place.map(|pl| pl.host.clone()),
                        }
                    })
                    .collect(),
            ),
            ranks: (!r.places.is_empty()).then(|| {
                r.places
                    .iter()
                    .map(|pl| RankJson {
                        rank: pl.rank,
                        role: pl.role.clone(),
                        node: pl.node,
                        host: pl.host.clone(),
                        pid: pl.pid,
                        allowed_cpus: pl.allowed_cpus.clone(),
                        cpu: pl.cpu,
                    })
                    .collect()
            }),
        },
    }
}

/// The `configurations` array of the report, with summaries and factors.
pub fn configurations(headline: Headline, configs: &[ConfigResult]) -> Vec<ConfigurationRecord> {
    let factors = factors(headline, configs);
    configs
        .iter()
        .zip(factors)
        .map(|(c, f)| ConfigurationRecord {
            name: c.name.clone(),
            placement: c.cpus.clone(),
            roles: (!c.roles.is_empty()).then(|| {
                c.roles
                    .iter()
                    .map(|r| CastRoleJson {
                        role: r.role.clone(),
                        rank: r.rank,
                        node: r.node,
                        host: r.host.clone(),
                    })
                    .collect()
            }),
            runs: c
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| run_json(i, r))
                .collect(),
            summary: summary(c, f),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::config;
    use super::*;

    #[test]
    fn summary_means_each_process() {
        let c = config("a", &[10.0, 20.0]);
        let s = summary(&c, Some(1.0)).unwrap();
        assert_eq!(s.runs_ok, 2);
        assert_eq!(s.figure_mean, 15.0);
        assert_eq!(s.ops_mean, vec![1.0, 2.0]);
        assert_eq!(s.metrics_mean["per_op_ns"], 10.0);
    }
}
