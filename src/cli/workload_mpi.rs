//! `ipcmark workload NAME --engine mpi` (cargo feature `mpi`), run on every
//! rank under `mpirun`: every rank runs every run of the workload
//! (`cluster::workloads`); rank 0 holds the CPU wake-up latency request on
//! its host, writes `--json` and the history after every run and prints the
//! tables, as `ipcmark workload` does locally. A failure on any rank is one
//! line on its stderr and ends the job (`MPI_Abort`), since its peers would
//! wait for it forever; the runs already saved are kept.

use super::plan::latency_request;
use super::workload::{ReportStart, Sink};
use super::{Failure, hold_cpu_latency, parse, print_stdout};
use crate::cluster::World;
use crate::cluster::workloads::{self, Job};
use crate::engine::os::environment;
use crate::output::workload::{self as report, ConfigResult};
use crate::workloads::{Params, WorkloadInfo};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// What `ipcmark workload --engine mpi` was given, checked.
pub(super) struct MpiRun {
    pub info: WorkloadInfo,
    pub params: Params,
    pub handoff: Option<u64>,
    pub runs: u32,
    pub timeout: Duration,
    pub cpu_latency: Option<parse::CpuLatency>,
    pub json: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub no_save: bool,
}

/// Runs the workload on this rank.
pub(super) fn run(a: MpiRun) -> Result<ExitCode, Failure> {
    let world = World::init().map_err(Failure::run)?;
    let mut job = Job::new(a.timeout);
    let w = match workloads::prepare(a.info.id, &a.params, a.handoff, job.size) {
        Ok(w) => w,
        Err(e) => {
            // Every rank finds the same error; rank 0 alone says it, and
            // the others leave only after it has (mpirun ends the job as
            // soon as one rank exits with an error, which could cut rank 0
            // off before its line).
            if job.rank == 0 {
                eprintln!("ipcmark: {e}");
            }
            world.barrier();
            return Ok(ExitCode::from(2));
        }
    };
    job.spin = w.spin();
    if job.rank != 0 {
        for _ in 0..a.runs {
            if let Err(e) = w.run(&job) {
                eprintln!("ipcmark: {e}");
                world.abort(1);
            }
        }
        world.barrier();
        return Ok(ExitCode::SUCCESS);
    }

    // The other ranks are already in the first run: a failure here must
    // end the job, not leave them waiting.
    let (_latency, env) = match setup(&a) {
        Ok(held) => held,
        Err(f) => {
            eprintln!("ipcmark: {}", f.message);
            world.abort(f.code.into());
        }
    };
    let workers = w.workers(job.size);
    let roles = w.roles(job.size);
    let processes: Vec<String> = workers.iter().map(|&r| roles[r].clone()).collect();
    let mut rep = ReportStart {
        info: &a.info,
        runs: a.runs,
        duration: w.duration(),
        timeout: a.timeout,
        processes: processes.clone(),
        parameters: w.parameters(),
        migrations: Vec::new(),
        environment: env.clone(),
    }
    .report();
    let mut sink = match Sink::open(a.json.clone(), a.db.as_deref(), a.no_save, &rep) {
        Ok(s) => s,
        Err(f) => {
            eprintln!("ipcmark: {}", f.message);
            world.abort(f.code.into());
        }
    };
    let mut results = vec![ConfigResult {
        name: "mpi".into(),
        cpus: vec![None; workers.len()],
        runs: Vec::new(),
    }];
    for run in 1..=a.runs {
        match w.run(&job) {
            Ok(Some(r)) => results[0].runs.push(Ok(r)),
            Ok(None) => unreachable!("rank 0 always gets the run's record"),
            Err(e) => {
                eprintln!("ipcmark: run {run}: {e}");
                world.abort(1);
            }
        }
        rep.configurations = report::configurations(a.info.headline, &results);
        if let Err(f) = sink.save(&rep) {
            eprintln!("ipcmark: {}", f.message);
            world.abort(1);
        }
    }
    world.barrier();
    rep.complete = true;
    rep.finished_at = Some(crate::output::recorder::now_rfc3339());
    sink.save(&rep)?;
    let none = vec![None; workers.len()];
    print_stdout(&format!(
        "{}\n{}",
        report::machine_line(&env),
        report::render(&a.info, &w.title(), &processes, &none, &results)
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Rank 0's set-up: the `--json` path checked, the CPU wake-up latency
/// request held on its host, the machine read.
fn setup(a: &MpiRun) -> Result<(environment::HeldLatency, environment::Environment), Failure> {
    super::check_json_path(a.json.as_deref())?;
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?;
    let latency = hold_cpu_latency(&latency_request(a.cpu_latency), &allowed)?;
    let env = environment::collect(latency.state.clone());
    Ok((latency, env))
}
