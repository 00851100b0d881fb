//! `ipcmark mpi …` (cargo feature `mpi`), run under `mpirun`/`srun`: rank
//! 0 runs an ordinary `ipcmark run` whose only item is the MPI figures
//! (`mpi::pingpong`, `mpi::bandwidth`), so the page, the JSON
//! report and the history are those of local figures; the ranks taking part
//! serve rank 0's figures; other ranks wait at a barrier.

use super::Failure;
use super::flags;
use super::run::{Printing, finish, measure};
use crate::engine::os::peer::Fault;
use crate::mpi::bandwidth::WindowFigures;
use crate::mpi::pingpong::{MpiPingPong, serve};
use crate::mpi::{World, ranks};
use crate::mpi::{deadline, window};
use crate::run::RunRequest;
use crate::run::request::{External, ExternalFigures};
use clap::{Args, Subcommand};
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

/// The flags of `ipcmark run` that apply to every `ipcmark mpi` command,
/// its groups as `run` declares them: sizes, budget, the CPU wake-up
/// latency, output and history. A figure without progress ends the job
/// after 30 s rather than `run`'s 5 s: a window of large messages over a
/// slow link takes that long.
#[derive(Debug, Args)]
#[command(mut_arg("timeout", |a| a.default_value("30s").help(flags::Timeout::MPI_HELP)))]
struct RunFlags {
    #[command(flatten)]
    sizes: flags::Sizes,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten, next_help_heading = flags::heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    output: flags::Output,
}

/// Arguments of `ipcmark mpi pingpong`.
#[derive(Debug, Args)]
struct PingpongArgs {
    /// Inject a fault in rank 1's echo (for testing ipcmark itself).
    #[arg(long, value_enum, hide = true)]
    fault: Option<EchoFault>,
    #[command(flatten)]
    run: RunFlags,
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
    /// Messages in flight per window: non-blocking sends posted before
    /// waiting for them all and the receiver's acknowledgement (OSU's 64).
    // Once `--window`, which on `run` is the count of one-way messages
    // summarised together: the old spelling still parses, unlisted.
    #[arg(long = "in-flight", alias = "window", value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    in_flight: u32,
    #[command(flatten)]
    run: RunFlags,
}

