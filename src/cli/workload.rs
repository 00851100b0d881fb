//! `ipcmark workload NAME`: validate everything, then run the workload R times
//! in each placement, saving the JSON after every run so an interrupted
//! command keeps what finished, and print the tables.

use super::plan::latency_request;
use super::{Failure, hold_cpu_latency, parse, print_stdout};
use crate::engine::os::environment;
use crate::engine::os::group::Migration;
use crate::engine::os::interrupt;
use crate::engine::os::load::Load;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::load::FigureLoad;
use crate::output::json;
use crate::output::progress::Progress;
use crate::output::workload::{self as report, ConfigResult, MigrationRecord, WorkloadReport};
use crate::workloads::{self, Fault, LockKind, Opt, Params, RunContext, RunError, WorkloadInfo};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Runs per configuration unless `--runs` says otherwise (the study's five).
const DEFAULT_RUNS: u32 = 5;

/// Arguments of `ipcmark workload`.
#[derive(Debug, Args)]
pub struct WorkloadArgs {
    /// The workload to run (listed below).
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Where each process runs: `packed` (all on the first CPU), `spread`
    /// (round robin over the CPUs), `free` (not pinned), or one CPU per process
    /// such as `0,1,1,0,1`. Named placements separated by commas
    /// (`packed,spread`), placements separated by ';', or --place repeated give
    /// several configurations, run in turn and compared. Default: packed.
    /// With --engine mpi, the ranks that play the roles in order, such as
    /// `0,1;0,2` (generator, calculator); default: rank order.
    #[arg(long, value_name = "PLACEMENT")]
    place: Vec<String>,
    /// Moves process P while it runs: `P:every=K:cpus=A,B` (between CPUs A and
    /// B every K operations) or `P:at=K:cpu=C` (to C once, before operation K).
    /// P is a process number from 1 or a role (generator, calculator). Repeat
    /// for several processes; applies to every configuration.
    #[arg(long, value_name = "SPEC")]
    migrate: Vec<String>,
    /// Runs per configuration (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: Option<u32>,
    /// Length of each run, for philosophers (default 30s).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    duration: Option<Duration>,
    /// How long the processes may go without any progress (and may take to
    /// start, and to finish after a timed run) before the run fails.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, default_value = "5s")]
    timeout: Duration,
    /// PM QoS CPU wake-up latency limit held while the workload runs, µs, or
    /// `off` (default 0 when /dev/cpu_dma_latency is writable: CPUs stay out
    /// of deep idle states, as in `ipcmark run`; `off` runs with them).
    #[arg(long, value_name = "US|off", value_parser = parse::cpu_latency)]
    cpu_latency: Option<parse::CpuLatency>,
    /// Write every per-process count and time as JSON to this file (rewritten after every run).
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    json: Option<PathBuf>,
    /// The history database to save the workload in (default:
    /// $XDG_DATA_HOME/ipcmark/history.sqlite, see `ipcmark history`).
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    db: Option<PathBuf>,
    /// Do not save the workload in the history.
    #[arg(long, conflicts_with = "db")]
    no_save: bool,
    /// Philosophers at the table (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=workloads::MAX_PHILOSOPHERS as i64))]
    philosophers: Option<u32>,
    /// Thinking time between meals, a sleep (default 30ms; 0 for none).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero)]
    think: Option<Duration>,
    /// Eating time, as that much CPU work calibrated at start (default 10ms).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero)]
    eat: Option<Duration>,
    /// Synchronisation primitive of the forks or the lock (default sysv-sem).
    #[arg(long, value_enum, value_name = "PRIMITIVE")]
    mechanism: Option<MechanismArg>,
    /// Elements per vector, for generator-calculator (default 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=workloads::MAX_VECTOR as u64))]
    vector: Option<u64>,
    /// Vectors sent, for generator-calculator (default 100000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    ops: Option<u64>,
    /// Size of the shared array, for shared-counter: 4B, 40KB, 4MB (KB and MB
    /// are 10^3 and 10^6 bytes, as in the study; KiB and MiB binary). Default 4B.
    #[arg(long, value_name = "SIZE", value_parser = parse::byte_size)]
    array: Option<usize>,
    /// Sum of the array at which the counters stop (default: the study's,
    /// 1000 passes below 40KB and 100 from 40KB up).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    threshold: Option<u64>,
    /// Sleep after each pass, outside the lock, for shared-counter (default 0).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero)]
    pause: Option<Duration>,
    /// Where the processes run: `local` (forked on this machine) or `mpi`
    /// (the ranks of the MPI job this command runs in: `mpirun -n N ipcmark
    /// workload NAME --engine mpi`; cargo feature `mpi`, docs/cluster.md).
    #[arg(long, value_enum, value_name = "ENGINE", default_value = "local")]
    engine: EngineArg,
    /// With --engine mpi: hand a role (its state) to a spare rank every K
    /// operations (the calculator's every K vectors, each counter's every
    /// K passes, each philosopher's every K meals), timed as an
    /// application-level hand-off (MPI cannot migrate a process).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    handoff: Option<u64>,
    /// Inject a fault (for testing ipcmark itself).
    #[arg(long, value_enum, hide = true)]
    fault: Option<FaultArg>,
    /// Hold a load during every run, as `ipcmark run --load` does
    /// (irq:FREQ[:work=DUR], cpu:N[:KIND], net:RATE, comma-separated).
    #[arg(long, value_name = "SPEC[,SPEC…]", value_parser = parse::load_arg)]
    load: Option<parse::LoadArg>,
    /// CPUs the load runs on (default: every CPU this process may use).
    #[arg(long, value_name = "LIST", value_parser = parse::cpu_set_arg)]
    load_cpus: Option<parse::CpuList>,
}

/// `--mechanism` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MechanismArg {
    /// A System V semaphore set (semop), as in the study.
    SysvSem,
    /// Named POSIX semaphores.
    PosixSem,
    /// Futex words in shared memory.
    Futex,
}

