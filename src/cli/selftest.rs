//! `ipcmark selftest [--pairs N] [--suite NAMES] [--sizes LIST] [--alpha A]
//! [--max-regression P]`: the flags, the study (`studies::selftest`: A/A
//! pairs of a short suite, compared, and judged as `check` judges), its
//! table (`output::selftest`) and JSON. Exit 0 when the
//! false-positive rate is at most α + 2 points, 1 otherwise, 128 + the
//! signal when stopped.

use super::run::{Printing, finish};
use super::{Failure, flags, print_stdout};
use crate::engine::os::interrupt;
use crate::studies::selftest::{self, SelftestRequest};
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark selftest`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::SELFTEST_HELP)))]
#[command(mut_arg("max_regression", |a| a.help(flags::MaxRegression::SELFTEST_HELP)))]
pub struct SelftestArgs {
    /// A/A pairs: two runs of the suite, back to back, compared. With the
    /// default suite one pair takes about 10–20 s on a 2-CPU guest (each run
    /// at --quick's budget), so 20 pairs about 4–7 minutes.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pairs: u32,
    /// The mechanisms or benchmarks of each run, comma-separated (default
    /// pipe,unix-stream,shm-futex,eventfd,posix-mq).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    suite: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    #[command(flatten)]
    alpha: flags::Alpha,
    #[command(flatten)]
    max_regression: flags::MaxRegression,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

pub fn selftest(args: SelftestArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    if args.suite.iter().any(|s| s.trim().is_empty()) {
        return Err(Failure::usage(
            "--suite: an empty name; give mechanisms or benchmarks, comma-separated (see ipcmark list)",
        ));
    }
    let request = SelftestRequest {
        pairs: args.pairs,
        suite: args.suite,
        sizes: args.sizes.list.map(|l| l.sizes),
        alpha,
        max_regression: args.max_regression.fraction,
        db: args.db.path,
    };
    let quiet = Printing {
        long: false,
        quiet: true,
    };
    let report = selftest::selftest(
        request,
        &mut |pair, pairs| eprintln!("selftest: pair {pair} of {pairs}"),
        &mut |outcome| finish(outcome, quiet, None, None).map(drop),
    )?;
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::selftest::render(&report))?;
    if let Some(sig) = interrupt::stop_requested() {
        return Ok(ExitCode::from(128 + sig as u8));
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
