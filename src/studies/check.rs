//! A run judged against a baseline (`ipcmark check`): the two runs opened
//! as their records (a run of the history, a name given with `history
//! --tag`, or a JSON report), compared (`analysis::compare`) and the
//! comparison judged (`analysis::check`). The caller words a spec that
//! gave no run (`history::Refused`) and decides the exit code from
//! [`CheckReport::passed`].

use crate::analysis::check::{DEFAULT_MAX_COMMON_SHIFT, Gate};
use crate::history::{Refused, open_run};
use crate::record::RunRecord;
use crate::record::build::BuildRecord;
use crate::record::check::CheckReport;
use std::path::Path;

/// What to check.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The history the specs name runs of (none: the default one).
    pub db: Option<&'a Path>,
    /// The baseline's spec.
    pub baseline: &'a str,
    /// The spec of the run checked against it.
    pub run: &'a str,
    /// The largest slowdown of a figure allowed, beyond the common shift.
    pub max_regression: f64,
    /// The largest common shift taken out of the verdicts (none: the
    /// run-to-run range of the newest selftest on the run's host, else
    /// `analysis::check::DEFAULT_MAX_COMMON_SHIFT`).
    pub max_common_shift: Option<f64>,
    /// A figure the baseline measured may be skipped in the run.
    pub allow_skipped: bool,
    /// A figure the baseline measured may be absent from the run.
    pub allow_missing: bool,
    /// The figures are judged even where the host placed the CPUs
    /// differently in the two runs.
    pub allow_placement_change: bool,
    /// The significance level of each figure's test.
    pub alpha: f64,
    /// The build the report says wrote it.
    pub build: BuildRecord,
}

/// A check, with the record of the run it judged (what the exports of
/// its figures read).
#[derive(Debug)]
pub struct Checked {
    /// The verdicts.
    pub report: CheckReport,
    /// The run checked.
    pub run: RunRecord,
}

/// `ipcmark check`: the run against the baseline, judged.
pub fn check(req: &Request) -> Result<Checked, Refused> {
    let (la, a) = open_run(req.db, req.baseline)?;
    let (lb, b) = open_run(req.db, req.run)?;
    let compared =
        crate::analysis::compare::compare(&la, &a, &lb, &b, req.alpha, req.build.clone());
    let max_common_shift = match req.max_common_shift {
        Some(bound) => (bound, "--max-common-shift".to_string()),
        None => common_shift_bound(req.db, &b.header.environment.hostname),
    };
    let gate = Gate {
        max_common_shift,
        allow_skipped: req.allow_skipped,
        allow_missing: req.allow_missing,
        allow_placement_change: req.allow_placement_change,
        ..Gate::new(req.max_regression)
    };
    let report = crate::analysis::check::check(compared, &a, &b, &gate, req.build.clone());
    Ok(Checked { report, run: b })
}

/// The largest common shift a check of a run of `host` takes out of its
/// verdicts when not told (`--max-common-shift`), and where it comes from:
/// the run-to-run range of the host's newest selftest, else
/// `analysis::check::DEFAULT_MAX_COMMON_SHIFT`.
pub fn common_shift_bound(db: Option<&Path>, host: &str) -> (f64, String) {
    selftest_range(db, host).unwrap_or((DEFAULT_MAX_COMMON_SHIFT, "default".to_string()))
}

/// How far this host's runs move from one to the next, as its newest
/// selftest measured it: the largest |common shift − 1| of its A/A pairs
/// (five pairs with a shift at least, else it says too little), and which
/// selftest. None without one, or without a history to read.
fn selftest_range(db: Option<&Path>, host: &str) -> Option<(f64, String)> {
    let path = crate::history::path_or_default(db).ok()?;
    if !path.exists() {
        return None;
    }
    let store = crate::history::Store::open_reader(&path).ok()?;
    let (id, report) = store.latest_selftest(host).ok()??;
    let spread = report.shift?;
    (spread.pairs >= MIN_SELFTEST_PAIRS).then(|| {
        let range = (spread.high - 1.0).abs().max((1.0 - spread.low).abs());
        (range, format!("selftest {id}"))
    })
}

