//! `ipcmark mpi …` (cargo feature `mpi`), run under `mpirun`/`srun`: rank
//! 0 runs an ordinary `ipcmark run` whose only item is the MPI figures
//! (`cluster::pingpong`, `cluster::bandwidth`), so the page, the JSON
//! report and the history are those of local figures; the ranks taking part
//! serve rank 0's figures; other ranks wait at a barrier.

use super::parse;
use super::plan::RunPlan;
use super::{Failure, RunArgs};
use crate::cluster::bandwidth::WindowFigures;
use crate::cluster::pingpong::{MpiPingPong, serve};
use crate::cluster::{World, ranks};
use crate::cluster::{deadline, window};
use crate::engine::os::peer::Fault;
use crate::engine::os::placement::SidePlacement;
use crate::engine::run::session::{External, Item};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `ipcmark mpi`.
#[derive(Debug, Args)]
pub struct MpiArgs {
    #[command(subcommand)]
    command: MpiCommand,
}

#[derive(Debug, Subcommand)]
enum MpiCommand {
    /// OSU's blocking ping-pong between ranks 0 and 1 (one-way latency =
    /// round trip / 2), every message checked; rank 0 prints the figures.
    Pingpong(PingpongArgs),
    /// OSU osu_bw's bandwidth from rank 0 to rank 1: windows of
    /// non-blocking sends, each acknowledged; every message checked.
    Bandwidth(WindowArgs),
    /// OSU osu_mbw_mr's aggregate message rate and bandwidth of N/2 pairs
    /// (rank i sends to rank i + N/2), timed between barriers; an even
    /// number of ranks.
    Rate(WindowArgs),
}

/// The flags of `ipcmark run` that apply to every `ipcmark mpi` command:
/// sizes, budget, output and history.
#[derive(Debug, Args)]
struct RunFlags {
    /// Message sizes, comma-separated, with optional K or M suffix; `sweep`
    /// for a dense sweep from 1 B to 64K.
    #[arg(long, value_name = "LIST", value_parser = parse::size_list_arg)]
    sizes: Option<parse::SizeList>,
    /// Write the results as JSON to this file (rank 0).
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    json: Option<PathBuf>,
    /// Short samples (64 B unless --sizes says otherwise).
    #[arg(long)]
    quick: bool,
    /// Print every figure's own row, with its p99, interval and notes.
    #[arg(long)]
    long: bool,
    /// Samples every figure takes at least, in each pass (default 11; --quick 7).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    samples: Option<u32>,
    /// Measure every ping-pong figure this many times (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    passes: Option<u32>,
    /// Sample until the 95% interval of the median is within ± this much
    /// of it (default 2%).
    #[arg(long, value_name = "PERCENT", value_parser = parse::precision)]
    precision: Option<f64>,
    /// The longest one figure's samples may take (default 1s; --quick 250ms).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero)]
    max_time: Option<Duration>,
    /// Target duration of one sample.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    sample_time: Option<Duration>,
    /// PM QoS CPU wake-up latency limit held on rank 0's host, µs, or `off`.
    #[arg(long, value_name = "US|off", value_parser = parse::cpu_latency)]
    cpu_latency: Option<parse::CpuLatency>,
    /// How long a figure may go without progress (a round trip, a window)
    /// before rank 0 ends the job: MPI's blocking calls have no deadline of
    /// their own.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, default_value = "30s")]
    timeout: Duration,
    /// The history database to save the run in.
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    db: Option<PathBuf>,
    /// Do not save the run in the history.
    #[arg(long, conflicts_with = "db")]
    no_save: bool,
}

/// Arguments of `ipcmark mpi pingpong`.
#[derive(Debug, Args)]
struct PingpongArgs {
    #[command(flatten)]
    run: RunFlags,
    /// Inject a fault in rank 1's echo (for testing ipcmark itself).
    #[arg(long, value_enum, hide = true)]
    fault: Option<EchoFault>,
}

/// Faults rank 1's echo can inject (`--fault`, hidden).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum EchoFault {
    /// Flip the last byte of every echoed message.
    Corrupt,
    /// Stop answering (but stay alive) after 20 messages.
    Hang,
}

impl From<EchoFault> for Fault {
    fn from(f: EchoFault) -> Fault {
        match f {
            EchoFault::Corrupt => Fault::Corrupt,
            EchoFault::Hang => Fault::Hang(20),
        }
    }
}

/// Arguments of `ipcmark mpi bandwidth` and `ipcmark mpi rate`.
#[derive(Debug, Args)]
struct WindowArgs {
    #[command(flatten)]
    run: RunFlags,
    /// Messages in flight per window: non-blocking sends posted before
    /// waiting for them all and the receiver's acknowledgement (OSU's 64).
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    window: u32,
}

/// `ipcmark run`'s arguments, for their defaults.
#[derive(Parser)]
struct RunDefaults {
    #[command(flatten)]
    run: RunArgs,
}

