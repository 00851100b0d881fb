//! The test of the test (`ipcmark selftest`): A/A pairs of one suite, each
//! pair compared by [`super::compare::compare`] (the very test `compare`
//! and `check` use, not a copy), summed up as the false-positive rate of
//! that test on this machine against α, with its binomial interval, the
//! machine's run-to-run shift across pairs, and each figure's flags; and,
//! where the command judged each pair through `check`'s own gate
//! (`analysis::check`, not a copy), how often check failed one: every
//! failure of an A/A pair is a false one.
//!
//! Every figure of an A/A pair is unchanged by construction, so every
//! figure the test calls significant is a false positive. A well-behaved
//! test flags about α of them; a machine whose speed moves between runs
//! by more than the figures' intervals show makes it flag more.

use super::check::Gate;
use crate::record::build::BuildRecord;
use crate::record::compare::{CompareReport, IntervalRecord};
use crate::record::selftest::{
    CheckFalseFailures, Rate, SELFTEST_SCHEMA, SelftestFigure, SelftestPair, SelftestReport,
    ShiftSpread,
};
use crate::stats::interval::binomial_interval;
use crate::stats::median;
use std::collections::BTreeMap;

/// How far above α the false-positive rate may be and the selftest pass:
/// two points, the bound; with 20 pairs of a dozen figures the
/// rate's own interval is about that wide.
pub const SLACK: f64 = 0.02;

/// One pair as the command measured it: the runs' ids in the history and
/// compare's report of them.
pub struct PairInput {
    /// History id of run A.
    pub run_a: Option<i64>,
    /// History id of run B.
    pub run_b: Option<i64>,
    /// `compare`'s report of A against B.
    pub compared: CompareReport,
    /// Whether `check` passed the pair (judged through
    /// [`Context::check`]'s gate by `analysis::check`); none when not judged.
    pub check_passed: Option<bool>,
}

/// What the command knew of the whole selftest, beside its pairs.
pub struct Context {
    /// The host.
    pub host: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended.
    pub finished_at: String,
    /// The run arguments of each run.
    pub suite: Vec<String>,
    /// compare's α.
    pub alpha: f64,
    /// Pairs asked for.
    pub pairs_asked: usize,
    /// Why it ended early, if it did.
    pub stopped: Option<String>,
    /// The build.
    pub build: BuildRecord,
    /// The gate `check` judged each pair through, if it did.
    pub check: Option<Gate>,
}

fn rate(flagged: usize, compared: usize) -> Rate {
    Rate {
        flagged,
        compared,
        rate: (compared > 0).then(|| flagged as f64 / compared as f64),
        interval: binomial_interval(flagged, compared, 0.95).map(|i| IntervalRecord {
            low: i.low,
            high: i.high,
        }),
    }
}

#[derive(Default)]
struct Tally {
    compared: usize,
    flagged: usize,
    beyond: usize,
    mdc: Vec<f64>,
}

