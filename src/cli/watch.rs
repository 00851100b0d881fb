//! `ipcmark watch [NAME…] [--since DATE] [--host H]`: reads the history's
//! runs (`ipcmark run` reports; workloads are not series of figures),
//! oldest first, and hands them to `analysis::watch`, then prints
//! `output::watch`'s table and writes the JSON if asked.

use super::{Failure, flags, parse, print_stdout};
use crate::analysis::watch::{self, HistoryRun};
use crate::history::{self, Kind, Store};
use crate::record::RunRecord;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark watch`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::WATCH_HELP)))]
pub struct WatchArgs {
    /// Mechanisms or benchmarks to watch (default: every figure with a latency).
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Only runs started on or after this date (2026-11-01) or time
    /// (2026-11-01T12:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = super::history::parse_date)]
    since: Option<jiff::Timestamp>,
    /// Only runs of this host (default: every host, each its own series).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Smallest change that is a regression or an improvement (a percentage
    /// or a fraction); a significant change below it, or within the series'
    /// own run-to-run noise, is reported as unstable.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = parse::relative_change)]
    min_magnitude: f64,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

/// Every run of `ipcmark run` in `store` started at `since` or later,
/// oldest first (by id: the order they were saved in).
pub fn history_runs(
    store: &Store,
    since: Option<jiff::Timestamp>,
) -> Result<Vec<HistoryRun>, Failure> {
    let mut runs = Vec::new();
    for summary in store.runs().map_err(super::history::failure)? {
        let started = summary.started_at.parse::<jiff::Timestamp>().ok();
        if since.is_some_and(|s| started.is_none_or(|t| t < s)) {
            continue;
        }
        let report = store
            .load_report(summary.id)
            .map_err(super::history::failure)?;
        if Kind::of(&report).ok() != Some(Kind::Run) {
            continue;
        }
        match RunRecord::from_value(report) {
            Ok(record) => runs.push(HistoryRun {
                id: summary.id,
                record,
            }),
            Err(e) => eprintln!("ipcmark: warning: run {} left out: {e}", summary.id),
        }
    }
    Ok(runs)
}

pub fn watch(args: WatchArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    let path = history::path_or_default(args.db.as_deref()).map_err(super::history::failure)?;
    let store = Store::open_reader(&path).map_err(super::history::failure)?;
    let runs = history_runs(&store, args.since)?;
    let opts = watch::Options {
        min_magnitude: args.min_magnitude,
        names: args.names,
        host: args.host,
        ..watch::Options::default()
    };
    let report = watch::watch(&runs, &opts, crate::output::json::build::current());
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::watch::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