impl RunFlags {
    /// The `ipcmark run` these arguments stand for (its items are replaced
    /// by the MPI figures).
    fn run_args(self) -> Result<RunArgs, Failure> {
        let mut run = RunDefaults::try_parse_from(["ipcmark", "tcp"])
            .map_err(|e| Failure::usage(e.to_string()))?
            .run;
        run.sizes = self.sizes;
        run.json = self.json;
        run.quick = self.quick;
        run.long = self.long;
        run.samples = self.samples;
        run.passes = self.passes;
        run.precision = self.precision;
        run.max_time = self.max_time;
        run.sample_time = self.sample_time;
        run.cpu_latency = self.cpu_latency;
        // Recorded in the report's budget: the deadline the watch holds.
        run.timeout = self.timeout;
        run.db = self.db;
        run.no_save = self.no_save;
        Ok(run)
    }
}

/// Runs `ipcmark mpi …` on this rank.
pub fn mpi(args: MpiArgs) -> Result<ExitCode, Failure> {
    match args.command {
        MpiCommand::Pingpong(a) => pingpong(a),
        MpiCommand::Bandwidth(a) => windows(a, false),
        MpiCommand::Rate(a) => windows(a, true),
    }
}

fn pingpong(args: PingpongArgs) -> Result<ExitCode, Failure> {
    let timeout = args.run.timeout;
    let run = args.run.run_args()?;
    let world = World::init().map_err(Failure::run)?;
    if world.size() < 2 {
        return Err(Failure::usage(
            "mpi pingpong needs two ranks: mpirun -n 2 ipcmark mpi pingpong",
        ));
    }
    let places = ranks::gather();
    let outcome = match world.rank() {
        0 => {
            watch(timeout)?;
            let figures: &'static MpiPingPong = Box::leak(Box::new(MpiPingPong::new(1, &places)));
            let outcome = lead(run, figures, places);
            // Whatever happened, rank 1 waits for this.
            figures.done();
            outcome
        }
        1 => match serve(0, args.fault.map(Fault::from)) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("ipcmark: {e}");
                world.abort(1)
            }
        },
        _ => Ok(ExitCode::SUCCESS),
    };
    world.barrier();
    outcome
}

/// `mpi bandwidth` (`rate` false: ranks 0 → 1, timed by rank 0) or `mpi
/// rate` (N/2 pairs between barriers): rank 0 runs the figures as an
/// ordinary run's, every other rank taking part serves them, the rest wait
/// at the barrier.
fn windows(args: WindowArgs, rate: bool) -> Result<ExitCode, Failure> {
    let timeout = args.run.timeout;
    let run = args.run.run_args()?;
    let window = args.window as usize;
    let world = World::init().map_err(Failure::run)?;
    let (n, me) = (world.size(), world.rank());
    let refused = if rate && (n < 2 || n % 2 != 0) {
        Some(format!(
            "mpi rate needs an even number of ranks, 2 or more (it pairs rank i with i + N/2); \
             got {n}: mpirun -n {} ipcmark mpi rate",
            (n + 1).max(2) / 2 * 2
        ))
    } else if n < 2 {
        Some("mpi bandwidth needs two ranks: mpirun -n 2 ipcmark mpi bandwidth".to_string())
    } else {
        None
    };
    if let Some(why) = refused {
        // One line for the job, not one per rank: rank 0 says it, once every
        // rank is here (a rank leaving first would have mpirun kill rank 0
        // before it speaks), and the others leave quietly.
        world.barrier();
        return if me == 0 {
            Err(Failure::usage(why))
        } else {
            Ok(ExitCode::SUCCESS)
        };
    }
    let places = ranks::gather();
    let figures = if rate {
        WindowFigures::rate(n, window, &places)
    } else {
        WindowFigures::bandwidth(window, &places)
    };
    let outcome = if me == 0 {
        watch(timeout)?;
        let figures: &'static WindowFigures = Box::leak(Box::new(figures));
        let outcome = lead(run, figures, places);
        // Whatever happened, the other ranks wait for this.
        figures.done();
        outcome
    } else {
        match window::serve(figures.pairs(), figures.timing()) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("ipcmark: {e}");
                world.abort(1)
            }
        }
    };
    world.barrier();
    outcome
}

/// Starts rank 0's deadline on its figures' waits ([`deadline`]).
fn watch(timeout: Duration) -> Result<(), Failure> {
    deadline::watch(timeout)
        .map_err(|e| Failure::run(format!("cannot start the MPI deadline thread: {e}")))
}

/// Rank 0's part: the ordinary run whose only item is `figures`, with
/// every rank's place in its environment record.
fn lead(
    run: RunArgs,
    figures: &'static dyn External,
    places: Vec<ranks::RankPlace>,
) -> Result<ExitCode, Failure> {
    let job = ranks::job(places);
    super::run::run_with(
        run,
        Some(&|plan: &mut RunPlan| mpi_only(plan, figures, &job)),
    )
}

/// Makes the plan measure the MPI figures only, at its sizes, where
/// mpirun placed the ranks: ipcmark pins nothing (`--bind-to`, rankfiles).
fn mpi_only(plan: &mut RunPlan, figures: &'static dyn External, job: &ranks::MpiJob) {
    let sizes = plan.settings.sizes.clone();
    plan.session.items = vec![(Item::External(figures), sizes)];
    plan.session.settings.client = SidePlacement::default();
    plan.session.settings.server = SidePlacement::default();
    plan.settings.client_cpu = None;
    plan.settings.server_cpu = None;
    plan.settings.placement_note = Some("placed by the MPI launcher (--bind-to, --map-by)".into());
    plan.mpi = Some(job.clone());
}