impl RunFlags {
    /// The run these flags stand for: `ipcmark run tcp` with them, its
    /// items replaced by the MPI figures once they are made ([`lead`]); and
    /// how its page is printed.
    fn request(self) -> (RunRequest, Printing) {
        // tcp takes every size, so the plan refuses none of the sizes
        // before its items are replaced.
        let mut request = RunRequest {
            names: vec!["tcp".to_string()],
            sizes: self.sizes.list,
            budget: self.budget.into_request(),
            cpu_latency: self.cpu_latency.limit,
            ..RunRequest::default()
        };
        let printing = Printing {
            long: self.output.long,
            quiet: false,
        };
        self.output.into_sinks(&mut request.sinks);
        (request, printing)
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
    let timeout = args.run.budget.timeout.limit;
    let run = args.run.request();
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
            let figures = std::sync::Arc::new(MpiPingPong::new(1, &places));
            let outcome = lead(run, figures.clone(), places);
            // Whatever happened, rank 1 waits for this.
            figures.done();
            outcome
        }
        1 => match serve(0, args.fault.map(Fault::from)) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => {
                crate::cli::say(format_args!("ipcmark: {e}"));
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
    let timeout = args.run.budget.timeout.limit;
    let run = args.run.request();
    let window = args.in_flight as usize;
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
        let figures = std::sync::Arc::new(figures);
        let outcome = lead(run, figures.clone(), places);
        // Whatever happened, the other ranks wait for this.
        figures.done();
        outcome
    } else {
        match window::serve(figures.pairs(), figures.timing()) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => {
                crate::cli::say(format_args!("ipcmark: {e}"));
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

/// Rank 0's part: the ordinary run whose only item is `figures`, placed
/// where mpirun placed the ranks (ipcmark pins nothing: `--bind-to`,
/// rankfiles), with every rank's place in its environment record.
fn lead(
    (mut run, printing): (RunRequest, Printing),
    figures: std::sync::Arc<dyn External>,
    places: Vec<ranks::RankPlace>,
) -> Result<ExitCode, Failure> {
    run.external = Some(ExternalFigures {
        figures,
        placed_by: "placed by the MPI launcher (--bind-to, --map-by)".into(),
        mpi: Some(ranks::job(places)),
    });
    finish(measure(run)?, printing, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    /// `ipcmark mpi ARGS` as clap parses it (no MPI is started).
    fn parse(args: &[&str]) -> Result<MpiArgs, clap::Error> {
        let cmd = MpiArgs::augment_args(clap::Command::new("mpi"));
        let matches =
            cmd.try_get_matches_from(std::iter::once("mpi").chain(args.iter().copied()))?;
        MpiArgs::from_arg_matches(&matches)
    }

    fn in_flight(args: &[&str]) -> u32 {
        match parse(args).expect("parses").command {
            MpiCommand::Bandwidth(w) | MpiCommand::Rate(w) => w.in_flight,
            MpiCommand::Pingpong(_) => unreachable!("a window command"),
        }
    }

    #[test]
    fn in_flight_is_also_read_under_its_old_name_window() {
        assert_eq!(in_flight(&["bandwidth"]), 64);
        assert_eq!(in_flight(&["bandwidth", "--in-flight", "8"]), 8);
        assert_eq!(in_flight(&["rate", "--window", "16"]), 16);
        assert!(parse(&["bandwidth", "--in-flight", "0"]).is_err());
        assert!(parse(&["pingpong", "--in-flight", "8"]).is_err());
    }

    #[test]
    fn the_old_name_window_is_not_listed() {
        let cmd = MpiArgs::augment_args(clap::Command::new("mpi"));
        let bandwidth = cmd.find_subcommand("bandwidth").expect("bandwidth");
        let arg = bandwidth
            .get_arguments()
            .find(|a| a.get_long() == Some("in-flight"))
            .expect("--in-flight");
        assert!(arg.get_visible_aliases().unwrap_or_default().is_empty());
        assert_eq!(arg.get_all_aliases(), Some(vec!["window"]));
    }

    /// The run an `mpi` command stands for is `ipcmark run tcp` with the
    /// same shared flags, whatever run's other defaults are; only the
    /// deadline's default is the MPI one.
    #[test]
    fn an_mpi_command_runs_what_run_tcp_with_its_flags_would() {
        let shared = [
            "--sizes",
            "8,1K",
            "--quick",
            "--long",
            "--samples",
            "9",
            "--passes",
            "3",
            "--precision",
            "5%",
            "--max-time",
            "2s",
            "--sample-time",
            "20ms",
            "--cpu-latency",
            "off",
            "--json",
            "out.json",
            "--db",
            "h.sqlite",
        ];
        let mpi_run = |flags: &[&str]| {
            let args: Vec<&str> = ["pingpong"].iter().chain(flags).copied().collect();
            match parse(&args).expect("parses").command {
                MpiCommand::Pingpong(p) => p.run.request().0,
                _ => unreachable!(),
            }
        };
        let run = |flags: &[&str]| {
            let argv: Vec<&str> = ["tcp"].iter().chain(flags).copied().collect();
            crate::cli::test_support::run_request(&argv).expect("parses")
        };
        let with_timeout: Vec<&str> = shared.iter().copied().chain(["--timeout", "30s"]).collect();
        assert_eq!(
            format!("{:?}", mpi_run(&shared)),
            format!("{:?}", run(&with_timeout))
        );
        let given: Vec<&str> = shared
            .iter()
            .copied()
            .chain(["--timeout", "7s", "--no-save"])
            .collect();
        let given: Vec<&str> = given
            .into_iter()
            .filter(|a| !["--db", "h.sqlite"].contains(a))
            .collect();
        assert_eq!(
            format!("{:?}", mpi_run(&given)),
            format!("{:?}", run(&given))
        );
    }
}
