//! The study behind `ipcmark advise`: reads the host's runs from the
//! history, ranks its ping-pong mechanisms by the stated need
//! (`analysis::advise`) into an `ipcmark.advise/1` record. With `measure`,
//! what the history lacks for the need is measured first; with `verify` the
//! top two are measured at the size by a one-way run paced at the rate (a
//! `RunRequest`, saved like any run) and each prediction is set against
//! what it measured. Fails when the history has nothing to rank.

use super::Finish;
use crate::analysis::advise;
use crate::history::{self, Store};
use crate::output::progress::Progress;
use crate::record::RunRecord;
use crate::record::advise::{Advice, AdviseReport, Need, Verified};
use crate::run::request::{CpuList, RunMode};
use crate::run::{Failure, RunRequest};
use std::path::PathBuf;
use std::time::Duration;

/// The run that gives a history something to rank.
const FIRST_RUN: &str =
    "ipcmark run pipe unix-stream shm-futex eventfd posix-mq --sizes 64,1K,4K,16K";

/// What `ipcmark advise` is asked: the need, whose runs, and whether to
/// measure what the history lacks first and verify the top two after.
pub struct AdviseRequest {
    /// The message size, bytes.
    pub size: usize,
    /// Messages per second to sustain.
    pub rate: Option<f64>,
    /// Largest one-way median allowed.
    pub p50: Option<Duration>,
    /// Largest one-way 99th percentile allowed.
    pub p99: Option<Duration>,
    /// Largest CPU time per message.
    pub cpu_per_msg: Option<Duration>,
    /// Only figures measured on these CPUs; `verify` runs on them.
    pub cpus: Option<CpuList>,
    /// The host whose runs are read (default: this one).
    pub host: Option<String>,
    /// Measure the top two one way and set them against their predictions.
    pub verify: bool,
    /// First measure what the history lacks for the need.
    pub measure: bool,
    /// Read the runs of `ipcmark selftest` too.
    pub selftest_runs: bool,
    /// The history (default: the user's).
    pub db: Option<PathBuf>,
}

/// Every run report of `host` in the history at `path`, with its id,
/// oldest first (reports of other kinds, such as workloads, are left out,
/// and the runs of `ipcmark selftest` unless `selftest_runs`).
fn host_runs(
    path: &std::path::Path,
    host: &str,
    selftest_runs: bool,
) -> Result<Vec<(i64, RunRecord)>, Failure> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let store = Store::open_reader(path).map_err(crate::run::save::failure)?;
    let selftests = match selftest_runs {
        true => Default::default(),
        false => store.selftest_runs().map_err(crate::run::save::failure)?,
    };
    let mut out = Vec::new();
    for run in store.runs().map_err(crate::run::save::failure)? {
        if run.host != host || selftests.contains(&run.id) {
            continue;
        }
        // A workload's report, or one that does not read, has nothing to rank.
        match store.open_run_id(run.id) {
            Ok(history::Opened {
                run: history::StoredRun::Run(r),
                ..
            }) => out.push((run.id, *r)),
            Err(history::OpenError::History(e)) => return Err(crate::run::save::failure(e)),
            _ => {}
        }
    }
    Ok(out)
}

/// How far the measured p99 may lie from the predicted and the prediction
/// hold (the issue's ±25%).
const P99_TOLERANCE: f64 = 0.25;

/// The interval between two messages of `--verify`'s one-way run at `rate`
/// messages a second (none: saturated).
fn pacing(rate: Option<f64>) -> Option<Duration> {
    advise::pacing_ns(rate).map(Duration::from_nanos)
}

/// Messages `--verify` times per mechanism: two seconds at the rate, at
/// least 2 000 (a p99 from 20 messages above it) and at most 20 000 (a slow
/// rate would take minutes); saturated, 20 000.
fn verify_messages(rate: Option<f64>) -> u64 {
    rate.map_or(20_000, |r| (r * 2.0).clamp(2_000.0, 20_000.0) as u64)
}