/// `--engine` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    /// Processes forked here, placed and migrated by ipcmark.
    Local,
    /// The ranks of the MPI job, placed by its launcher.
    Mpi,
}

/// `--fault` values (hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FaultArg {
    /// Philosophers take one fork at a time.
    SplitTake,
    /// Philosophers eat without taking their forks.
    SkipForks,
    /// A result is corrupted.
    Corrupt,
}

/// The list of workloads shown under `ipcmark workload --help`.
pub fn after_help() -> String {
    let mut s = String::from("Workloads:\n");
    for w in workloads::REGISTRY {
        let info = w.info();
        let opts: Vec<&str> = info.options.iter().map(|o| o.flag()).collect();
        s.push_str(&format!(
            "  {}\n      {}\n      options: {}\n",
            info.id,
            info.summary,
            opts.join(" ")
        ));
    }
    s.push_str(
        "\nExamples:\n  ipcmark workload philosophers --duration 10s --place packed,spread\n  ipcmark workload generator-calculator --vector 100000 --ops 10 --migrate generator:at=5:cpu=1\n  ipcmark workload shared-counter --array 4MB --place packed,spread\n  mpirun -n 3 ipcmark workload generator-calculator --engine mpi --place '0,1;0,2'\n  mpirun -n 3 ipcmark workload generator-calculator --engine mpi --handoff 25000\n\nSee docs/workloads.md for what each figure means and how it relates to the study, docs/cluster.md for --engine mpi.",
    );
    s
}

