//! `ipcmark workload NAME --engine mpi` (cargo feature `mpi`), run on every
//! rank under `mpirun`: every rank runs every run of the workload
//! (`mpi::workloads`) in every configuration `--place` names (which
//! ranks play the roles); rank 0 holds the CPU wake-up latency request on
//! its host, writes `--json` and the history after every run and prints the
//! tables, as `ipcmark workload` does locally. A failure on any rank is one
//! line on its stderr and ends the job (`MPI_Abort`), since its peers would
//! wait for it forever; the runs already saved are kept.

use super::placement::{number_list, place_parts};
use super::saving::{ReportStart, Saver, Sink};
use crate::engine::run::repeated::{self, RunEnd};
use crate::machine::environment;
use crate::mpi::World;
use crate::mpi::ranks::{self, RankPlace};
use crate::mpi::workloads::{self, Job, MpiWorkload, show_ranks};
use crate::output::workload::ConfigResult;
use crate::record::workload::WorkloadRecord;
use crate::run::plan::latency_request;
use crate::run::{Failure, hold_cpu_latency, values as parse};
use crate::workloads::{CastRole, Params, RunRecord as WorkloadRun, WorkloadInfo};
use std::path::PathBuf;
use std::time::Duration;

/// What `ipcmark workload --engine mpi` was given, checked.
pub struct MpiRun {
    pub info: WorkloadInfo,
    pub params: Params,
    pub handoff: Option<u64>,
    /// `--place` as given: placements of ranks, checked once the job's
    /// size is known.
    pub place: Vec<String>,
    pub runs: u32,
    pub timeout: Duration,
    pub cpu_latency: Option<parse::CpuLatency>,
    pub json: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub no_save: bool,
}

/// How this rank's part of the job ended.
pub enum MpiEnd {
    /// The workload refused its settings; rank 0 said why (exit 2).
    Refused,
    /// A rank other than 0 served its runs.
    Served,
    /// Rank 0 led the runs: what its page shows.
    Led(Box<MpiLed>),
}

/// What rank 0's runs gave, for its page.
pub struct MpiLed {
    /// The report as saved.
    pub report: WorkloadRecord,
    /// Places the report could not be saved to (each was warned about).
    pub unsaved: usize,
}

/// Runs the workload on this rank: every rank runs every run; rank 0
/// holds the CPU wake-up latency, saves the report after every run and
/// returns what its page shows.
/// Rank 0's runs of the configurations: each run of the workload's ranks,
/// the casts switched between configurations.
struct MpiRuns<'a> {
    w: &'a dyn MpiWorkload,
    job: &'a mut Job,
    casts: &'a [Vec<usize>],
    names: Vec<String>,
    /// The configuration the job is cast for, and its runs so far.
    cast: Option<usize>,
    run: u32,
}

impl repeated::Repeated for MpiRuns<'_> {
    type Record = WorkloadRun;

    fn run(&mut self, config: usize) -> Result<WorkloadRun, RunEnd> {
        if self.cast != Some(config) {
            self.job.cast(&self.casts[config]);
            self.cast = Some(config);
            self.run = 0;
        }
        self.run += 1;
        let failed =
            |e: String| RunEnd::Fatal(format!("{} run {}: {e}", self.names[config], self.run));
        match self.w.run(self.job, &self.casts[config]) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(failed("rank 0 got no record of the run".into())),
            Err(e) => Err(failed(e)),
        }
    }
}