/// Measures `names` at `size` in one one-way run saved in the history,
/// paced at `--rate` (sporadic, one message per 1/rate) or saturated
/// without one; its report and id.
fn measure(
    args: &AdviseRequest,
    names: Vec<String>,
    path: &std::path::Path,
    finish: Finish,
) -> Result<(RunRecord, Option<i64>), Failure> {
    let messages = verify_messages(args.rate);
    let mut run = RunRequest::of(names, vec![args.size]);
    run.cpus = args.cpus.clone();
    run.mode = Some(RunMode::Oneway);
    run.interval = pacing(args.rate);
    run.messages = Some(messages);
    run.window = Some(messages);
    run.sinks.db = Some(path.to_path_buf());
    let outcome = crate::run::run(run, &mut Progress::new(0))?;
    let record = outcome.report().clone();
    finish(outcome)?;
    let id = Store::open_reader(path)
        .ok()
        .and_then(|s| s.runs().ok())
        .and_then(|r| r.last().map(|r| r.id));
    Ok((record, id))
}

/// `--measure`: runs, in the history at `path`, what `missing` names
/// (ping-pong, then stream, at the size), each run's page left unprinted;
/// one line on stderr for each.
fn measure_missing(
    args: &AdviseRequest,
    missing: advise::Missing,
    path: &std::path::Path,
    quiet: Finish,
) -> Result<(), Failure> {
    for (names, mode) in [
        (missing.pingpong, None),
        (missing.stream, Some(RunMode::Stream)),
    ] {
        if names.is_empty() {
            continue;
        }
        eprintln!(
            "advise --measure: {} at {} ({}): {}",
            if mode.is_some() {
                "stream"
            } else {
                "ping-pong"
            },
            crate::output::table::format_size(args.size),
            names.len(),
            names.join(" ")
        );
        let mut run = RunRequest::of(names, vec![args.size]);
        run.cpus = args.cpus.clone();
        run.mode = mode;
        run.sinks.db = Some(path.to_path_buf());
        let outcome = crate::run::run(run, &mut Progress::new(0))?;
        quiet(outcome)?;
        if let Some(sig) = crate::engine::os::interrupt::stop_requested() {
            return Err(Failure {
                code: 128 + sig as u8,
                message: format!(
                    "advise --measure: interrupted by {}; what was measured is kept in the history",
                    crate::engine::os::interrupt::signal_name(sig)
                ),
            });
        }
    }
    Ok(())
}

/// The top two of the ranking that can run one way at the size (a
/// mechanism that sends to itself has no receiver to time): those
/// `--verify` measures.
fn verify_picks<'r>(args: &AdviseRequest, report: &'r AdviseReport) -> Vec<&'r Advice> {
    report
        .ranking
        .iter()
        .filter(|a| {
            crate::mechanisms::find(&a.benchmark).is_none_or(|m| {
                crate::engine::run::runner::oneway_skip_reason(m, args.size).is_none()
            })
        })
        .take(2)
        .collect()
}

/// Predicted against measured for the top two that can run one way: the
/// one-way prediction where the history has one (the shape measured),
/// else the ping-pong one.
fn verify(
    args: &AdviseRequest,
    report: &AdviseReport,
    path: &std::path::Path,
    finish: Finish,
) -> Result<Vec<Verified>, Failure> {
    let top = verify_picks(args, report);
    let names = top.iter().map(|a| a.benchmark.clone()).collect();
    let (record, id) = measure(args, names, path, finish)?;
    Ok(top
        .iter()
        .map(|a| {
            let f = record.results.iter().find(|f| {
                f.benchmark == a.benchmark
                    && f.mode == crate::record::Mode::OneWay
                    && f.size_bytes == args.size
                    && f.status == crate::record::Status::Ok
            });
            let l = f.and_then(|f| f.latency_ns.as_ref());
            let (predicted_p50_ns, predicted_p99_ns, predicted_as) = match &a.oneway {
                Some(o) => (o.p50.value, Some(o.p99.value), o.predicted_as.clone()),
                None => (
                    a.p50.value,
                    a.p99.as_ref().map(|s| s.value),
                    advise::PREDICTED_AS.to_string(),
                ),
            };
            let measured_p99_ns = l.and_then(|l| l.p99);
            let oneway = f.and_then(|f| f.oneway.as_ref());
            Verified {
                benchmark: a.benchmark.clone(),
                run_id: id,
                predicted_p50_ns,
                // The messages' own median (a one-way figure's `median` is
                // of its window means), of the population its p99 is of.
                measured_p50_ns: l.map(|l| l.p50.unwrap_or(l.median)),
                predicted_p99_ns,
                measured_p99_ns,
                predicted_as: Some(predicted_as),
                measured_as: Some(match pacing(args.rate) {
                    Some(d) => format!("oneway, sporadic every {} ns", d.as_nanos()),
                    None => "oneway, saturated".into(),
                }),
                messages: oneway.map(|o| o.messages_sent),
                p99_within_25_percent: match (measured_p99_ns, predicted_p99_ns) {
                    (Some(m), Some(p)) if p > 0.0 => Some((m / p - 1.0).abs() <= P99_TOLERANCE),
                    _ => None,
                },
            }
        })
        .collect())
}