/// A/A pairs with a shift a selftest needs before its range bounds a check.
const MIN_SELFTEST_PAIRS: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::history::{OpenError, Opened, StoredRun};

    fn request<'a>(db: &'a Path, baseline: &'a str, run: &'a str) -> Request<'a> {
        Request {
            db: Some(db),
            baseline,
            run,
            max_regression: 0.05,
            max_common_shift: None,
            allow_skipped: false,
            allow_missing: false,
            allow_placement_change: false,
            alpha: 0.05,
            build: fixture("passes").header.build,
        }
    }

    #[test]
    fn a_run_slower_in_one_figure_fails_its_check_and_the_same_run_passes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        let base = fixture("passes");
        // Only the first figure slower, by half: beyond any common shift.
        let slower = scaled(&base, |i| if i == 0 { 1.5 } else { 1.0 });
        super::super::tests::store(&db, &[base.clone(), base, slower]);
        let same = check(&request(&db, "1", "2")).unwrap().report;
        assert!(same.passed, "{same:?}");
        let worse = check(&request(&db, "1", "last")).unwrap();
        assert!(!worse.report.passed, "{:?}", worse.report);
        // The run judged comes back with its verdicts, for the exports.
        assert_eq!(worse.run.results.len(), worse.report.figures.len());
    }

    #[test]
    fn a_spec_that_names_no_run_is_refused_with_what_it_gave() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        super::super::tests::store(&db, &[fixture("passes")]);
        let Err(r) = check(&request(&db, "1", "7")) else {
            panic!("run 7 was found")
        };
        assert_eq!(r.spec, "7");
        assert!(matches!(r.opened, Err(OpenError::History(_))));
        let workload = dir.path().join("w.json");
        std::fs::write(&workload, crate::record::workload::tests::FIXTURES[0].1).unwrap();
        let Err(r) = check(&request(&db, workload.to_str().unwrap(), "1")) else {
            panic!("a workload was checked")
        };
        assert!(matches!(
            r.opened,
            Ok(Opened {
                run: StoredRun::Workload(_),
                ..
            })
        ));
    }

    /// The newest selftest of the run's host bounds the common shift: the
    /// largest shift of its A/A pairs; another host's says nothing.
    #[test]
    fn a_selftest_of_the_hosts_bounds_the_common_shift() {
        use crate::analysis::selftest::{Context, PairInput, summarise};
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        let mut a = fixture("ipc-quick");
        a.results.extend(fixture("op").results);
        let build = a.header.build.clone();
        let host = a.header.environment.hostname.clone();
        // Five pairs whose runs moved by 0.6% to 3% all together.
        let pairs = (1..=5)
            .map(|i| {
                let b = scaled(&a, |_| 1.0 + 0.006 * i as f64);
                PairInput {
                    run_a: None,
                    run_b: None,
                    compared: crate::analysis::compare::compare(
                        "a",
                        &a,
                        "b",
                        &b,
                        0.05,
                        build.clone(),
                    ),
                    check_passed: None,
                }
            })
            .collect();
        let report = summarise(
            Context {
                host: host.clone(),
                started_at: "2026-11-28T00:00:00Z".into(),
                finished_at: "2026-11-28T00:01:00Z".into(),
                suite: vec!["pipe".into()],
                alpha: 0.05,
                pairs_asked: 5,
                stopped: None,
                build,
                check: None,
            },
            pairs,
        );
        assert_eq!(selftest_range(Some(&db), &host), None, "no history yet");
        let mut store = crate::history::Store::open(&db).unwrap();
        let id = store.start_selftest("2026-11-28T00:00:00Z", &host).unwrap();
        let json = crate::record::compact_json(&report).unwrap();
        store.finish_selftest(id, &json, report.passed).unwrap();
        drop(store);
        let (bound, from) = selftest_range(Some(&db), &host).unwrap();
        assert!((bound - 0.03).abs() < 1e-9, "{bound}");
        assert_eq!(from, format!("selftest {id}"));
        assert_eq!(selftest_range(Some(&db), "another-host"), None);
    }
}