/// The workload-specific settings, refusing options the workload does not take.
fn params(args: &WorkloadArgs, info: &WorkloadInfo) -> Result<Params, Failure> {
    let given: [(Opt, bool); 10] = [
        (Opt::Duration, args.duration.is_some()),
        (Opt::Philosophers, args.philosophers.is_some()),
        (Opt::Think, args.think.is_some()),
        (Opt::Eat, args.eat.is_some()),
        (Opt::Mechanism, args.mechanism.is_some()),
        (Opt::Vector, args.vector.is_some()),
        (Opt::Ops, args.ops.is_some()),
        (Opt::Array, args.array.is_some()),
        (Opt::Threshold, args.threshold.is_some()),
        (Opt::Pause, args.pause.is_some()),
    ];
    for (opt, present) in given {
        if present && !info.options.contains(&opt) {
            let takes: Vec<&str> = info.options.iter().map(|o| o.flag()).collect();
            return Err(Failure::usage(format!(
                "{} does not apply to {} (its options: {})",
                opt.flag(),
                info.id,
                takes.join(", ")
            )));
        }
    }
    let fault = args.fault.map(|f| match f {
        FaultArg::SplitTake => Fault::SplitTake,
        FaultArg::SkipForks => Fault::SkipForks,
        FaultArg::Corrupt => Fault::Corrupt,
    });
    if let Some(f) = fault
        && !info.faults.contains(&f)
    {
        return Err(Failure::usage(format!(
            "--fault {f:?} does not apply to {}",
            info.id
        )));
    }
    Ok(Params {
        duration: args.duration,
        philosophers: args.philosophers.map(|n| n as usize),
        think: args.think,
        eat: args.eat,
        mechanism: args.mechanism.map(|m| match m {
            MechanismArg::SysvSem => LockKind::SysvSem,
            MechanismArg::PosixSem => LockKind::PosixSem,
            MechanismArg::Futex => LockKind::Futex,
        }),
        vector: args.vector.map(|v| v as usize),
        ops: args.ops,
        array_bytes: args.array,
        threshold: args.threshold,
        pause: args.pause,
        fault,
    })
}

/// One placement of every process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placement {
    name: String,
    cpus: Vec<Option<usize>>,
}

fn show_cpus(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn check_cpu(cpu: usize, allowed: &[usize], what: &str) -> Result<usize, String> {
    if allowed.contains(&cpu) {
        Ok(cpu)
    } else {
        Err(format!(
            "{what}: CPU {cpu} does not exist or is not available to ipcmark; available CPUs: {}",
            show_cpus(allowed)
        ))
    }
}

/// The placements of every `--place` value, trimmed: ';' separates
/// placements within one value, and `--place` may be repeated. Shared by
/// the local placements (CPUs) and `--engine mpi`'s (ranks).
pub(super) fn place_parts(values: &[String]) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    for value in values {
        for part in value.split(';').map(str::trim) {
            if part.is_empty() {
                return Err(format!(
                    "--place '{value}': empty placement; give one before and after every ';'"
                ));
            }
            out.push(part);
        }
    }
    Ok(out)
}

/// The numbers of a placement whose comma-separated items are all numbers
/// (`item` names what they number in the error: "CPU", "rank"); `None` if
/// any item is not a number.
pub(super) fn number_list(part: &str, item: &str) -> Option<Result<Vec<usize>, String>> {
    let items: Vec<&str> = part.split(',').map(str::trim).collect();
    let numeric = |i: &&str| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit());
    if !items.iter().all(numeric) {
        return None;
    }
    Some(
        items
            .iter()
            .map(|i| {
                i.parse::<usize>()
                    .map_err(|_| format!("--place '{part}': invalid {item} '{i}'"))
            })
            .collect(),
    )
}

/// Parses every `--place` value. A value whose items are all numbers is one
/// explicit placement (one CPU per process); otherwise its comma-separated
/// items are named placements, each a configuration. ';' separates placements
/// within one value.
fn placements(
    values: &[String],
    processes: usize,
    allowed: &[usize],
) -> Result<Vec<Placement>, String> {
    let default = ["packed".to_string()];
    let values = if values.is_empty() {
        &default[..]
    } else {
        values
    };
    let mut out = Vec::new();
    for part in place_parts(values)? {
        let what = format!("--place '{part}'");
        if let Some(cpus) = number_list(part, "CPU") {
            let cpus = cpus?;
            if cpus.len() != processes {
                return Err(format!(
                    "{what}: gives {} CPU(s) for {processes} processes; an explicit placement names one CPU per process",
                    cpus.len()
                ));
            }
            let cpus = cpus
                .into_iter()
                .map(|cpu| check_cpu(cpu, allowed, &what).map(Some))
                .collect::<Result<_, _>>()?;
            out.push(Placement {
                name: part.to_string(),
                cpus,
            });
            continue;
        }
        let items: Vec<&str> = part.split(',').map(str::trim).collect();
        if items
            .iter()
            .any(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(format!(
                "{what}: mixes CPU numbers and named placements; give an explicit placement (one CPU per process) or names separated by commas"
            ));
        }
        for item in items {
            let cpus = match item {
                "packed" => vec![Some(allowed[0]); processes],
                "spread" => (0..processes)
                    .map(|i| Some(allowed[i % allowed.len()]))
                    .collect(),
                "free" => vec![None; processes],
                _ => {
                    return Err(format!(
                        "{what}: unknown placement '{item}'; use packed, spread, free or one CPU per process such as 0,0,1"
                    ));
                }
            };
            out.push(Placement {
                name: item.to_string(),
                cpus,
            });
        }
    }
    Ok(out)
}

