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
//! [`FigureRecord::key`] and gives the records of `record::compare`; the
//! runs are opened by `history::open` (a file or a stored run) and output
//! draws the table (`output::compare::table`).

use crate::record::build::BuildRecord;
use crate::record::compare::{
    Beyond, COMPARE_SCHEMA, CheckDifference, CommonShift, CompareReport, Comparison,
    IntervalRecord, MannWhitneyRecord, PartMove, PartsMoved, Side, Test, Unmatched, WelchRecord,
};
use crate::record::doctor::{CheckRecord, CheckStatus};
use crate::record::explain::ExplainRecord;
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
        started_at: f.header.started_at.clone(),
        hostname: f.header.environment.hostname.clone(),
        kernel: f.header.environment.kernel.clone(),
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
        parts: None,
    })
}

/// Which parts moved between two anatomies of one figure: parts matched by
/// name, one absent from a run counted 0 there, the largest change first.
/// `None` unless both were cut by one method (a coarse anatomy's parts are
/// counters, a full one's tracepoints: the same name is not the same part).
pub fn parts_moved(a: &ExplainRecord, b: &ExplainRecord) -> Option<PartsMoved> {
    if a.method != b.method {
        return None;
    }
    let mut names: Vec<&str> = a.parts.iter().map(|p| p.name.as_str()).collect();
    for p in &b.parts {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    let mean = |ex: &ExplainRecord, name: &str| -> f64 {
        ex.parts
            .iter()
            .filter(|p| p.name == name)
            .map(|p| p.mean_ns)
            .sum()
    };
    // The sums of the parts, not the traced means: so the shares of the
    // change add up to 1 even where a coarse residual does not close.
    let round_trip_a_ns: f64 = a.parts.iter().map(|p| p.mean_ns).sum();
    let round_trip_b_ns: f64 = b.parts.iter().map(|p| p.mean_ns).sum();
    let whole = round_trip_b_ns - round_trip_a_ns;
    let mut parts: Vec<PartMove> = names
        .into_iter()
        .map(|name| {
            let (ma, mb) = (mean(a, name), mean(b, name));
            PartMove {
                name: name.to_string(),
                mean_a_ns: ma,
                mean_b_ns: mb,
                change_ns: mb - ma,
                share_of_change: (whole != 0.0).then(|| (mb - ma) / whole),
            }
        })
        .collect();
    // Stable: parts that changed alike keep A's order (largest first).
    parts.sort_by(|x, y| y.change_ns.abs().total_cmp(&x.change_ns.abs()));
    let moved_most = parts
        .first()
        .filter(|p| p.change_ns != 0.0)
        .map(|p| p.name.clone());
    Some(PartsMoved {
        round_trip_a_ns,
        round_trip_b_ns,
        parts,
        moved_most,
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
        explained_by: Vec::new(),
    })
}

/// The checks a verdict alone compares: what they find is a measurement
/// or a rate that differs from one reading to the next (pressure, steal,
/// a wake-up's cost), not a setting.
fn measured_check(c: &CheckRecord) -> bool {
    c.cost.is_some() || crate::machine::doctor::PER_PASS.contains(&c.id.as_str())
}

/// The checks at the two runs' starts that differ: in verdict, or — for a
/// check that reads a setting (a governor, a clock source) — in what it
/// found. `None` where a run has no checks.
pub fn checks_differ(a: &RunRecord, b: &RunRecord) -> Option<Vec<CheckDifference>> {
    let (ca, cb) = (a.checks.as_ref()?, b.checks.as_ref()?);
    let name = |s: CheckStatus| crate::record::doctor::status_word(s);
    let mut out = Vec::new();
    let mut ids: Vec<&str> = ca.iter().map(|c| c.id.as_str()).collect();
    ids.extend(
        cb.iter()
            .map(|c| c.id.as_str())
            .filter(|id| !ca.iter().any(|c| c.id == *id)),
    );
    for id in ids {
        let x = ca.iter().find(|c| c.id == id);
        let y = cb.iter().find(|c| c.id == id);
        let change = match (x, y) {
            (Some(x), Some(y)) if x.status != y.status => {
                format!("{} → {}", name(x.status), name(y.status))
            }
            (Some(x), Some(y))
                if x.found != y.found && !measured_check(x) && !measured_check(y) =>
            {
                format!("{} → {}", x.found, y.found)
            }
            (Some(_), Some(_)) => continue,
            (Some(x), None) => format!("{} → not checked", name(x.status)),
            (None, Some(y)) => format!("not checked → {}", name(y.status)),
            (None, None) => continue,
        };
        out.push(CheckDifference {
            id: id.to_string(),
            status_a: x.map(|c| c.status),
            status_b: y.map(|c| c.status),
            change,
        });
    }
    Some(out)
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
                    Some(mut c) => {
                        if let (Some(ea), Some(eb)) = (&ra.explain, &rb.explain) {
                            c.parts = parts_moved(ea, eb);
                        }
                        comparisons.push((c, sides))
                    }
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
    let differ = checks_differ(a, b);
    let placement = super::placement::difference(a, b);
    // A check that differs, or the host's placement, may explain a shift:
    // it is then not said to be the machine's level alone.
    let shift = shift.map(|mut sh| {
        sh.explained_by = differ.iter().flatten().map(|d| d.id.clone()).collect();
        if placement.as_ref().is_some_and(|p| p.differ) {
            sh.explained_by.push("placement".into());
        }
        sh
    });
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
        checks_differ: differ,
        placement,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunRecord {
        RunRecord::parse(include_str!("../../tests/reports/passes.json")).unwrap()
    }

    fn check(id: &str, status: CheckStatus, found: &str) -> CheckRecord {
        CheckRecord {
            id: id.into(),
            title: id.into(),
            status,
            found: found.into(),
            cost: None,
            needs_root: false,
            fix: "fix".into(),
        }
    }

    fn anatomy(method: &str, parts: &[(&str, f64)]) -> ExplainRecord {
        let total: f64 = parts.iter().map(|p| p.1).sum();
        ExplainRecord {
            method: method.into(),
            parts: parts
                .iter()
                .map(|&(name, mean)| crate::record::explain::PartRecord {
                    name: name.into(),
                    mean_ns: mean,
                    median_ns: None,
                    p99_ns: None,
                    share: mean / total,
                })
                .collect(),
            traced_round_trip_ns: crate::record::explain::RoundTripRecord {
                mean: total,
                median: total,
            },
            untraced_round_trip_ns: None,
            round_trips: 2000,
            lost_events: 0,
            instance: None,
            events: Vec::new(),
            note: None,
            copy: None,
            load: None,
            kind: None,
            wake_ups: Vec::new(),
            merged_round_trips: None,
            tail: None,
            soak: None,
        }
    }

    #[test]
    fn the_part_that_moved_most_is_named_and_a_missing_part_is_zero() {
        let a = anatomy(
            "full",
            &[
                ("server wake-up: idle exit", 6000.0),
                ("client write", 1000.0),
                ("residual", 100.0),
            ],
        );
        let b = anatomy(
            "full",
            &[
                ("server wake-up: run-queue wait", 3000.0),
                ("client write", 1500.0),
                ("server wake-up: idle exit", 5000.0),
                ("residual", 100.0),
            ],
        );
        let m = parts_moved(&a, &b).unwrap();
        assert_eq!((m.round_trip_a_ns, m.round_trip_b_ns), (7100.0, 9600.0));
        let said: Vec<(&str, f64, f64, f64)> = m
            .parts
            .iter()
            .map(|p| (p.name.as_str(), p.mean_a_ns, p.mean_b_ns, p.change_ns))
            .collect();
        assert_eq!(
            said,
            [
                ("server wake-up: run-queue wait", 0.0, 3000.0, 3000.0),
                ("server wake-up: idle exit", 6000.0, 5000.0, -1000.0),
                ("client write", 1000.0, 1500.0, 500.0),
                ("residual", 100.0, 100.0, 0.0),
            ]
        );
        assert_eq!(
            m.moved_most.as_deref(),
            Some("server wake-up: run-queue wait")
        );
        assert_eq!(m.parts[0].share_of_change, Some(1.2));
        let shares: f64 = m.parts.iter().filter_map(|p| p.share_of_change).sum();
        assert!((shares - 1.0).abs() < 1e-12, "{shares}");
        // Nothing moved: no part named, no share of a change of 0.
        let same = parts_moved(&a, &a).unwrap();
        assert_eq!(same.moved_most, None);
        assert!(same.parts.iter().all(|p| p.share_of_change.is_none()));
        // A coarse anatomy's parts are not a full one's.
        assert_eq!(
            parts_moved(&a, &anatomy("coarse", &[("residual", 1.0)])),
            None
        );
    }

    #[test]
    fn the_checks_that_differ_are_named_by_verdict_or_setting() {
        let (mut a, mut b) = (run(), run());
        assert_eq!(checks_differ(&a, &b), None, "no checks: nothing to say");
        a.checks = Some(vec![
            check("cpu-governor", CheckStatus::Pass, "performance"),
            check("clocksource", CheckStatus::Pass, "tsc"),
            check("cpu-pressure", CheckStatus::Pass, "some 0.1%"),
            check("timer-slack", CheckStatus::Pass, "1 ns"),
        ]);
        b.checks = Some(vec![
            check("cpu-governor", CheckStatus::Warn, "powersave"),
            check("clocksource", CheckStatus::Pass, "hpet"),
            // A pressure's reading moves from run to run: its verdict only.
            check("cpu-pressure", CheckStatus::Pass, "some 0.4%"),
            check("timer-slack", CheckStatus::Pass, "1 ns"),
        ]);
        let d = checks_differ(&a, &b).unwrap();
        let said: Vec<(&str, &str)> = d
            .iter()
            .map(|d| (d.id.as_str(), d.change.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                ("cpu-governor", "pass → warn"),
                ("clocksource", "tsc → hpet")
            ]
        );
        assert_eq!(d[0].status_b, Some(CheckStatus::Warn));
        // The comparison's record carries them, and its shift (if any) names them.
        let r = compare("a", &a, "b", &b, 0.05, a.header.build.clone());
        assert_eq!(r.checks_differ.as_ref().map(Vec::len), Some(2));
        if let Some(sh) = &r.common_shift {
            assert_eq!(sh.explained_by, ["cpu-governor", "clocksource"]);
        }
        let same = compare("a", &a, "a", &a, 0.05, a.header.build.clone());
        assert_eq!(same.checks_differ, Some(vec![]));
    }
}
