//! `ipcmark workload NAME`: validate everything, then run the workload R times
//! in each placement, saving the JSON after every run so an interrupted
//! command keeps what finished, and print the tables.

use super::flags::{self, heading};
use super::{Failure, parse, print_stdout};
use crate::engine::os::interrupt;
use crate::output::workload as report;
use crate::run::workload::{self, LocalWorkload};
use crate::workloads::{self, Fault, LockKind, Opt, Params, WorkloadInfo};
use clap::{Args, ValueEnum};
use std::process::ExitCode;
use std::time::Duration;

/// Runs per configuration unless `--runs` says otherwise (the study's five).
const DEFAULT_RUNS: u32 = 5;

/// Arguments of `ipcmark workload`, under the headings `run` uses where
/// they share flags ([`flags::heading`]).
#[derive(Debug, Args)]
#[command(mut_arg("timeout", |a| a.help(flags::Timeout::WORKLOAD_HELP)))]
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
    #[arg(long, value_name = "PLACEMENT", help_heading = heading::PLACEMENT)]
    place: Vec<String>,
    /// Moves process P while it runs: `P:every=K:cpus=A,B` (between CPUs A and
    /// B every K operations) or `P:at=K:cpu=C` (to C once, before operation K).
    /// P is a process number from 1 or a role (generator, calculator). Repeat
    /// for several processes; applies to every configuration.
    #[arg(long, value_name = "SPEC", help_heading = heading::PLACEMENT)]
    migrate: Vec<String>,
    /// Where the processes run: `local` (forked on this machine) or `mpi`
    /// (the ranks of the MPI job this command runs in: `mpirun -n N ipcmark
    /// workload NAME --engine mpi`; cargo feature `mpi`, docs/cluster.md).
    #[arg(long, value_enum, default_value = "local", help_heading = heading::PLACEMENT)]
    engine: EngineArg,
    /// With --engine mpi: hand a role (its state) to a spare rank every K
    /// operations (the calculator's every K vectors, each counter's every
    /// K passes, each philosopher's every K meals), timed as an
    /// application-level hand-off (MPI cannot migrate a process).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..),
          help_heading = heading::PLACEMENT)]
    handoff: Option<u64>,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    /// Runs per configuration (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000),
          help_heading = heading::BUDGET)]
    runs: Option<u32>,
    /// Length of each run, for philosophers (default 30s).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration,
          help_heading = heading::BUDGET)]
    duration: Option<Duration>,
    #[command(flatten, next_help_heading = heading::BUDGET)]
    timeout: flags::Timeout,
    /// Philosophers at the table (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=workloads::MAX_PHILOSOPHERS as i64),
          help_heading = heading::WORKLOAD)]
    philosophers: Option<u32>,
    /// Thinking time between meals, a sleep (default 30ms; 0 for none).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero,
          help_heading = heading::WORKLOAD)]
    think: Option<Duration>,
    /// Eating time, as that much CPU work calibrated at start (default 10ms).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero,
          help_heading = heading::WORKLOAD)]
    eat: Option<Duration>,
    /// Synchronisation primitive of the forks or the lock (default sysv-sem).
    #[arg(long, value_enum, value_name = "PRIMITIVE", help_heading = heading::WORKLOAD)]
    mechanism: Option<MechanismArg>,
    /// Elements per vector, for generator-calculator (default 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=workloads::MAX_VECTOR as u64),
          help_heading = heading::WORKLOAD)]
    vector: Option<u64>,
    /// Vectors sent, for generator-calculator (default 100000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
          help_heading = heading::WORKLOAD)]
    ops: Option<u64>,
    /// Size of the shared array, for shared-counter: 4B, 40KB, 4MB (KB and MB
    /// are 10^3 and 10^6 bytes, as in the study; KiB and MiB binary). Default 4B.
    #[arg(long, value_name = "SIZE", value_parser = parse::byte_size,
          help_heading = heading::WORKLOAD)]
    array: Option<usize>,
    /// Sum of the array at which the counters stop (default: the study's,
    /// 1000 passes below 40KB and 100 from 40KB up).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
          help_heading = heading::WORKLOAD)]
    threshold: Option<u64>,
    /// Sleep after each pass, outside the lock, for shared-counter (default 0).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero,
          help_heading = heading::WORKLOAD)]
    pause: Option<Duration>,
    #[command(flatten, next_help_heading = heading::OUTPUT)]
    json: flags::Json,
    #[command(flatten, next_help_heading = heading::OUTPUT)]
    save: flags::Save,
    #[command(flatten)]
    load: flags::Load,
    /// Inject a fault (for testing ipcmark itself).
    #[arg(long, value_enum, hide = true)]
    fault: Option<FaultArg>,
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

/// `--engine mpi`: the workload across the ranks of the MPI job.
#[cfg(feature = "mpi")]
fn mpi_engine(args: WorkloadArgs, info: WorkloadInfo, params: Params) -> Result<ExitCode, Failure> {
    for (given, flag) in [
        (!args.migrate.is_empty(), "--migrate"),
        (args.load.spec.is_some(), "--load"),
        (args.load.cpus.is_some(), "--load-cpus"),
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
    use crate::run::workload::mpi::{self, MpiEnd};
    let end = mpi::run(mpi::MpiRun {
        info,
        params,
        handoff: args.handoff,
        place: args.place,
        runs: args.runs.unwrap_or(DEFAULT_RUNS),
        timeout: args.timeout.limit,
        cpu_latency: args.cpu_latency.limit,
        json: args.json.path,
        db: args.save.db.path,
        no_save: args.save.no_save,
    })?;
    let led = match end {
        MpiEnd::Refused => return Ok(ExitCode::from(2)),
        MpiEnd::Served => return Ok(ExitCode::SUCCESS),
        MpiEnd::Led(led) => led,
    };
    // The page from the report just saved, as `show` prints it.
    print_stdout(&report::page(&led.report))?;
    if let Some(line) = crate::run::save::unsaved_line(led.unsaved) {
        eprintln!("{line}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
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
    let outcome = workload::run_local(LocalWorkload {
        workload: w,
        params,
        place: args.place,
        migrate: args.migrate,
        runs: args.runs.unwrap_or(DEFAULT_RUNS),
        load: args.load.into_request(),
        cpu_latency: args.cpu_latency.limit,
        timeout: args.timeout.limit,
        json: args.json.path,
        db: args.save.db.path,
        no_save: args.save.no_save,
    })?;
    // The page from the report just saved, as `show` prints it of the
    // stored one.
    print_stdout(&report::page(&outcome.report))?;
    if let Some(w) = crate::analysis::warnings::idle_states(&outcome.environment) {
        eprintln!("warning: {w}");
    }

    let unsaved = crate::run::save::unsaved_line(outcome.unsaved);
    if let Some(line) = &unsaved {
        eprintln!("{line}");
    }
    if let Some(sig) = outcome.stopped {
        crate::cli::say(format_args!(
            "ipcmark: interrupted by {}; finished runs were kept",
            interrupt::signal_name(sig)
        ));
        return Ok(ExitCode::from(128 + sig as u8));
    }
    let failed = outcome.failed;
    if failed > 0 {
        crate::cli::say(format_args!("ipcmark: {failed} run(s) failed (see above)"));
    }
    if failed > 0 || unsaved.is_some() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
