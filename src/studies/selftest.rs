//! The study behind `ipcmark selftest`: the test of `compare`'s test on this machine. N A/A pairs of a short
//! suite (two `ipcmark run --quick` of the same figures, back to back, each
//! saved in the history and marked as the selftest's), each pair compared
//! by `analysis::compare` and judged by `analysis::check` (a failure of an
//! A/A pair is a false one), summed up by `analysis::selftest` and kept in
//! the history's `selftests` table; a stop (Ctrl-C) ends it after the
//! pairs done, which it reports.

use super::Finish;
use crate::analysis::check::Gate;
use crate::analysis::selftest::{self, Context, PairInput};
use crate::engine::os::interrupt;
use crate::history::{self, Store};
use crate::output::progress::Progress;
use crate::output::recorder::now_rfc3339;
use crate::record::RunRecord;
use crate::record::selftest::SelftestReport;
use crate::run::{Failure, Outcome, RunRequest};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The suite's mechanisms by default: the blocking hand-offs a user
/// compares most, thirteen figures over three sizes.
pub const DEFAULT_SUITE: &[&str] = &["pipe", "unix-stream", "shm-futex", "eventfd", "posix-mq"];

/// The suite's sizes by default.
pub const DEFAULT_SIZES: &[usize] = &[64, 1024, 4096];

/// What `ipcmark selftest` is asked: how many A/A pairs of which suite,
/// at what significance level, kept in which history.
pub struct SelftestRequest {
    /// A/A pairs to run.
    pub pairs: u32,
    /// The suite's mechanisms or benchmarks (default [`DEFAULT_SUITE`]).
    pub suite: Vec<String>,
    /// The suite's sizes (default [`DEFAULT_SIZES`]).
    pub sizes: Option<Vec<usize>>,
    /// The significance level of each comparison.
    pub alpha: f64,
    /// The `--max-regression` each pair is judged at, as `check` judges.
    pub max_regression: f64,
    /// The history (default: the user's).
    pub db: Option<PathBuf>,
}

/// One run of the suite, saved in the history at `path`: its report and
/// its id there (`None` when stopped: the partial run is kept in the
/// history, but it is no side of a pair).
fn one_run(
    args: &SelftestRequest,
    path: &Path,
    quiet: &mut dyn FnMut(Outcome) -> Result<(), Failure>,
) -> Result<Option<(RunRecord, Option<i64>)>, Failure> {
    let sizes = args.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
    let mut run = RunRequest::of(suite(args), sizes);
    run.budget.quick = true;
    run.sinks.db = Some(path.to_path_buf());
    let outcome = crate::run::run(run, &mut Progress::new(0))?;
    let record = outcome.report().clone();
    quiet(outcome)?;
    if interrupt::stop_requested().is_some() {
        return Ok(None);
    }
    // The run's row is the last one that started when it did.
    let id = Store::open_reader(path)
        .and_then(|s| s.runs())
        .ok()
        .and_then(|runs| {
            runs.iter()
                .rev()
                .find(|r| r.started_at == record.header.started_at)
                .map(|r| r.id)
        });
    Ok(Some((record, id)))
}

fn suite(args: &SelftestRequest) -> Vec<String> {
    if args.suite.is_empty() {
        DEFAULT_SUITE.iter().map(|s| s.to_string()).collect()
    } else {
        args.suite.clone()
    }
}

/// The suite as `ipcmark run`'s arguments, for the record.
fn suite_words(args: &SelftestRequest) -> Vec<String> {
    let sizes = args.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
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

/// Runs `args.pairs` A/A pairs of the suite, each run saved in the
/// history and marked as the selftest's, compares each pair
/// (`analysis::compare`) and sums them up (`analysis::selftest`), keeping
/// the summary in the history's `selftests` table. Each run, once over, is
/// handed to `quiet` (its closing lines); `pair` is told of each pair as it
/// starts. A stop (Ctrl-C) ends it after the pairs done, which it reports.
pub fn selftest(
    args: SelftestRequest,
    pair_started: &mut dyn FnMut(usize, u32),
    quiet: Finish,
) -> Result<SelftestReport, Failure> {
    let alpha = args.alpha;
    let path = history::path_or_default(args.db.as_deref()).map_err(crate::run::save::failure)?;
    let host = crate::machine::environment::hostname();
    let started_at = now_rfc3339();
    // The selftest's row is made with its first run's mark: a suite that
    // `run` refuses leaves nothing behind.
    let id: RefCell<Option<i64>> = RefCell::new(None);
    let mark = |run: Option<i64>, pair: usize, side: char| -> Result<(), Failure> {
        let Some(run) = run else { return Ok(()) };
        let mut store = Store::open(&path).map_err(crate::run::save::failure)?;
        let selftest = match *id.borrow() {
            Some(t) => t,
            None => store
                .start_selftest(&started_at, &host)
                .map_err(crate::run::save::failure)?,
        };
        *id.borrow_mut() = Some(selftest);
        store
            .mark_selftest_run(selftest, run, pair, side)
            .map_err(crate::run::save::failure)
    };
    let build = crate::output::json::build::current();
    // Each pair judged as `ipcmark check` would judge it on this host when
    // the selftest began: its bound on the common shift is the newest
    // finished selftest's range, else the default.
    let gate = Gate {
        max_common_shift: super::check::common_shift_bound(Some(&path), &host),
        ..Gate::new(args.max_regression)
    };
    let mut pairs = Vec::new();
    let mut stopped = None;
    for pair in 1..=args.pairs as usize {
        pair_started(pair, args.pairs);
        let Some((a, run_a)) = one_run(&args, &path, quiet)? else {
            break;
        };
        mark(run_a, pair, 'a')?;
        let Some((b, run_b)) = one_run(&args, &path, quiet)? else {
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
        let checked = crate::analysis::check::check(compared.clone(), &a, &b, &gate, build.clone());
        pairs.push(PairInput {
            run_a,
            run_b,
            compared,
            check_passed: Some(checked.passed),
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
            check: Some(gate),
        },
        pairs,
    );
    if let Some(id) = id.into_inner() {
        let json = crate::record::compact_json(&report).map_err(Failure::run)?;
        Store::open(&path)
            .and_then(|mut s| s.finish_selftest(id, &json, report.passed))
            .map_err(crate::run::save::failure)?;
    }
    Ok(report)
}
