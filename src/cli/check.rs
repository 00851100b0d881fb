//! `ipcmark check BASELINE [RUN] --max-regression 5%`: the flags, then the
//! study (`studies::check`: the two runs read as `compare` reads them, a
//! run of the history, a name given with `history --tag`, or a JSON
//! report, compared and judged), a spec that gave no run refused in
//! compare's words; writes the JSON and the exports asked for (the run's
//! figures for dashboards, the verdicts as JUnit), prints the table (and,
//! under GitHub Actions, the failures as annotations), and exits
//! 1 when a figure regressed, one the baseline measured was lost (failed,
//! or skipped or absent unless allowed) or the whole run moved beyond the
//! machine's range; 0 otherwise.

use super::{Failure, flags, parse, print_stdout};
use crate::output::export::{self, annotations};
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark check`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::CHECK_HELP)))]
#[command(mut_arg("export_junit", |a| a.help(flags::Junit::CHECK_HELP)))]
pub struct CheckArgs {
    /// The baseline: a run of the history (an id, `last`, `last~N`, `last@HOST`), a name
    /// given to one with `ipcmark history --tag NAME RUN`, or a JSON report.
    #[arg(value_name = "BASELINE", value_hint = clap::ValueHint::FilePath)]
    baseline: String,
    /// The run checked against it, named the same ways.
    #[arg(value_name = "RUN", default_value = "last", value_hint = clap::ValueHint::FilePath)]
    run: String,
    #[command(flatten)]
    max_regression: flags::MaxRegression,
    /// The largest shift of every figure together left out of the verdicts
    /// as the machine's run-to-run level (a percentage or a fraction);
    /// beyond it the whole run moved, which fails the check. Default: the
    /// largest shift of the newest selftest's A/A pairs on the run's host,
    /// else 10%.
    #[arg(long, value_name = "PERCENT", value_parser = parse::relative_change)]
    max_common_shift: Option<f64>,
    /// A figure the baseline measured may be skipped in the run (the
    /// reason is printed); without it, a skip fails the check.
    #[arg(long)]
    allow_skipped: bool,
    /// A figure the baseline measured may be absent from the run (a
    /// deliberately smaller run); without it, one missing fails the check.
    #[arg(long)]
    allow_missing: bool,
    /// Judge the figures even where the host placed the measured CPUs
    /// differently in the two runs (their placement probes differ); without
    /// it, such a pair fails the check on the placement, with no figure
    /// called a regression of the code.
    #[arg(long)]
    allow_placement_change: bool,
    #[command(flatten)]
    alpha: flags::Alpha,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
    #[command(flatten)]
    dashboards: flags::Dashboards,
    #[command(flatten)]
    junit: flags::Junit,
}

pub fn check(args: CheckArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    args.dashboards.check()?;
    args.junit.check()?;
    let checked = crate::studies::check::check(&crate::studies::check::Request {
        db: args.db.as_deref(),
        baseline: &args.baseline,
        run: &args.run,
        max_regression: args.max_regression.fraction,
        max_common_shift: args.max_common_shift,
        allow_skipped: args.allow_skipped,
        allow_missing: args.allow_missing,
        allow_placement_change: args.allow_placement_change,
        alpha,
        build: crate::output::json::build::current(),
    })
    .map_err(|r| super::compare::words(&r.spec).refuse(r))?;
    let report = &checked.report;
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    args.dashboards.write(&export::of_run(&checked.run))?;
    if let Some(out) = &args.junit.path {
        flags::write_file(out, &export::junit::check(report))?;
    }
    print_stdout(&crate::output::check::render(report))?;
    if annotations::wanted(std::env::var(annotations::GITHUB_ACTIONS).ok().as_deref()) {
        print_stdout(&annotations::check(report))?;
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