pub fn run(a: MpiRun) -> Result<MpiEnd, Failure> {
    let world = World::init().map_err(Failure::run)?;
    let mut job = Job::new(a.timeout);
    let prepared = workloads::prepare(a.info.id, &a.params, a.handoff, job.size)
        .and_then(|w| casts(w.as_ref(), &a.place, job.size).map(|c| (w, c)));
    let (w, casts) = match prepared {
        Ok(wc) => wc,
        Err(e) => {
            // Every rank finds the same error; rank 0 alone says it, and
            // the others leave only after it has (mpirun ends the job as
            // soon as one rank exits with an error, which could cut rank 0
            // off before its line).
            if job.rank == 0 {
                crate::output::terminal::say(format_args!("ipcmark: {e}"));
            }
            world.barrier();
            return Ok(MpiEnd::Refused);
        }
    };
    job.spin = w.spin();
    // Where every rank is, for the configurations' names (collective).
    let raw = ranks::gather();
    if job.rank != 0 {
        for cast in &casts {
            job.cast(cast);
            for _ in 0..a.runs {
                if let Err(e) = w.run(&job, cast) {
                    crate::output::terminal::say(format_args!("ipcmark: {e}"));
                    world.abort(1);
                }
            }
        }
        world.barrier();
        return Ok(MpiEnd::Served);
    }

    // The other ranks are already in the first run: a failure here must
    // end the job, not leave them waiting.
    let (_latency, env) = match setup(&a, &ranks::job(raw.clone())) {
        Ok(held) => held,
        Err(f) => {
            crate::output::terminal::say(format_args!("ipcmark: {}", f.message));
            world.abort(f.code.into());
        }
    };
    let workers = w.workers(&casts[0]);
    let roles = w.roles(&casts[0], job.size);
    let processes: Vec<String> = workers.iter().map(|&r| roles[r].clone()).collect();
    let rep = ReportStart {
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
    let sink = match Sink::open(a.json.clone(), a.db.as_deref(), a.no_save, &rep) {
        Ok(s) => s,
        Err(f) => {
            crate::output::terminal::say(format_args!("ipcmark: {}", f.message));
            world.abort(f.code.into());
        }
    };
    let mut saver = Saver {
        rep,
        sink,
        headline: a.info.headline,
        results: casts
            .iter()
            .map(|cast| configuration(w.as_ref(), cast, &raw, a.place.is_empty()))
            .collect(),
    };
    let plan = repeated::Plan {
        configurations: saver.results.iter().map(|c| c.name.clone()).collect(),
        runs: a.runs,
        // Across ranks the processes are MPI's: no load is stated there.
        load: None,
    };
    let mut source = MpiRuns {
        w: w.as_ref(),
        job: &mut job,
        casts: &casts,
        names: plan.configurations.clone(),
        cast: None,
        run: 0,
    };
    // A run that fails on rank 0 leaves the other ranks waiting in it:
    // the whole job ends, as mpirun would on any rank's error.
    if let Err(e) = repeated::run(&plan, &mut source, &mut [&mut saver]) {
        crate::output::terminal::say(format_args!("ipcmark: {e}"));
        world.abort(1);
    }
    world.barrier();
    Ok(MpiEnd::Led(Box::new(MpiLed {
        report: saver.rep,
        unsaved: saver.sink.unsaved(),
    })))
}

/// Rank 0's set-up: the `--json` path checked, the CPU wake-up latency
/// request held on its host, the machine and the `job` read.
fn setup(
    a: &MpiRun,
    job: &ranks::MpiJob,
) -> Result<
    (
        crate::machine::cpu_latency::HeldLatency,
        environment::Environment,
    ),
    Failure,
> {
    crate::run::failure::check_json_path(a.json.as_deref())?;
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?;
    let latency = hold_cpu_latency(&latency_request(a.cpu_latency), &allowed)?;
    let env = environment::collect(latency.state.clone(), Some(job));
    Ok((latency, env))
}

/// The casts of `--place` (default: rank order) for a job of `size` ranks;
/// one line if a placement is not a list of ranks or does not suit.
fn casts(w: &dyn MpiWorkload, place: &[String], size: usize) -> Result<Vec<Vec<usize>>, String> {
    let lists = place_parts(place)?
        .into_iter()
        .map(|part| {
            number_list(part, "rank").unwrap_or_else(|| {
                Err(format!(
                    "--place '{part}': with --engine mpi a placement names the ranks that play the roles, such as 0,1 (the launcher places the ranks on nodes)"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    workloads::casts(w, &lists, size)
}

/// A configuration before its runs: named after its ranks and their nodes
/// (`ranks 0,2 (nodes 0,1)`), or `mpi` without `--place` (rank order, as
/// before placements existed), with the rank playing each role.
fn configuration(
    w: &dyn MpiWorkload,
    cast: &[usize],
    raw: &[RankPlace],
    default: bool,
) -> ConfigResult {
    let nodes = ranks::nodes(raw);
    let node = |r: usize| nodes.iter().position(|n| *n == raw[r].host).unwrap_or(0);
    let roles: Vec<CastRole> = w
        .seats(cast.len())
        .into_iter()
        .zip(cast)
        .map(|(role, &rank)| CastRole {
            role,
            rank,
            node: node(rank),
            host: raw[rank].host.clone(),
        })
        .collect();
    let name = if default {
        "mpi".to_string()
    } else {
        format!(
            "ranks {} (nodes {})",
            show_ranks(cast),
            show_ranks(&roles.iter().map(|r| r.node).collect::<Vec<_>>())
        )
    };
    ConfigResult {
        name,
        cpus: vec![None; w.workers(cast).len()],
        runs: Vec::new(),
        roles,
    }
}
