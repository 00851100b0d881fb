//! `ipcmark watch [NAME…] [--since DATE] [--host H]`: the flags, then the
//! study (`studies::watch`: the history's series, their change points and
//! what changed), then `output::watch`'s table, the JSON and the exports
//! asked for (each series' newest figure for dashboards, the history as
//! Otava's CSV).

use super::{Failure, flags, parse, print_stdout};
use crate::output::export::{self, otava};
use crate::run::save::failure;
use crate::studies::watch::{self as study, Request};
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
    selftest_runs: flags::SelftestRuns,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
    #[command(flatten)]
    dashboards: flags::Dashboards,
    #[command(flatten)]
    otava: flags::Otava,
}

/// The Otava CSV of `runs` at `out`, its configuration beside it, and a
/// line on stderr for what Otava's reader could not be given.
fn write_otava(out: &std::path::Path, runs: &[otava::Run]) -> Result<(), Failure> {
    let table = otava::render(runs);
    flags::write_file(out, &table.csv)?;
    flags::write_file(
        &otava::config_path(out),
        &otava::config(&out.display().to_string(), &table.metrics),
    )?;
    if table.runs_left_out > 0 || table.figures_left_out > 0 {
        crate::cli::say(format_args!(
            "ipcmark: --export-otava: {} run(s) without every figure the newest run measured and \
             {} figure(s) the newest run did not measure left out (Otava's CSV needs a value in \
             every cell; watch NAME… or --since narrows the runs)",
            table.runs_left_out, table.figures_left_out
        ));
    }
    Ok(())
}

/// Every series of the history at `db` (of `names`, or all), computed
/// afresh with watch's default settings and with its values, for the HTML
/// report's charts (`report --watch`).
pub(super) fn charted(
    db: Option<&std::path::Path>,
    names: &[String],
) -> Result<Vec<crate::output::report::history::Charted>, Failure> {
    let path = crate::history::path_or_default(db).map_err(failure)?;
    let req = Request {
        names: names.to_vec(),
        ..Request::default()
    };
    let charted = study::charted(&path, &req).map_err(failure)?;
    Ok(charted
        .into_iter()
        .map(|c| crate::output::report::history::Charted {
            series: c.series,
            values: c.values,
        })
        .collect())
}

pub fn watch(args: WatchArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    args.dashboards.check()?;
    args.otava.check()?;
    let path = crate::history::path_or_default(args.db.as_deref()).map_err(failure)?;
    let req = Request {
        names: args.names,
        since: args.since,
        host: args.host,
        selftest_runs: args.selftest_runs.include,
        options: crate::analysis::watch::Options {
            min_magnitude: args.min_magnitude,
            ..Default::default()
        },
    };
    // What the exports read first: a history of several hosts needs
    // --host for them, which is said before any series is computed.
    let newest = match args.dashboards.any() {
        true => Some(study::newest(&path, &req).map_err(failure)?),
        false => None,
    };
    let runs = match args.otava.path {
        Some(_) => Some(study::otava_runs(&path, &req).map_err(failure)?),
        None => None,
    };
    let report =
        study::watch(&path, &req, crate::output::json::build::current()).map_err(failure)?;
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    if let Some(figures) = newest {
        args.dashboards.write(&export::of_figures(&figures))?;
    }
    if let (Some(out), Some(runs)) = (&args.otava.path, runs) {
        write_otava(out, &runs)?;
    }
    print_stdout(&crate::output::watch::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
