//! `ipcmark selftest [--pairs N] [--suite NAMES] [--sizes LIST] [--alpha A]`:
//! the test of `compare`'s test on this machine. N A/A pairs of a short
//! suite (two `ipcmark run --quick` of the same figures, back to back, each
//! saved in the history and marked as the selftest's), each pair compared
//! by `analysis::compare`, summed up by `analysis::selftest`, printed by
//! `output::selftest` and kept in the history's `selftests` table. Exit 0
//! when the false-positive rate is at most α + 2 points, 1 otherwise; a
//! stop (Ctrl-C) ends it after the pairs done, which it reports.

use super::{Failure, RunArgs, flags, parse, print_stdout};
use crate::analysis::selftest::{self, Context, PairInput};
use crate::engine::os::interrupt;
use crate::history::{self, Store};
use crate::output::recorder::now_rfc3339;
use crate::record::RunRecord;
use clap::Args;
use std::cell::RefCell;
use std::path::Path;
use std::process::ExitCode;

/// The suite's mechanisms by default: the blocking hand-offs a user
/// compares most, thirteen figures over three sizes.
const DEFAULT_SUITE: &[&str] = &["pipe", "unix-stream", "shm-futex", "eventfd", "posix-mq"];

/// The suite's sizes by default.
const DEFAULT_SIZES: &[usize] = &[64, 1024, 4096];

/// Arguments of `ipcmark selftest`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::SELFTEST_HELP)))]
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
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

/// One run of the suite, saved in the history at `path`: its report and
/// its id there (`None` when stopped: the partial run is kept in the
/// history, but it is no side of a pair).
fn one_run(args: &SelftestArgs, path: &Path) -> Result<Option<(RunRecord, Option<i64>)>, Failure> {
    let mut run = RunArgs {
        names: suite(args),
        quiet: true,
        ..RunArgs::defaults()?
    };
    run.sizes.list = Some(args.sizes.list.clone().unwrap_or(parse::SizeList {
        sizes: DEFAULT_SIZES.to_vec(),
        sweep: false,
    }));
    run.budget.quick = true;
    run.output.save.db.path = Some(path.to_path_buf());
    let kept: RefCell<Option<RunRecord>> = RefCell::new(None);
    let after = |r: &mut RunRecord| {
        *kept.borrow_mut() = Some(r.clone());
        Ok(())
    };
    super::run::run_with(run, None, Some(&after))?;
    if interrupt::stop_requested().is_some() {
        return Ok(None);
    }
    let record = kept
        .into_inner()
        .ok_or_else(|| Failure::run("selftest: a run ended without a report"))?;
    // The run's row is the last one that started when it did.
    let id = Store::open_reader(path)
        .and_then(|s| s.runs())
        .ok()
        .and_then(|runs| {
            runs.iter()
                .rev()
                .find(|r| r.started_at == record.started_at)
                .map(|r| r.id)
        });
    Ok(Some((record, id)))
}

fn suite(args: &SelftestArgs) -> Vec<String> {
    if args.suite.is_empty() {
        DEFAULT_SUITE.iter().map(|s| s.to_string()).collect()
    } else {
        args.suite.clone()
    }
}

/// The suite as `ipcmark run`'s arguments, for the record.
fn suite_words(args: &SelftestArgs) -> Vec<String> {
    let sizes = args
        .sizes
        .list
        .as_ref()
        .map_or(DEFAULT_SIZES.to_vec(), |l| l.sizes.clone());
    let mut words = suite(args);
    words.push("--sizes".into());
    words.push(
        sizes
            .iter()
            .map(|s| crate::output::table::format_size(*s))
            .collect::<Vec<_>>()
            .join(","),
    );
    words.push("--quick".into());
    words
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
    let path = history::path_or_default(args.db.as_deref()).map_err(super::history::failure)?;
    let host = crate::machine::environment::hostname();
    let started_at = now_rfc3339();
    // The selftest's row is made with its first run's mark: a suite that
    // `run` refuses leaves nothing behind.
    let id: RefCell<Option<i64>> = RefCell::new(None);
    let mark = |run: Option<i64>, pair: usize, side: char| -> Result<(), Failure> {
        let Some(run) = run else { return Ok(()) };
        let mut store = Store::open(&path).map_err(super::history::failure)?;
        let selftest = match *id.borrow() {
            Some(t) => t,
            None => store
                .start_selftest(&started_at, &host)
                .map_err(super::history::failure)?,
        };
        *id.borrow_mut() = Some(selftest);
        store
            .mark_selftest_run(selftest, run, pair, side)
            .map_err(super::history::failure)
    };
    let build = crate::output::json::build::current();
    let mut pairs = Vec::new();
    let mut stopped = None;
    for pair in 1..=args.pairs as usize {
        eprintln!("selftest: pair {pair} of {}", args.pairs);
        let Some((a, run_a)) = one_run(&args, &path)? else {
            break;
        };
        mark(run_a, pair, 'a')?;
        let Some((b, run_b)) = one_run(&args, &path)? else {
            break;
        };
        mark(run_b, pair, 'b')?;
        let label = |run: Option<i64>, side: &str| {
            run.map_or(format!("pair {pair} {side}"), |r| format!("run {r}"))
        };
        let compared = crate::analysis::compare::compare(
            &label(run_a, "A"),
            &a,
            &label(run_b, "B"),
            &b,
            alpha,
            build.clone(),
        );
        pairs.push(PairInput {
            run_a,
            run_b,
            compared,
        });
    }
    if let Some(sig) = interrupt::stop_requested() {
        stopped = Some(format!("interrupted by {}", interrupt::signal_name(sig)));
    }
    let report = selftest::summarise(
        Context {
            host,
            started_at,
            finished_at: now_rfc3339(),
            suite: suite_words(&args),
            alpha,
            pairs_asked: args.pairs as usize,
            stopped,
            build,
        },
        pairs,
    );
    if let Some(id) = id.into_inner() {
        let json = crate::record::compact_json(&report).map_err(Failure::run)?;
        Store::open(&path)
            .and_then(|mut s| s.finish_selftest(id, &json, report.passed))
            .map_err(super::history::failure)?;
    }
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
