//! `ipcmark check BASELINE [RUN] --max-regression 5%`: the flags, then the
//! study (`studies::check`: the two runs read as `compare` reads them, a
//! run of the history, a name given with `history --tag`, or a JSON
//! report, compared and judged), a spec that gave no run refused in
//! compare's words; writes the JSON if asked, prints the table, and exits
//! 1 when a figure regressed, 0 otherwise.

use super::{Failure, flags, parse, print_stdout};
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark check`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::CHECK_HELP)))]
pub struct CheckArgs {
    /// The baseline: a run of the history (an id, `last`, `last~N`), a name
    /// given to one with `ipcmark history --tag NAME RUN`, or a JSON report.
    #[arg(value_name = "BASELINE", value_hint = clap::ValueHint::FilePath)]
    baseline: String,
    /// The run checked against it, named the same ways.
    #[arg(value_name = "RUN", default_value = "last", value_hint = clap::ValueHint::FilePath)]
    run: String,
    /// The largest slowdown of a figure allowed, beyond the machine's common
    /// shift (a percentage or a fraction): a figure significantly slower by
    /// more fails the check.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = parse::relative_change)]
    max_regression: f64,
    #[command(flatten)]
    alpha: flags::Alpha,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

pub fn check(args: CheckArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    let report = crate::studies::check::check(&crate::studies::check::Request {
        db: args.db.as_deref(),
        baseline: &args.baseline,
        run: &args.run,
        max_regression: args.max_regression,
        alpha,
        build: crate::output::json::build::current(),
    })
    .map_err(|r| super::compare::words(&r.spec).refuse(r))?;
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::check::render(&report))?;
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