/// The selftest's record from its pairs.
pub fn summarise(ctx: Context, pairs: Vec<PairInput>) -> SelftestReport {
    let mut figures: BTreeMap<(String, String, usize), Tally> = BTreeMap::new();
    let mut out = Vec::with_capacity(pairs.len());
    for (i, p) in pairs.iter().enumerate() {
        let c = &p.compared;
        let mut flagged = 0;
        let mut beyond = 0;
        for f in &c.comparisons {
            let t = figures
                .entry((f.benchmark.clone(), f.mode.clone(), f.size_bytes))
                .or_default();
            t.compared += 1;
            if let Some(m) = f.min_detectable_change {
                t.mdc.push(m);
            }
            if f.significant {
                flagged += 1;
                t.flagged += 1;
            }
            // Beyond the shift where compare found one, else as it is.
            let b = f
                .beyond_shift
                .as_ref()
                .map_or(f.significant, |b| b.significant);
            if b {
                beyond += 1;
                t.beyond += 1;
            }
        }
        out.push(SelftestPair {
            pair: i + 1,
            run_a: p.run_a,
            run_b: p.run_b,
            compared: c.comparisons.len(),
            flagged,
            flagged_beyond_shift: beyond,
            common_shift: c.common_shift.clone(),
            check_failed: p.check_passed.map(|passed| !passed),
        });
    }
    let compared: usize = out.iter().map(|p| p.compared).sum();
    let flagged: usize = out.iter().map(|p| p.flagged).sum();
    let beyond: usize = out.iter().map(|p| p.flagged_beyond_shift).sum();
    let check_false_failures = ctx.check.as_ref().map(|gate| {
        let judged = out.iter().filter_map(|p| p.check_failed);
        let pairs = judged.clone().count();
        let failed = judged.filter(|f| *f).count();
        let r = rate(failed, pairs);
        CheckFalseFailures {
            max_regression: gate.max_regression,
            max_common_shift: gate.max_common_shift.0,
            max_common_shift_from: gate.max_common_shift.1.clone(),
            pairs,
            failed,
            rate: r.rate,
            interval: r.interval,
        }
    });
    let limit = ctx.alpha + SLACK;
    let false_positives = rate(flagged, compared);
    let passed = false_positives.rate.is_some_and(|r| r <= limit + 1e-12);
    SelftestReport {
        schema: SELFTEST_SCHEMA.into(),
        build: ctx.build,
        host: ctx.host,
        started_at: ctx.started_at,
        finished_at: ctx.finished_at,
        suite: ctx.suite,
        alpha: ctx.alpha,
        limit,
        pairs_asked: ctx.pairs_asked,
        pairs_done: out.len(),
        stopped: ctx.stopped,
        shift: shift_spread(&out),
        check_false_failures,
        pairs: out,
        figures: figures
            .into_iter()
            .map(|((benchmark, mode, size_bytes), t)| SelftestFigure {
                benchmark,
                mode,
                size_bytes,
                compared: t.compared,
                flagged: t.flagged,
                flagged_beyond_shift: t.beyond,
                median_min_detectable_change: (!t.mdc.is_empty()).then(|| median(&t.mdc)),
            })
            .collect(),
        false_positives,
        false_positives_beyond_shift: rate(beyond, compared),
        passed,
    }
}

