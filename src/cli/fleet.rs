//! `ipcmark fleet [REPORT.json…] [--db DB] [--since DATE] [--json FILE]
//! [--html FILE]`: the runs of a fleet's hosts (report files, or the runs of
//! the history through `studies::fleet`), the newest of each host, hosts
//! grouped by class of machine and tested (`analysis::fleet`); then
//! `output::fleet`'s page, the JSON (`ipcmark.fleet/1`) and the HTML heat
//! map (`output::report::fleet`) if asked. Exit 0 when the fleet was read
//! (whatever it holds), 1 when the history cannot be read, 2 on bad usage.
//!
//! `ipcmark fleet run [RUN FLAGS…]`, under `mpirun`/`srun` (cargo feature
//! `mpi`): every rank measures `ipcmark run` in turn and rank 0 keeps every
//! rank's run in one history (`studies::fleet::turns`).

use super::{Failure, flags, print_stdout};
use crate::analysis::fleet::{self, Input};
use crate::run::save::failure;
use crate::studies::fleet as study;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `ipcmark fleet`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::FLEET_HELP)))]
#[command(args_conflicts_with_subcommands = true)]
pub struct FleetArgs {
    #[command(subcommand)]
    command: Option<FleetCommand>,
    /// Run reports of the fleet's hosts (`run --json` on each host); the
    /// newest of each host is taken. Without any, the runs of the history.
    #[arg(value_name = "REPORT.json", value_hint = clap::ValueHint::FilePath)]
    reports: Vec<PathBuf>,
    /// Only runs started on or after this date (2026-11-01) or time
    /// (2026-11-01T12:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = super::history::parse_date)]
    since: Option<jiff::Timestamp>,
    #[command(flatten)]
    selftest_runs: flags::SelftestRuns,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
    /// Also write the fleet as one self-contained HTML page (a heat map of
    /// hosts × figures per class, coloured by each host's ratio to the
    /// class's median) to this file.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    html: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum FleetCommand {
    /// Under mpirun or srun (a build with --features mpi): every rank runs
    /// `ipcmark run` with these flags in turn, one after the other, never
    /// two at once; rank 0 keeps every rank's run, with its host, in one
    /// history (--db or the default) for `ipcmark fleet` to read.
    Run(Box<FleetRunArgs>),
}

/// Arguments of `ipcmark fleet run`: those of `ipcmark run`.
#[derive(Debug, Args)]
struct FleetRunArgs {
    #[command(flatten)]
    run: super::RunArgs,
    /// Make a rank fail on its turn (for testing ipcmark itself).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    #[arg(long, value_enum, hide = true)]
    rank_fault: Option<RankFault>,
}

/// Faults a rank can inject on its turn (`--rank-fault`, hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RankFault {
    /// Rank 1 kills itself (SIGKILL) as its turn starts.
    DieOnTurn,
}

/// `ipcmark fleet run` in a build without MPI: one line, exit 2.
#[cfg(not(feature = "mpi"))]
fn run(_: FleetRunArgs) -> Result<ExitCode, Failure> {
    Err(Failure::usage(
        "fleet run needs a build with MPI (cargo build --release --features mpi), \
         run under mpirun or srun: mpirun -n N ipcmark fleet run",
    ))
}

/// `ipcmark fleet run`: the study's turns (`studies::fleet::turns`), rank
/// 0's own run printed as `run` prints one, then its page of every turn;
/// exit 1 when a rank's turn went wrong.
#[cfg(feature = "mpi")]
fn run(args: FleetRunArgs) -> Result<ExitCode, Failure> {
    use crate::studies::fleet::turns::{FleetRunRequest, fleet_run};
    if args.run.export.any() {
        return Err(Failure::usage(
            "fleet run takes no --export-bmf or --export-gab: the ranks' runs go to the history; \
             export them from there (ipcmark watch --host NAME --export-bmf FILE)",
        ));
    }
    let (run, printing) = args.run.into_request();
    let csv = run.sinks.csv.clone();
    let mut code = ExitCode::SUCCESS;
    let mut own = |o| {
        code = super::run::finish(o, printing, csv.as_deref(), None)?;
        Ok(())
    };
    let request = FleetRunRequest {
        run,
        die_on_turn: args.rank_fault == Some(RankFault::DieOnTurn),
    };
    let Some(fleet) = fleet_run(request, &mut own)? else {
        return Ok(ExitCode::SUCCESS);
    };
    print_stdout(&crate::output::fleet::render_turns(
        &fleet.turns,
        fleet.hosts,
        fleet.db.as_deref(),
    ))?;
    if fleet.failed() && code == ExitCode::SUCCESS {
        code = ExitCode::from(1);
    }
    Ok(code)
}

/// How fleet words a report file that is not a run of `ipcmark run`.
fn words() -> super::history::RunsOnly {
    super::history::RunsOnly {
        reads: "fleet",
        not_a_run: "is not an ipcmark run report",
        not_json: Some("is not an ipcmark run report"),
    }
}

/// The runs of the files named, each read as its record.
fn read_files(files: &[PathBuf]) -> Result<Vec<Input>, Failure> {
    files
        .iter()
        .map(|f| {
            let spec = f.to_string_lossy();
            if !Path::new(f).is_file() {
                return Err(Failure::usage(format!(
                    "cannot read {}: no such file",
                    crate::output::sanitise::text(&spec)
                )));
            }
            let (source, record) = super::history::open_run(None, &spec, &words())?;
            Ok(Input {
                source,
                run_id: None,
                record,
            })
        })
        .collect()
}

pub fn fleet(mut args: FleetArgs) -> Result<ExitCode, Failure> {
    if let Some(FleetCommand::Run(a)) = args.command.take() {
        return run(*a);
    }
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    if let Some(out) = &args.html {
        super::check_output_path("--html", out)?;
    }
    let build = crate::output::json::build::current();
    let (report, label) = if args.reports.is_empty() {
        let path = crate::history::path_or_default(args.db.as_deref()).map_err(failure)?;
        let req = study::Request {
            since: args.since,
            selftest_runs: args.selftest_runs.include,
        };
        let report = study::fleet(&path, &req, build).map_err(failure)?;
        (report, path.display().to_string())
    } else {
        if args.db.path.is_some() || args.selftest_runs.include {
            return Err(Failure::usage(
                "name report files or read the history (--db, --selftest-runs), not both",
            ));
        }
        let inputs = read_files(&args.reports)?;
        let label = match args.reports.len() {
            1 => args.reports[0].display().to_string(),
            n => format!("{n} report files"),
        };
        (fleet::fleet(inputs, args.since, build), label)
    };
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    if let Some(out) = &args.html {
        let page = crate::output::report::fleet::render_fleet(&label, &report);
        crate::output::json::write_text_atomic(out, &page.html)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::fleet::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
