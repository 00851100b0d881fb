//! `ipcmark advise --size 4K [--rate R] [--p50 D] [--p99 D] [--cpu-per-msg D]
//! [--cpus A,B] [--host H] [--verify] [--measure]`: the flags, the study
//! (`studies::advise`: the host's runs ranked by the stated need, what the
//! history lacks measured first, the top two verified one way), its table
//! and JSON. Exit 0 when it ranked, 1 when the history has nothing to rank.

use super::run::{Printing, finish};
use super::{Failure, flags, parse, print_stdout};
use crate::studies::advise::{self, AdviseRequest};
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `ipcmark advise`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::ADVISE_HELP)))]
pub struct AdviseArgs {
    /// The message size (64, 4K, 1M).
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    size: usize,
    /// Messages per second to sustain (50k/s), judged against stream figures.
    #[arg(long, value_name = "RATE", value_parser = parse::rate)]
    rate: Option<f64>,
    /// Largest one-way median allowed (20us).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    p50: Option<Duration>,
    /// Largest one-way 99th percentile allowed (20us).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    p99: Option<Duration>,
    /// Largest CPU time per message, sender and receiver together (2us).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    cpu_per_msg: Option<Duration>,
    /// Only figures measured on these CPUs ("0,1"); --verify runs on them.
    #[arg(long, value_name = "A,B", value_parser = parse::cpu_list_arg)]
    cpus: Option<parse::CpuList>,
    /// The host whose runs are read (default: this one).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Measure the top two at the size one way, paced at --rate (saturated
    /// without it; a run saved in the history), and print predicted against
    /// measured p50 and p99, and whether the p99 is within ±25%.
    #[arg(long)]
    verify: bool,
    /// First measure what the history lacks on this host for the need:
    /// each IPC mechanism with no ping-pong figure at the size (and no
    /// stream figure there, with --rate or --cpu-per-msg), in one run of
    /// each mode at the default budget, saved in the history; then advise.
    #[arg(long)]
    measure: bool,
    #[command(flatten)]
    selftest_runs: flags::SelftestRuns,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

pub fn advise(args: AdviseArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    let json = args.json.path;
    let request = AdviseRequest {
        size: args.size,
        rate: args.rate,
        p50: args.p50,
        p99: args.p99,
        cpu_per_msg: args.cpu_per_msg,
        cpus: args.cpus,
        host: args.host,
        verify: args.verify,
        measure: args.measure,
        selftest_runs: args.selftest_runs.include,
        db: args.db.path,
    };
    // `--verify`'s run prints its page as `run` would; `--measure`'s runs
    // only their closing lines. Their exit codes are the advice's, not theirs.
    let report = advise::advise(
        request,
        &mut |outcome| finish(outcome, Printing::default(), None, None).map(drop),
        &mut |outcome| {
            let quiet = Printing {
                long: false,
                quiet: true,
            };
            finish(outcome, quiet, None, None).map(drop)
        },
    )?;
    if let Some(out) = &json {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::advise::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
