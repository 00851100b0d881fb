//! A workload's runs asked for in code: [`LocalWorkload`] (the workload,
//! its parameters, placements and migrations, runs, load, deadline and
//! where its report goes) is checked, the CPU wake-up latency held, and the
//! engine's repeated session runs every configuration `runs` times, the
//! report saved after every run (`saving.rs`); [`WorkloadOutcome`] holds
//! the report and how the runs went. `mpi.rs` (cargo feature `mpi`) is the
//! same across the ranks of an MPI job. The caller prints the page.

#[cfg(feature = "mpi")]
pub mod mpi;
pub mod placement;
pub mod saving;

use super::plan::latency_request;
use super::request::Load;
use super::values::CpuLatency;
use super::{Failure, hold_cpu_latency};
use crate::engine::os::group::Migration;
use crate::engine::os::interrupt;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::repeated::{self, RunEnd};
use crate::machine::environment::{self, Environment};
use crate::output::progress::RunsProgress;
use crate::output::workload::{self as report, ConfigResult};
use crate::record::workload::{MigrationRecord, WorkloadRecord};
use crate::workloads::{
    Params, Prepared, RunContext, RunError, RunRecord as WorkloadRun, Workload,
};
use placement::{Placement, migrations, placements};
use saving::{ReportStart, Saver, Sink};
use std::path::PathBuf;
use std::time::Duration;

/// A workload's runs on this machine, as asked.
pub struct LocalWorkload {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// Its parameters, checked against what it takes.
    pub params: Params,
    /// `--place`: the placements of its processes (default: each CPU in turn).
    pub place: Vec<String>,
    /// `--migrate`: processes moved between CPUs during a run.
    pub migrate: Vec<String>,
    /// Runs of each configuration.
    pub runs: u32,
    /// A load held around every run.
    pub load: Load,
    /// The CPU wake-up latency asked for.
    pub cpu_latency: Option<CpuLatency>,
    /// How long the processes may go without progress.
    pub timeout: Duration,
    /// The JSON report, written after every run.
    pub json: Option<PathBuf>,
    /// The history (default: the user's).
    pub db: Option<PathBuf>,
    /// Keep the runs out of the history.
    pub no_save: bool,
}

/// How a workload's runs went.
pub struct WorkloadOutcome {
    /// The report as saved.
    pub report: WorkloadRecord,
    /// The machine it ran on.
    pub environment: Environment,
    /// Runs that failed.
    pub failed: usize,
    /// The signal that stopped the runs early, if one did.
    pub stopped: Option<i32>,
    /// Places the report could not be saved to (each was warned about).
    pub unsaved: usize,
}

/// One run of a local configuration: the workload's processes forked and
/// placed as the configuration says (the engine's `os::group`).
struct LocalRuns<'a> {
    prepared: &'a dyn Prepared,
    configs: &'a [Placement],
    migrations: &'a [Option<Migration>],
    names: &'a ObjectNamer,
    timeout: Duration,
}

impl repeated::Repeated for LocalRuns<'_> {
    type Record = WorkloadRun;

    fn run(&mut self, config: usize) -> Result<WorkloadRun, RunEnd> {
        let ctx = RunContext {
            cpus: &self.configs[config].cpus,
            migrations: self.migrations,
            names: self.names,
            timeout: self.timeout,
        };
        self.prepared.run(&ctx).map_err(|e| match e {
            RunError::Failed(why) => RunEnd::Failed(why),
            RunError::Interrupted(_) => RunEnd::Interrupted,
        })
    }
}

/// Runs `request`: every configuration `runs` times, the progress bar on
/// stderr, the report saved after every run. Fails before any run for what
/// cannot be done (exit 2) or cannot start (exit 1).
pub fn run_local(request: LocalWorkload) -> Result<WorkloadOutcome, Failure> {
    let info = request.workload.info();
    let prepared = request
        .workload
        .prepare(&request.params)
        .map_err(Failure::usage)?;
    let roles = prepared.roles();
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?;
    if allowed.is_empty() {
        return Err(Failure::run("no CPU is available to ipcmark".to_string()));
    }
    let configs = placements(&request.place, roles.len(), &allowed).map_err(Failure::usage)?;
    let plans = migrations(&request.migrate, &roles, &allowed).map_err(Failure::usage)?;
    crate::run::failure::check_json_path(request.json.as_deref())?;
    let runs = request.runs;
    let load_plan = crate::run::plan::load_plan(
        request.load.spec.as_ref(),
        request.load.cpus.as_ref(),
        [None, None],
        &allowed,
    )?;

    // Held for the whole command, as in `ipcmark run`.
    let latency = hold_cpu_latency(&latency_request(request.cpu_latency), &allowed)?;
    interrupt::install()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;
    let env = environment::collect(latency.state.clone(), None);
    let rep = ReportStart {
        info: &info,
        runs,
        duration: prepared.duration(),
        timeout: request.timeout,
        processes: roles.clone(),
        parameters: prepared.parameters(),
        migrations: plans
            .iter()
            .enumerate()
            .filter_map(|(p, plan)| {
                plan.as_ref().map(|plan| MigrationRecord {
                    process: p + 1,
                    role: roles[p].clone(),
                    plan: report::migration_plan(plan),
                })
            })
            .collect(),
        environment: env.clone(),
    }
    .report();
    // Kept in the history as it goes, as `ipcmark run` is.
    let sink = Sink::open(
        request.json.clone(),
        request.db.as_deref(),
        request.no_save,
        &rep,
    )?;
    let mut saver = Saver {
        rep,
        sink,
        headline: info.headline,
        results: configs
            .iter()
            .map(|c| ConfigResult {
                name: c.name.clone(),
                cpus: c.cpus.clone(),
                runs: Vec::new(),
                roles: Vec::new(),
            })
            .collect(),
    };
    let plan = repeated::Plan {
        configurations: configs.iter().map(|c| c.name.clone()).collect(),
        runs,
        load: load_plan,
    };
    let names = ObjectNamer::new();
    let mut source = LocalRuns {
        prepared: prepared.as_ref(),
        configs: &configs,
        migrations: &plans,
        names: &names,
        timeout: request.timeout,
    };
    let mut progress = RunsProgress::new(info.id, configs.len() * runs as usize);
    let observers: &mut [&mut dyn repeated::Observer<_>] = &mut [&mut progress, &mut saver];
    let stopped = repeated::run(&plan, &mut source, observers).map_err(Failure::run)?;
    let failed = saver
        .results
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| r.is_err())
        .count();
    Ok(WorkloadOutcome {
        report: saver.rep,
        environment: env,
        failed,
        stopped,
        unsaved: saver.sink.unsaved(),
    })
}
