//! The records of `ipcmark workload`'s report (`record::workload`, schema
//! `ipcmark.workload/1`) built from the runs as they ended: the
//! conversions from the engine's and the workloads' values.

use super::{ConfigResult, factors, ok_runs};
use crate::engine::os::group::Migration;
use crate::record::workload::{
    CastRoleRecord, ConfigSummary, ConfigurationRecord, FigureInfo, MigrationPlan, ProcessRecord,
    RankRecord, WorkloadRunRecord,
};
use crate::stats::Summary;
use crate::workloads::{Headline, RunRecord, WorkloadInfo};
use std::collections::BTreeMap;

/// The record's plan of a migration.
pub fn migration_plan(m: &Migration) -> MigrationPlan {
    match *m {
        Migration::Every { ops, cpus } => MigrationPlan::Every { ops, cpus },
        Migration::At { op, cpu } => MigrationPlan::At { op, cpu },
    }
}

/// Describes the headline figure of `info`.
pub fn figure_info(info: &WorkloadInfo) -> FigureInfo {
    match info.headline {
        Headline::Count => FigureInfo {
            kind: "count".into(),
            unit: "operations".into(),
            better: "higher".into(),
            operation: info.operation.into(),
        },
        Headline::Time => FigureInfo {
            kind: "time".into(),
            unit: "ns".into(),
            better: "lower".into(),
            operation: info.operation.into(),
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
            *metrics_mean.entry(k.to_string()).or_insert(0.0) += v / n;
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

fn run_record(i: usize, r: &Result<RunRecord, String>) -> WorkloadRunRecord {
    match r {
        Err(e) => WorkloadRunRecord {
            run: i + 1,
            status: "failed".into(),
            error: Some(e.clone()),
            figure: None,
            elapsed_ns: None,
            stopped_after_ns: None,
            metrics: None,
            processes: None,
            ranks: None,
        },
        Ok(r) => WorkloadRunRecord {
            run: i + 1,
            status: "ok".into(),
            error: None,
            figure: Some(r.figure),
            elapsed_ns: Some(r.elapsed_ns),
            stopped_after_ns: r.stopped_after_ns,
            metrics: Some(r.metrics.iter().map(|&(k, v)| (k.to_string(), v)).collect()),
            processes: Some(
                r.processes
                    .iter()
                    .enumerate()
                    .map(|(p, pr)| {
                        let place = pr
                            .rank
                            .and_then(|k| r.places.iter().find(|pl| pl.rank == k));
                        ProcessRecord {
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
                            counters: pr
                                .counters
                                .iter()
                                .map(|&(k, v)| (k.to_string(), v))
                                .collect(),
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
                    .map(|pl| RankRecord {
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
                    .map(|r| CastRoleRecord {
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
                .map(|(i, r)| run_record(i, r))
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
