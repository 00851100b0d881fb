//! The report of `ipcmark compare A.json B.json`: for every result the two
//! runs share, both medians, the difference, and whether it is significant;
//! then the shift common to all results (the machine's speed moves every
//! figure at once) and which results differ beyond it.
//!
//! Where both runs measured a figure in several passes (`--passes`), the test
//! is Welch's t on the logs of the pass medians, with its interval of the
//! ratio B / A: a run's level moves between runs by more than its samples
//! scatter, and only the spread between passes shows how much. Otherwise it
//! is Mann–Whitney U on the samples, with a bootstrap interval of the ratio
//! of medians, and the output says run-to-run variation was not measured.
//!
//! It reads two [`RunRecord`]s, pairs their figures by
//! [`FigureRecord::key`] and gives the records of `record::compare`; output
//! reads the files (`output::compare::read`) and draws the table
//! (`output::compare::table`).

use crate::record::build::BuildRecord;
use crate::record::compare::{
    Beyond, COMPARE_SCHEMA, CommonShift, CompareReport, Comparison, IntervalRecord,
    MannWhitneyRecord, Side, Test, Unmatched, WelchRecord,
};
use crate::record::key::FigureKey;
use crate::record::{FigureRecord, RunRecord, Status};
use crate::stats::compare::{Interval, MannWhitney, Welch};
use crate::stats::compare::{
    POWER, bootstrap_median, bootstrap_ratio_of_medians, mann_whitney, min_detectable_normal_log,
    min_detectable_welch_log, welch_log,
};
use crate::stats::median;
use std::collections::BTreeMap;

/// Resamples for the bootstrap interval (fixed seed: same files, same interval).
const RESAMPLES: usize = 4000;

/// Fewest compared results for a common shift to mean anything.
const SHIFT_MIN_RESULTS: usize = 5;

type Key = FigureKey;

pub(crate) fn side(path: &str, f: &RunRecord) -> Side {
    Side {
        path: path.to_string(),
        started_at: f.started_at.clone(),
        hostname: f.environment.hostname.clone(),
        kernel: f.environment.kernel.clone(),
    }
}

fn index(f: &RunRecord) -> BTreeMap<Key, &FigureRecord> {
    // A cold figure, a one-way figure of another pacing or interval, a
    // periodic one of another frequency: each is its own figure.
    f.results.iter().map(|r| (r.key(), r)).collect()
}

/// One result's two sides: its samples and, if it had passes, their medians.
struct Sides<'a> {
    a: &'a [f64],
    b: &'a [f64],
    passes: Option<(&'a [f64], &'a [f64])>,
}

fn compare_sides(key: &Key, sides: &Sides, alpha: f64) -> Option<Comparison> {
    let (a, b) = (sides.a, sides.b);
    let mw = mann_whitney(a, b)?;
    let (ma, mb) = (median(a), median(b));
    let welch = sides
        .passes
        .and_then(|(pa, pb)| welch_log(pa, pb, 1.0 - alpha));
    let (test, p, ratio_interval) = match welch {
        Some(w) => (Test::WelchPasses, w.p, Some(w.ratio_interval)),
        None => (
            Test::MannWhitneySamples,
            mw.p,
            bootstrap_ratio_of_medians(a, b, 1.0 - alpha, RESAMPLES, 0x1bc),
        ),
    };
    let min_detectable_change = match (test, sides.passes) {
        (Test::WelchPasses, Some((pa, pb))) => min_detectable_welch_log(pa, pb, alpha, POWER),
        _ => min_detectable_normal_log(a, b, alpha, POWER),
    };
    let significant = p < alpha;
    Some(Comparison {
        benchmark: key.benchmark.clone(),
        mode: key.mode_label(),
        size_bytes: key.size_bytes,
        median_a_ns: ma,
        median_b_ns: mb,
        diff_ns: mb - ma,
        diff_percent: if ma > 0.0 {
            (mb - ma) / ma * 100.0
        } else {
            0.0
        },
        test,
        p,
        interval_excludes_one: ratio_interval.map(|i| !i.contains(1.0)),
        ratio_interval: ratio_interval.map(IntervalRecord::from),
        mann_whitney: mw.into(),
        welch: welch.map(Into::into),
        min_detectable_change,
        significant,
        verdict: verdict(significant, mb > ma).into(),
        beyond_shift: None,
    })
}

fn verdict(significant: bool, slower: bool) -> &'static str {
    match (significant, slower) {
        (false, _) => "no significant difference",
        (true, true) => "slower",
        (true, false) => "faster",
    }
}