/// Parses every `--migrate` value into one plan per process.
fn migrations(
    values: &[String],
    roles: &[String],
    allowed: &[usize],
) -> Result<Vec<Option<Migration>>, String> {
    let mut plans = vec![None; roles.len()];
    for value in values {
        let (p, plan) = migration(value, roles, allowed)?;
        if plans[p].is_some() {
            return Err(format!(
                "--migrate '{value}': {} already has a migration",
                roles[p]
            ));
        }
        plans[p] = Some(plan);
    }
    Ok(plans)
}

fn migration(s: &str, roles: &[String], allowed: &[usize]) -> Result<(usize, Migration), String> {
    let what = format!("--migrate '{s}'");
    let shape = || format!("{what}: expected P:every=K:cpus=A,B or P:at=K:cpu=C");
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    let [who, when, whereto] = parts[..] else {
        return Err(shape());
    };
    let process = match who.parse::<usize>() {
        Ok(n) if (1..=roles.len()).contains(&n) => n - 1,
        Ok(n) => {
            return Err(format!(
                "{what}: no process {n}; processes are numbered 1 to {}",
                roles.len()
            ));
        }
        Err(_) => roles
            .iter()
            .position(|r| r.eq_ignore_ascii_case(who))
            .ok_or_else(|| {
                format!(
                    "{what}: no process '{who}'; give a number from 1 to {} or a role ({})",
                    roles.len(),
                    roles.join(", ")
                )
            })?,
    };
    let (when_key, k) = when.split_once('=').ok_or_else(shape)?;
    let k: u64 = k.parse().ok().filter(|&k| k >= 1).ok_or_else(|| {
        format!("{what}: '{when}' needs a whole number of operations, at least 1")
    })?;
    let (where_key, cpus) = whereto.split_once('=').ok_or_else(shape)?;
    let cpus: Vec<usize> = cpus
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .map_err(|_| format!("{what}: invalid CPU '{}'", c.trim()))
                .and_then(|c| check_cpu(c, allowed, &what))
        })
        .collect::<Result<_, _>>()?;
    let plan = match (when_key, where_key, &cpus[..]) {
        ("every", "cpus", &[a, b]) if a != b => Migration::Every {
            ops: k,
            cpus: [a, b],
        },
        ("every", "cpus", [_, _]) => {
            return Err(format!("{what}: the two CPUs must differ"));
        }
        ("at", "cpu", &[c]) => Migration::At { op: k, cpu: c },
        _ => return Err(shape()),
    };
    Ok((process, plan))
}

/// What a workload's report starts as, before any run: the command, the
/// machine and the settings (local and MPI runs alike).
pub(super) struct ReportStart<'a> {
    pub info: &'a WorkloadInfo,
    pub runs: u32,
    pub duration: Option<Duration>,
    pub timeout: Duration,
    pub processes: Vec<String>,
    pub parameters: serde_json::Value,
    pub migrations: Vec<MigrationRecord>,
    pub environment: environment::Environment,
}

impl ReportStart<'_> {
    /// The report, with no configuration yet.
    pub(super) fn report(self) -> WorkloadReport {
        WorkloadReport {
            schema: report::SCHEMA,
            ipcmark_version: env!("CARGO_PKG_VERSION"),
            build: json::build::BuildRecord::current(),
            started_at: crate::output::recorder::now_rfc3339(),
            finished_at: None,
            complete: false,
            command_line: std::env::args().collect(),
            environment: self.environment,
            workload: self.info.id,
            figure: report::figure_info(self.info),
            settings: report::WorkloadSettings {
                runs: self.runs,
                duration_ms: self.duration.map(|d| d.as_secs_f64() * 1e3),
                timeout_ms: self.timeout.as_secs_f64() * 1e3,
                processes: self.processes,
                parameters: self.parameters,
                migrations: self.migrations,
            },
            load: None,
            configurations: Vec::new(),
        }
    }
}