/// Ranks the host's mechanisms for the need (`analysis::advise`), after
/// measuring what the history lacks (`measure`), and sets the top two's
/// predictions against a one-way run of them (`verify`). Each run it asks
/// for is handed, once over, to `shown` (`verify`'s) or `quiet` (the
/// others'). Fails (exit 1) when the history has nothing to rank.
pub fn advise(args: AdviseRequest, shown: Finish, quiet: Finish) -> Result<AdviseReport, Failure> {
    let path = history::path_or_default(args.db.as_deref()).map_err(crate::run::save::failure)?;
    let host = args
        .host
        .clone()
        .unwrap_or_else(crate::machine::environment::hostname);
    let ns = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e9);
    let need = Need {
        size_bytes: args.size,
        rate_per_s: args.rate,
        p50_ns: ns(args.p50),
        p99_ns: ns(args.p99),
        cpu_per_msg_ns: ns(args.cpu_per_msg),
        cpus: args.cpus.as_ref().map(|c| c.0.clone()),
    };
    let mut runs = host_runs(&path, &host, args.selftest_runs)?;
    if args.measure {
        if host != crate::machine::environment::hostname() {
            return Err(Failure::usage(format!(
                "--measure measures this host; --host {host} names another"
            )));
        }
        // A mechanism of a fixed payload (eventfd's 8 bytes, a signal) runs
        // at that size whatever is asked: it cannot carry another.
        let ids: Vec<&str> = crate::mechanisms::REGISTRY
            .iter()
            .map(|m| m.info())
            .filter(|i| match i.payload {
                crate::engine::channel::Payload::Fixed(n) => n == args.size,
                crate::engine::channel::Payload::Bytes => true,
            })
            .map(|i| i.id)
            .collect();
        let missing = advise::missing(&host, &need, &runs, &ids);
        if missing.pingpong.is_empty() && missing.stream.is_empty() {
            eprintln!("advise --measure: the history has every figure the need asks for");
        } else {
            measure_missing(&args, missing, &path, quiet)?;
            runs = host_runs(&path, &host, args.selftest_runs)?;
        }
    }
    let mut report = advise::advise(
        &host,
        need.clone(),
        &runs,
        crate::output::json::build::current(),
    );
    if args.measure && args.verify {
        // Verify's picks with no one-way figure of its pacing at the size
        // are measured that way first, so that the prediction is of the
        // shape verify measures (the ranking stays on ping-pong).
        let wanted = advise::pacing_ns(args.rate);
        let names: Vec<String> = verify_picks(&args, &report)
            .iter()
            .filter(|a| {
                a.oneway
                    .as_ref()
                    .is_none_or(|o| wanted.is_some() && !o.predicted_as.contains("sporadic"))
            })
            .map(|a| a.benchmark.clone())
            .collect();
        if !names.is_empty() {
            eprintln!(
                "advise --measure: one way at {} ({}): {}",
                crate::output::table::format_size(args.size),
                names.len(),
                names.join(" ")
            );
            measure(&args, names, &path, quiet)?;
            runs = host_runs(&path, &host, args.selftest_runs)?;
            report = advise::advise(&host, need, &runs, crate::output::json::build::current());
        }
    }
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
        report.verify = Some(verify(&args, &report, &path, shown)?);
    }
    Ok(report)
}