/// The shift common to all results, if there are enough with positive medians.
fn common_shift(comparisons: &[&Comparison], alpha: f64) -> Option<CommonShift> {
    let logs: Vec<f64> = comparisons
        .iter()
        .filter(|c| c.median_a_ns > 0.0 && c.median_b_ns > 0.0)
        .map(|c| (c.median_b_ns / c.median_a_ns).ln())
        .collect();
    if logs.len() < SHIFT_MIN_RESULTS {
        return None;
    }
    let ci = bootstrap_median(&logs, 1.0 - alpha, RESAMPLES, 0x5417)?;
    Some(CommonShift {
        factor: median(&logs).exp(),
        interval: IntervalRecord {
            low: ci.low.exp(),
            high: ci.high.exp(),
        },
        significant: !ci.contains(0.0),
        results: logs.len(),
    })
}

/// Tests each result again with B divided by the common factor (its pass
/// medians with passes, else its samples).
fn beyond(c: &mut Comparison, sides: &Sides, factor: f64, alpha: f64) {
    let scale = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x / factor).collect() };
    let b = scale(sides.b);
    let p = match (c.test, sides.passes) {
        (Test::WelchPasses, Some((pa, pb))) => welch_log(pa, &scale(pb), 1.0 - alpha).map(|w| w.p),
        _ => mann_whitney(sides.a, &b).map(|mw| mw.p),
    };
    if let Some(p) = p {
        let significant = p < alpha;
        c.beyond_shift = Some(Beyond {
            p,
            significant,
            verdict: verdict(significant, median(&b) > median(sides.a)).into(),
        });
    }
}

/// Compares run `b` (read from `path_b`) with run `a` at significance level
/// `alpha`: every result both measured, the common shift, and what was not
/// compared and why.
pub fn compare(
    path_a: &str,
    a: &RunRecord,
    path_b: &str,
    b: &RunRecord,
    alpha: f64,
    build: BuildRecord,
) -> CompareReport {
    let (ia, ib) = (index(a), index(b));
    let mut comparisons = Vec::new();
    let mut unmatched = Vec::new();
    let mut miss = |key: &Key, why: String| {
        unmatched.push(Unmatched {
            benchmark: key.benchmark.clone(),
            mode: key.mode_label(),
            size_bytes: key.size_bytes,
            why,
        })
    };
    for (key, ra) in &ia {
        let Some(rb) = ib.get(key) else {
            miss(key, "only in A".into());
            continue;
        };
        match (ra.status, rb.status, &ra.samples_ns, &rb.samples_ns) {
            (Status::Ok, Status::Ok, Some(sa), Some(sb)) => {
                let sides = Sides {
                    a: sa,
                    b: sb,
                    passes: ra
                        .passes
                        .as_ref()
                        .zip(rb.passes.as_ref())
                        .map(|(pa, pb)| (pa.medians_ns.as_slice(), pb.medians_ns.as_slice())),
                };
                match compare_sides(key, &sides, alpha) {
                    Some(c) => comparisons.push((c, sides)),
                    None => miss(key, "no samples".into()),
                }
            }
            (sa, sb, _, _) => miss(
                key,
                format!(
                    "not measured on both sides (A {}, B {})",
                    sa.name(),
                    sb.name()
                ),
            ),
        }
    }
    for key in ib.keys().filter(|k| !ia.contains_key(*k)) {
        miss(key, "only in B".into());
    }
    let shift = common_shift(
        &comparisons.iter().map(|(c, ..)| c).collect::<Vec<_>>(),
        alpha,
    );
    let comparisons = comparisons
        .into_iter()
        .map(|(mut c, sides)| {
            if let Some(sh) = &shift {
                beyond(&mut c, &sides, sh.factor, alpha);
            }
            c
        })
        .collect();
    CompareReport {
        schema: COMPARE_SCHEMA.into(),
        build,
        alpha,
        a: side(path_a, a),
        b: side(path_b, b),
        comparisons,
        common_shift: shift,
        unmatched,
    }
}

impl From<Interval> for IntervalRecord {
    fn from(i: Interval) -> Self {
        IntervalRecord {
            low: i.low,
            high: i.high,
        }
    }
}

impl From<MannWhitney> for MannWhitneyRecord {
    fn from(m: MannWhitney) -> Self {
        MannWhitneyRecord {
            u: m.u,
            p: m.p,
            exact: m.exact,
        }
    }
}

impl From<Welch> for WelchRecord {
    fn from(w: Welch) -> Self {
        WelchRecord {
            p: w.p,
            df: w.df,
            ratio_interval: w.ratio_interval.into(),
        }
    }
}