/// Where a workload's report goes after every run: `--json` and the history.
/// A place that cannot be written is warned about once and given up, and
/// the workload goes on (as `ipcmark run`'s recorder does); the command
/// then fails at the end ([`Sink::unsaved`]).
pub(super) struct Sink {
    json: Option<PathBuf>,
    history: Option<crate::history::RunWriter>,
    unsaved: usize,
}

fn as_value(rep: &WorkloadReport) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(rep).map_err(|e| Failure::run(format!("cannot represent the report: {e}")))
}

impl Sink {
    /// Opens the history (unless `--no-save`) with the report as it starts.
    pub(super) fn open(
        json: Option<PathBuf>,
        db: Option<&std::path::Path>,
        no_save: bool,
        rep: &WorkloadReport,
    ) -> Result<Sink, Failure> {
        let history = super::history::writer(db, no_save, &as_value(rep)?)?;
        Ok(Sink {
            json,
            history,
            unsaved: 0,
        })
    }

    /// Writes the report as it stands to every place still kept.
    pub(super) fn save(&mut self, rep: &WorkloadReport) {
        if let Some(path) = &self.json
            && let Err(e) = json::write_atomic(path, rep)
        {
            let why = format!("cannot write {}: {e}", path.display());
            self.json = None;
            self.give_up(&why);
        }
        if let Some(w) = &mut self.history {
            let saved = as_value(rep).and_then(|v| w.save(&v).map_err(super::history::failure));
            if let Err(f) = saved {
                self.history = None;
                self.give_up(&f.message);
            }
        }
    }

    fn give_up(&mut self, why: &str) {
        eprintln!("warning: {why}; the report is no longer saved there, the workload goes on");
        self.unsaved += 1;
    }

    /// How many places the report could not be saved to (each was warned
    /// about); with any, the command fails.
    pub(super) fn unsaved(&self) -> usize {
        self.unsaved
    }
}

/// `--engine mpi`: the workload across the ranks of the MPI job.
#[cfg(feature = "mpi")]
fn mpi_engine(args: WorkloadArgs, info: WorkloadInfo, params: Params) -> Result<ExitCode, Failure> {
    for (given, flag) in [
        (!args.migrate.is_empty(), "--migrate"),
        (args.load.is_some(), "--load"),
        (args.load_cpus.is_some(), "--load-cpus"),
    ] {
        if given {
            return Err(Failure::usage(format!(
                "{flag} does not apply to --engine mpi: the MPI launcher places the ranks (--map-by, rankfiles, hostfiles){}",
                if flag == "--migrate" {
                    "; --handoff hands a role to another rank"
                } else {
                    ""
                }
            )));
        }
    }
    if params.fault.is_some_and(|f| f != Fault::Corrupt) {
        return Err(Failure::usage(
            "that --fault does not apply to --engine mpi",
        ));
    }
    super::workload_mpi::run(super::workload_mpi::MpiRun {
        info,
        params,
        handoff: args.handoff,
        place: args.place,
        runs: args.runs.unwrap_or(DEFAULT_RUNS),
        timeout: args.timeout,
        cpu_latency: args.cpu_latency,
        json: args.json,
        db: args.db,
        no_save: args.no_save,
    })
}

/// `--engine mpi` in a build without MPI: how to build it.
#[cfg(not(feature = "mpi"))]
fn mpi_engine(_: WorkloadArgs, _: WorkloadInfo, _: Params) -> Result<ExitCode, Failure> {
    Err(Failure::usage(
        "built without MPI: cargo build --release --features mpi",
    ))
}

