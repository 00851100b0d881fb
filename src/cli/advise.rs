//! `ipcmark advise --size 4K [--rate R] [--p50 D] [--p99 D] [--cpu-per-msg D]
//! [--cpus A,B] [--host H] [--verify]`: reads the host's runs from the
//! history, ranks its ping-pong mechanisms by the stated need
//! (`analysis::advise`), prints `output::advise`'s table and writes the JSON
//! if asked. With `--verify` the top two are measured at the size by a
//! ping-pong run (`run::run_with`, saved like any run) and each prediction
//! is set against what it measured. Exit 0 when it ranked, 1 when the
//! history has nothing to rank.

use super::{Failure, RunArgs, flags, parse, print_stdout};
use crate::analysis::advise;
use crate::history::{self, Store};
use crate::record::RunRecord;
use crate::record::advise::{AdviseReport, Need, Verified};
use clap::Args;
use std::cell::RefCell;
use std::process::ExitCode;
use std::time::Duration;

/// The run that gives a history something to rank.
const FIRST_RUN: &str =
    "ipcmark run pipe unix-stream shm-futex eventfd posix-mq --sizes 64,1K,4K,16K";

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
    /// Measure the top two at the size (a ping-pong run, saved in the
    /// history) and print predicted against measured.
    #[arg(long)]
    verify: bool,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

/// Every run report of `host` in the history at `path`, with its id,
/// oldest first (reports of other kinds, such as workloads, are left out).
fn host_runs(path: &std::path::Path, host: &str) -> Result<Vec<(i64, RunRecord)>, Failure> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let store = Store::open_reader(path).map_err(super::history::failure)?;
    let mut out = Vec::new();
    for run in store.runs().map_err(super::history::failure)? {
        if run.host != host {
            continue;
        }
        let report = store.load_report(run.id).map_err(super::history::failure)?;
        if let Ok(r) = RunRecord::from_value(report) {
            out.push((run.id, r));
        }
    }
    Ok(out)
}

/// Measures `names` at `size` in one ping-pong run saved in the history;
/// its report and id.
fn measure(
    args: &AdviseArgs,
    names: Vec<String>,
    path: &std::path::Path,
) -> Result<(RunRecord, Option<i64>), Failure> {
    let mut run = RunArgs {
        names,
        cpus: args.cpus.clone(),
        ..RunArgs::defaults()?
    };
    run.sizes.list = Some(parse::SizeList {
        sizes: vec![args.size],
        sweep: false,
    });
    run.output.save.db.path = Some(path.to_path_buf());
    let kept: RefCell<Option<RunRecord>> = RefCell::new(None);
    let after = |r: &mut RunRecord| {
        *kept.borrow_mut() = Some(r.clone());
        Ok(())
    };
    super::run::run_with(run, None, Some(&after))?;
    let record = kept
        .into_inner()
        .ok_or_else(|| Failure::run("--verify: the run ended without a report"))?;
    let id = Store::open_reader(path)
        .ok()
        .and_then(|s| s.runs().ok())
        .and_then(|r| r.last().map(|r| r.id));
    Ok((record, id))
}

/// Predicted against measured for the top two.
fn verify(
    args: &AdviseArgs,
    report: &AdviseReport,
    path: &std::path::Path,
) -> Result<Vec<Verified>, Failure> {
    let top: Vec<_> = report.ranking.iter().take(2).collect();
    let names = top.iter().map(|a| a.benchmark.clone()).collect();
    let (record, id) = measure(args, names, path)?;
    Ok(top
        .iter()
        .map(|a| {
            let f = record.results.iter().find(|f| {
                f.benchmark == a.benchmark
                    && f.mode == crate::record::Mode::PingPong
                    && f.size_bytes == args.size
                    && f.status == crate::record::Status::Ok
            });
            let l = f.and_then(|f| f.latency_ns.as_ref());
            Verified {
                benchmark: a.benchmark.clone(),
                run_id: id,
                predicted_p50_ns: a.p50.value,
                measured_p50_ns: f.and_then(crate::analysis::watch::centre),
                predicted_p99_ns: a.p99.as_ref().map(|s| s.value),
                measured_p99_ns: l.and_then(|l| l.p99),
            }
        })
        .collect())
}

pub fn advise(args: AdviseArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    let path = history::path_or_default(args.db.as_deref()).map_err(super::history::failure)?;
    let host = args
        .host
        .clone()
        .unwrap_or_else(crate::engine::os::environment::hostname);
    let ns = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e9);
    let need = Need {
        size_bytes: args.size,
        rate_per_s: args.rate,
        p50_ns: ns(args.p50),
        p99_ns: ns(args.p99),
        cpu_per_msg_ns: ns(args.cpu_per_msg),
        cpus: args.cpus.as_ref().map(|c| c.0.clone()),
    };
    let runs = host_runs(&path, &host)?;
    let mut report = advise::advise(&host, need, &runs, crate::output::json::build::current());
    if report.ranking.is_empty() {
        let why = match report.unrankable.first() {
            Some(u) => format!("{}: {}", u.benchmark, u.reason),
            None => format!("the history holds no ping-pong figure of host {host}"),
        };
        return Err(Failure::run(format!(
            "nothing to rank ({why}); run `{FIRST_RUN}` first"
        )));
    }
    if args.verify {
        report.verify = Some(verify(&args, &report, &path)?);
    }
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::advise::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