fn shift_spread(pairs: &[SelftestPair]) -> Option<ShiftSpread> {
    let shifts: Vec<_> = pairs
        .iter()
        .filter_map(|p| p.common_shift.as_ref())
        .collect();
    if shifts.is_empty() {
        return None;
    }
    let factors: Vec<f64> = shifts.iter().map(|s| s.factor).collect();
    let changes: Vec<f64> = factors.iter().map(|f| (f - 1.0).abs()).collect();
    Some(ShiftSpread {
        pairs: shifts.len(),
        median: median(&factors),
        median_abs_change: median(&changes),
        low: factors.iter().copied().fold(f64::INFINITY, f64::min),
        high: factors.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        significant: shifts.iter().filter(|s| s.significant).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::record::RunRecord;

    fn ctx(pairs_asked: usize) -> Context {
        Context {
            host: "h".into(),
            started_at: "t0".into(),
            finished_at: "t1".into(),
            suite: vec!["pipe".into()],
            alpha: 0.05,
            pairs_asked,
            stopped: None,
            build: fixture("op").header.build,
            check: None,
        }
    }

    fn pair(a: &RunRecord, b: &RunRecord) -> PairInput {
        PairInput {
            run_a: Some(1),
            run_b: Some(2),
            compared: crate::analysis::compare::compare(
                "a",
                a,
                "b",
                b,
                0.05,
                a.header.build.clone(),
            ),
            check_passed: None,
        }
    }

    /// A pair judged by `check` through `gate`, as the selftest judges it.
    fn judged(a: &RunRecord, b: &RunRecord, gate: &Gate) -> PairInput {
        let mut p = pair(a, b);
        let checked =
            crate::analysis::check::check(p.compared.clone(), a, b, gate, a.header.build.clone());
        p.check_passed = Some(checked.passed);
        p
    }

    #[test]
    fn the_pairs_check_fails_are_counted_as_false_failures() {
        let a = fixture("op");
        // syscall-read-tmpfs 10% slower: check fails that pair at 5%.
        let b = scaled(&a, |i| if i == 1 { 1.10 } else { 1.0 });
        let gate = Gate::new(0.05);
        let judging = Context {
            check: Some(gate.clone()),
            ..ctx(3)
        };
        let r = summarise(
            judging,
            vec![
                judged(&a, &a, &gate),
                judged(&a, &b, &gate),
                judged(&a, &a, &gate),
            ],
        );
        let pairs: Vec<_> = r.pairs.iter().map(|p| p.check_failed).collect();
        assert_eq!(pairs, [Some(false), Some(true), Some(false)]);
        let c = r.check_false_failures.as_ref().unwrap();
        assert_eq!((c.pairs, c.failed), (3, 1));
        assert!((c.rate.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let i = c.interval.unwrap();
        assert!(i.low < 1.0 / 3.0 && 1.0 / 3.0 < i.high, "{i:?}");
        assert_eq!(c.max_regression, 0.05);
        assert_eq!(
            (c.max_common_shift, c.max_common_shift_from.as_str()),
            (crate::analysis::check::DEFAULT_MAX_COMMON_SHIFT, "default")
        );
        // Allowed 15%, no pair fails.
        let lenient = Gate::new(0.15);
        let r = summarise(
            Context {
                check: Some(lenient.clone()),
                ..ctx(1)
            },
            vec![judged(&a, &b, &lenient)],
        );
        assert_eq!(r.check_false_failures.unwrap().failed, 0);
    }

    /// A selftest not judged by check writes neither field: a record of
    /// before them reads back as it was.
    #[test]
    fn a_selftest_without_checks_writes_no_check_fields() {
        let a = fixture("op");
        let r = summarise(ctx(1), vec![pair(&a, &a)]);
        assert!(r.check_false_failures.is_none());
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("check_f"), "{text}");
        let back: SelftestReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn identical_pairs_flag_nothing_and_pass() {
        let a = fixture("op");
        let r = summarise(ctx(3), vec![pair(&a, &a), pair(&a, &a)]);
        assert_eq!(r.schema, SELFTEST_SCHEMA);
        assert_eq!((r.pairs_asked, r.pairs_done), (3, 2));
        let n = a.results.len();
        assert_eq!(r.false_positives.compared, 2 * n);
        assert_eq!(r.false_positives.flagged, 0);
        assert_eq!(r.false_positives.rate, Some(0.0));
        assert!(r.passed);
        assert_eq!(r.figures.len(), n);
        assert!(r.figures.iter().all(|f| f.compared == 2 && f.flagged == 0));
        assert!((r.limit - 0.07).abs() < 1e-12);
    }

    #[test]
    fn a_figure_that_moved_is_counted_against_the_test_and_fails_it() {
        let a = fixture("op");
        // syscall-read-tmpfs, whose samples lie within ±3% of their median:
        // 10% slower is beyond doubt, so every pair flags it.
        let b = scaled(&a, |i| if i == 1 { 1.10 } else { 1.0 });
        let r = summarise(ctx(2), vec![pair(&a, &b), pair(&a, &b)]);
        let f = r
            .figures
            .iter()
            .find(|f| f.benchmark == "syscall-read-tmpfs")
            .unwrap();
        assert_eq!((f.compared, f.flagged), (2, 2));
        assert_eq!(r.false_positives.flagged, 2);
        let rate = r.false_positives.rate.unwrap();
        assert!((rate - 2.0 / (2 * a.results.len()) as f64).abs() < 1e-12);
        let i = r.false_positives.interval.unwrap();
        assert!(i.low < rate && rate < i.high);
        assert!(
            !r.passed,
            "a third of the figures flagged is far over α + 2 points"
        );
        assert!(r.pairs.iter().all(|p| p.flagged == 1));
    }

    #[test]
    fn the_shift_is_summed_over_pairs_with_one() {
        let mut a = fixture("ipc-quick");
        a.results.extend(fixture("op").results);
        let slow = scaled(&a, |_| 1.10);
        let fast = scaled(&a, |_| 0.95);
        let r = summarise(ctx(3), vec![pair(&a, &slow), pair(&a, &fast), pair(&a, &a)]);
        let s = r.shift.unwrap();
        assert_eq!(s.pairs, 3);
        assert!(
            (s.low - 0.95).abs() < 1e-9 && (s.high - 1.10).abs() < 1e-9,
            "{s:?}"
        );
        assert!((s.median - 1.0).abs() < 1e-9);
        assert!((s.median_abs_change - 0.05).abs() < 1e-9);
        // Everything moved together: beyond the shift nothing did.
        assert_eq!(r.false_positives_beyond_shift.flagged, 0);
    }

    #[test]
    fn nothing_compared_does_not_pass() {
        let r = summarise(ctx(20), Vec::new());
        assert_eq!(r.pairs_done, 0);
        assert!(r.false_positives.rate.is_none() && r.false_positives.interval.is_none());
        assert!(r.shift.is_none());
        assert!(!r.passed);
    }
}