/// Runs `ipcmark workload`: every configuration `--runs` times, then the tables.
pub fn workload(args: WorkloadArgs) -> Result<ExitCode, Failure> {
    // Everything is validated before anything runs or is written.
    let Some(name) = &args.name else {
        return Err(Failure::usage(format!(
            "name a workload: {} (see ipcmark workload --help)",
            workloads::ids().join(", ")
        )));
    };
    let w = workloads::find(name).ok_or_else(|| {
        Failure::usage(format!(
            "unknown workload '{name}'; choose from: {}",
            workloads::ids().join(", ")
        ))
    })?;
    let info = w.info();
    let params = params(&args, &info)?;
    if args.engine == EngineArg::Mpi {
        return mpi_engine(args, info, params);
    }
    if args.handoff.is_some() {
        return Err(Failure::usage(
            "--handoff needs --engine mpi (locally, --migrate moves a process between CPUs)",
        ));
    }
    let prepared = w.prepare(&params).map_err(Failure::usage)?;
    let roles = prepared.roles();
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?;
    if allowed.is_empty() {
        return Err(Failure::run("no CPU is available to ipcmark".to_string()));
    }
    let configs = placements(&args.place, roles.len(), &allowed).map_err(Failure::usage)?;
    let plans = migrations(&args.migrate, &roles, &allowed).map_err(Failure::usage)?;
    super::check_json_path(args.json.as_deref())?;
    let runs = args.runs.unwrap_or(DEFAULT_RUNS);
    let load_plan = super::plan::load_plan(
        args.load.as_ref(),
        args.load_cpus.as_ref(),
        [None, None],
        &allowed,
    )?;

    // Held for the whole command, as in `ipcmark run`.
    let latency = hold_cpu_latency(&latency_request(args.cpu_latency), &allowed)?;
    interrupt::install()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;
    let env = environment::collect(latency.state.clone(), None);
    let mut rep = ReportStart {
        info: &info,
        runs,
        duration: prepared.duration(),
        timeout: args.timeout,
        processes: roles.clone(),
        parameters: prepared.parameters(),
        migrations: plans
            .iter()
            .enumerate()
            .filter_map(|(p, plan)| {
                plan.as_ref().map(|plan| MigrationRecord {
                    process: p + 1,
                    role: roles[p].clone(),
                    plan: plan.into(),
                })
            })
            .collect(),
        environment: env.clone(),
    }
    .report();
    // Kept in the history as it goes, as `ipcmark run` is.
    let mut sink = Sink::open(args.json.clone(), args.db.as_deref(), args.no_save, &rep)?;

    let mut results: Vec<ConfigResult> = configs
        .iter()
        .map(|c| ConfigResult {
            name: c.name.clone(),
            cpus: c.cpus.clone(),
            runs: Vec::new(),
            roles: Vec::new(),
        })
        .collect();
    let progress = Progress::new(configs.len() * runs as usize);
    let names = ObjectNamer::new();
    // Forked before any run; killed and reaped when dropped, on every path.
    let mut load = match &load_plan {
        Some(p) => Some(Load::start(p).map_err(Failure::run)?),
        None => None,
    };
    let load_start = load.as_ref().map(Load::snapshot);
    'configs: for (ci, c) in configs.iter().enumerate() {
        for run in 1..=runs {
            if interrupt::stop_requested().is_some() {
                break 'configs;
            }
            progress.start(&format!("{} {} run {run}/{runs}", info.id, c.name));
            let ctx = RunContext {
                cpus: &c.cpus,
                migrations: &plans,
                names: &names,
                timeout: args.timeout,
            };
            if let Some(l) = load.as_mut() {
                l.check().map_err(Failure::run)?;
            }
            let outcome = prepared.run(&ctx);
            if let Some(l) = load.as_mut() {
                l.check().map_err(Failure::run)?;
            }
            match outcome {
                Ok(r) => results[ci].runs.push(Ok(r)),
                Err(RunError::Failed(e)) => results[ci].runs.push(Err(e)),
                // The interrupted run is dropped; what finished is kept.
                Err(RunError::Interrupted(_)) => break 'configs,
            }
            progress.done_one();
            rep.configurations = report::configurations(info.headline, &results);
            sink.save(&rep);
        }
    }
    progress.finish();
    let load_line = match (&load, &load_start) {
        (Some(l), Some(start)) => {
            let held = FigureLoad::between(l.plan(), start, &l.snapshot());
            rep.load = Some((&held).into());
            Some(crate::output::table::load::summary_line(&held))
        }
        _ => None,
    };
    drop(load);

    let stopped = interrupt::stop_requested();
    rep.complete = stopped.is_none();
    rep.finished_at = Some(crate::output::recorder::now_rfc3339());
    rep.configurations = report::configurations(info.headline, &results);
    sink.save(&rep);

    print_stdout(&format!(
        "{}\n{}",
        report::machine_line(&env),
        report::render(&info, &prepared.title(), &roles, &plans, &results)
    ))?;
    if let Some(line) = load_line {
        print_stdout(&line)?;
    }
    if let Some(w) = crate::output::warnings::idle_states(&env) {
        eprintln!("warning: {w}");
    }

    let unsaved = super::history::unsaved_line(sink.unsaved());
    if let Some(line) = &unsaved {
        eprintln!("{line}");
    }
    if let Some(sig) = stopped {
        eprintln!(
            "ipcmark: interrupted by {}; finished runs were kept",
            interrupt::signal_name(sig)
        );
        return Ok(ExitCode::from(128 + sig as u8));
    }
    let failed = results
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| r.is_err())
        .count();
    if failed > 0 {
        eprintln!("ipcmark: {failed} run(s) failed (see above)");
    }
    if failed > 0 || unsaved.is_some() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("philosopher {i}")).collect()
    }

    #[test]
    fn explicit_placement_is_one_configuration_and_names_are_several() {
        let all = [0, 1];
        let p = placements(&["0,0,1,1,1".into()], 5, &all).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].cpus, vec![Some(0), Some(0), Some(1), Some(1), Some(1)]);
        let p = placements(&["packed,spread".into()], 5, &all).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].cpus, vec![Some(0); 5]);
        assert_eq!(p[1].cpus, vec![Some(0), Some(1), Some(0), Some(1), Some(0)]);
        let p = placements(&["0,1;1,0".into(), "free".into()], 2, &all).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].cpus, vec![None, None]);
        assert_eq!(placements(&[], 2, &all).unwrap()[0].name, "packed");
    }

    #[test]
    fn bad_placements_say_why() {
        let all = [0, 1];
        let err = |v: &str| placements(&[v.into()], 5, &all).unwrap_err();
        assert!(err("0,0,1").contains("3 CPU(s) for 5 processes"));
        assert!(err("0,0,0,0,7").contains("CPU 7 does not exist"));
        assert!(err("packed,0").contains("mixes"));
        assert!(err("bogus").contains("unknown placement 'bogus'"));
        assert!(err("packed,,spread").contains("unknown placement ''"));
        assert!(err(";").contains("empty placement"));
    }

    #[test]
    fn migrations_parse_both_forms_and_reject_malformed() {
        let all = [0, 1];
        let r = roles(5);
        let plans = migrations(
            &["2:every=10:cpus=0,1".into(), "4:at=1:cpu=1".into()],
            &r,
            &all,
        )
        .unwrap();
        assert_eq!(
            plans[1],
            Some(Migration::Every {
                ops: 10,
                cpus: [0, 1]
            })
        );
        assert_eq!(plans[3], Some(Migration::At { op: 1, cpu: 1 }));
        assert_eq!(plans.iter().flatten().count(), 2);
        let gc = vec!["generator".to_string(), "calculator".to_string()];
        let plans = migrations(&["Calculator:at=500:cpu=0".into()], &gc, &all).unwrap();
        assert_eq!(plans[1], Some(Migration::At { op: 500, cpu: 0 }));
        for bad in [
            "x",
            "2:every=10",
            "9:at=1:cpu=0",
            "0:at=1:cpu=0",
            "2:at=0:cpu=0",
            "2:every=0:cpus=0,1",
            "2:every=5:cpus=0,0",
            "2:every=5:cpus=0",
            "2:every=5:cpu=1",
            "2:at=5:cpus=0,1",
            "2:at=5:cpu=8",
            "2:sometimes=5:cpu=1",
            "2:at=5:cpu=1:extra",
        ] {
            assert!(migrations(&[bad.into()], &r, &all).is_err(), "{bad}");
        }
        assert!(
            migrations(&["2:at=1:cpu=0".into(), "2:at=3:cpu=1".into()], &r, &all)
                .unwrap_err()
                .contains("already")
        );
    }
}
