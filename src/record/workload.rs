//! The report of `ipcmark workload` (schema `ipcmark.workload/1`,
//! documented in docs/workloads.md and docs/schema/workload.schema.json):
//! the command, the machine, the settings and one [`ConfigurationRecord`]
//! per placement, each with its runs and their summary. Built from the
//! workloads' results by the conversions in `output::workload::records`.

use super::header::Header;
use super::load::LoadRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifies the layout of the report; bumped on any incompatible change.
pub const SCHEMA: &str = "ipcmark.workload/1";

/// Whole command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRecord {
    /// Schema, build, start, end, command and machine, as every report
    /// opens ([`Header`]; its fields stay at the top of the JSON).
    #[serde(flatten)]
    pub header: Header,
    /// Workload id.
    pub workload: String,
    /// What the headline figure is.
    pub figure: FigureInfo,
    /// What applied to every run.
    pub settings: WorkloadSettings,
    /// `--load`: what the load did over the whole command; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadRecord>,
    /// One entry per placement, in command-line order.
    pub configurations: Vec<ConfigurationRecord>,
}

/// Meaning of the headline figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureInfo {
    /// "count" (operations in a fixed time) or "time" (ns for a fixed amount of work).
    pub kind: String,
    /// "operations" or "ns".
    pub unit: String,
    /// "higher" or "lower".
    pub better: String,
    /// What one operation is ("meal", "vector", "pass").
    pub operation: String,
}

/// Settings of the command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSettings {
    /// Runs per configuration.
    pub runs: u32,
    /// Length of a timed run, ms; null for workloads that run to completion.
    pub duration_ms: Option<f64>,
    /// Time-out for start-up, silence and finishing, ms.
    pub timeout_ms: f64,
    /// Role of each process, in process order (process 1 first).
    pub processes: Vec<String>,
    /// The workload's own resolved settings: the one object a workload
    /// fills itself (`Prepared::parameters`), free in shape per workload and
    /// checked by the schema, so it stays JSON.
    pub parameters: serde_json::Value,
    /// Migrations applied in every configuration.
    pub migrations: Vec<MigrationRecord>,
}

/// One `--migrate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// One placement and its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationRecord {
    /// "packed", "spread", "free" or the CPU list.
    pub name: String,
    /// CPU per process (null: not pinned).
    pub placement: Vec<Option<usize>>,
    /// `--engine mpi`: the rank playing each role of the configuration, in
    /// `--place` order, with its node; absent for a local configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<CastRoleRecord>>,
    /// Every run.
    pub runs: Vec<WorkloadRunRecord>,
    /// Over the successful runs; null if none succeeded.
    pub summary: Option<ConfigSummary>,
}

/// The rank playing one role of a configuration (`--engine mpi`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CastRoleRecord {
    /// The role.
    pub role: String,
    /// The rank in `MPI_COMM_WORLD`.
    pub rank: usize,
    /// Its node's number, as in the runs' `ranks`.
    pub node: usize,
    /// Its node's host name.
    pub host: String,
}

/// One run of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRunRecord {
    /// Run number (from 1).
    pub run: usize,
    /// "ok" or "failed".
    pub status: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The headline figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    /// Start barrier to the last process finishing, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    /// Start barrier to the stop (timed runs), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after_ns: Option<u64>,
    /// Run-level figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<BTreeMap<String, f64>>,
    /// Every process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<ProcessRecord>>,
    /// `--engine mpi`: every rank of the job, in rank order, with its node
    /// and CPU; absent for a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<RankRecord>>,
}

/// One MPI rank of one run (`--engine mpi`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRecord {
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
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
    pub counters: BTreeMap<String, u64>,
    /// `--engine mpi`: its rank (absent for a local run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// `--engine mpi`: its node's number (see the run's `ranks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    /// `--engine mpi`: its node's host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Over the successful runs of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub metrics_mean: BTreeMap<String, f64>,
}

/// Why a text is not a workload report this ipcmark reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Not JSON of a workload report's shape (serde's message, which may
    /// quote the text: sanitise it before printing).
    #[error("not an ipcmark workload report: {0}")]
    NotAWorkloadReport(String),
    /// A report of another schema (or version).
    #[error("schema '{0}' is not {SCHEMA}")]
    Schema(String),
}

impl WorkloadRecord {
    /// Reads a workload report parsed as JSON (from a file or the history):
    /// its schema checked first (so another report is named as such, not as
    /// a shape error), then every field.
    pub fn from_value(value: serde_json::Value) -> Result<WorkloadRecord, ReadError> {
        match super::schema_of(&value) {
            Some(SCHEMA) => {}
            Some(other) => return Err(ReadError::Schema(other.to_string())),
            None => return Err(ReadError::NotAWorkloadReport("no schema".into())),
        }
        serde_json::from_value(value).map_err(|e| ReadError::NotAWorkloadReport(e.to_string()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report's text read as the record.
    pub(crate) fn parse(text: &str) -> Result<WorkloadRecord, ReadError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ReadError::NotAWorkloadReport(e.to_string()))?;
        WorkloadRecord::from_value(value)
    }

    /// Reports of `ipcmark workload`, as `--json` wrote them (tests/reports/):
    /// a timed workload with migrations in two placements, one under a
    /// stated load, and one with a failed run.
    pub(crate) const FIXTURES: &[(&str, &str)] = &[
        (
            "workload",
            include_str!("../../tests/reports/workload.json"),
        ),
        (
            "workload-load",
            include_str!("../../tests/reports/workload-load.json"),
        ),
        (
            "workload-failed",
            include_str!("../../tests/reports/workload-failed.json"),
        ),
    ];

    /// Reading a report and writing it again gives the same bytes: every
    /// field is read (none dropped, none defaulted) and written as it was.
    #[test]
    fn every_workload_report_reads_back_byte_for_byte() {
        for (name, text) in FIXTURES {
            let record = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            crate::record::assert_writes_back(name, &record, text);
        }
    }

    #[test]
    fn the_fixtures_cover_what_a_reader_meets() {
        let all: Vec<WorkloadRecord> = FIXTURES.iter().map(|(_, t)| parse(t).unwrap()).collect();
        let runs = || {
            all.iter()
                .flat_map(|w| &w.configurations)
                .flat_map(|c| &c.runs)
        };
        assert!(runs().any(|r| r.status == "failed" && r.error.is_some()));
        assert!(runs().any(|r| r.stopped_after_ns.is_some()));
        assert!(all.iter().any(|w| w.load.is_some()));
        let plans: Vec<&MigrationPlan> = all
            .iter()
            .flat_map(|w| &w.settings.migrations)
            .map(|m| &m.plan)
            .collect();
        assert!(
            plans
                .iter()
                .any(|p| matches!(p, MigrationPlan::Every { .. }))
        );
        assert!(plans.iter().any(|p| matches!(p, MigrationPlan::At { .. })));
    }

    #[test]
    fn another_schema_is_named_and_a_shape_error_says_so() {
        assert_eq!(
            parse(r#"{"schema": "ipcmark.run/1"}"#),
            Err(ReadError::Schema("ipcmark.run/1".into()))
        );
        assert!(matches!(
            parse(r#"{"schema": "ipcmark.workload/1", "configurations": 3}"#),
            Err(ReadError::NotAWorkloadReport(_))
        ));
        assert!(matches!(
            parse("[1, 2]"),
            Err(ReadError::NotAWorkloadReport(_))
        ));
    }
}
