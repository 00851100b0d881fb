//! The verdict of `ipcmark check BASELINE RUN --max-regression 5%`, a gate
//! for CI: the two runs compared as `ipcmark compare` compares them
//! ([`super::compare::compare`]: figures paired by key, Welch's t on pass
//! medians or Mann–Whitney U on samples, the shift common to all figures),
//! then a figure fails when it is significantly slower by more than the
//! threshold, beyond the common shift where there is one: a machine that is
//! slower today moves every figure, which is the machine, not the change
//! being checked (the shift is reported beside the verdict) — but only
//! within the machine's run-to-run range ([`Gate::max_common_shift`]):
//! a whole run slower by more than that is what a gate is for (a
//! mitigation turned on, a kernel that slows every path), and fails it.
//! A figure the baseline measured that the run failed, skipped or lacks
//! fails it too, unless allowed (a broken mechanism is no pass).

use crate::record::RunRecord;
use crate::record::build::BuildRecord;
use crate::record::check::{CHECK_SCHEMA, CheckFigure, CheckReport, LostFigure, ShiftBound};
use crate::record::compare::{CompareReport, Comparison};
use crate::record::run::Status;
use std::collections::BTreeMap;

/// The common shift left out when neither a flag nor a selftest of the
/// run's host says how far this machine moves from run to run: ±10%,
/// about what the passes of one run differ by on a shared guest.
pub const DEFAULT_MAX_COMMON_SHIFT: f64 = 0.10;

/// What the gate allows besides each figure's own verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The largest slowdown of a figure, a fraction.
    pub max_regression: f64,
    /// The largest |common shift − 1| taken out of the verdicts, and where
    /// that bound comes from (see [`ShiftBound::from`]).
    pub max_common_shift: (f64, String),
    /// A figure the baseline measured may be skipped in the run.
    pub allow_skipped: bool,
    /// A figure the baseline measured may be absent from the run.
    pub allow_missing: bool,
    /// The figures are judged even where the host placed the measured
    /// CPUs differently in the two runs.
    pub allow_placement_change: bool,
}

impl Gate {
    /// The gate with `max_regression` and the defaults otherwise.
    pub fn new(max_regression: f64) -> Gate {
        Gate {
            max_regression,
            max_common_shift: (DEFAULT_MAX_COMMON_SHIFT, "default".into()),
            allow_skipped: false,
            allow_missing: false,
            allow_placement_change: false,
        }
    }
}

/// The figures `a` measured (ok, or below the clock's resolution) that `b`
/// failed, skipped or lacks, in `a`'s order.
fn lost(a: &RunRecord, b: &RunRecord, gate: &Gate) -> Vec<LostFigure> {
    let measured = |s: Status| matches!(s, Status::Ok | Status::BelowResolution);
    let in_b: BTreeMap<_, _> = b.results.iter().map(|f| (f.key(), f)).collect();
    a.results
        .iter()
        .filter(|f| measured(f.status))
        .filter_map(|fa| {
            let key = fa.key();
            let (in_run, reason, allowed) = match in_b.get(&key) {
                None => ("absent", None, gate.allow_missing),
                Some(fb) if measured(fb.status) => return None,
                Some(fb) => (
                    fb.status.name(),
                    fb.reason.clone().or_else(|| fb.error.clone()),
                    fb.status == Status::Skipped && gate.allow_skipped,
                ),
            };
            Some(LostFigure {
                benchmark: key.benchmark.clone(),
                mode: key.mode_label(),
                size_bytes: key.size_bytes,
                in_run: in_run.to_string(),
                reason,
                allowed,
            })
        })
        .collect()
}

fn figure(c: &Comparison, shift: Option<f64>, max_regression: f64) -> CheckFigure {
    let ratio = if c.median_a_ns > 0.0 {
        c.median_b_ns / c.median_a_ns
    } else {
        1.0
    };
    let beyond_shift = shift.map(|f| ratio / f - 1.0);
    // Beyond the shift: its own test with B divided by the factor.
    let (p, significant, change) = match (&c.beyond_shift, beyond_shift) {
        (Some(b), Some(beyond)) => (b.p, b.significant, beyond),
        _ => (c.p, c.significant, ratio - 1.0),
    };
    CheckFigure {
        benchmark: c.benchmark.clone(),
        mode: c.mode.clone(),
        size_bytes: c.size_bytes,
        baseline_ns: c.median_a_ns,
        run_ns: c.median_b_ns,
        change: ratio - 1.0,
        beyond_shift,
        p,
        significant,
        regressed: significant && change > max_regression,
        min_detectable_change: c.min_detectable_change,
    }
}

/// The check of `compared`, the comparison of `a` (the baseline) and `b`
/// (the run), through `gate`.
pub fn check(
    compared: CompareReport,
    a: &RunRecord,
    b: &RunRecord,
    gate: &Gate,
    build: BuildRecord,
) -> CheckReport {
    let (bound, from) = gate.max_common_shift.clone();
    let shift_bound = compared.common_shift.as_ref().map(|s| ShiftBound {
        bound,
        from,
        // Only a significant shift is the run's: one whose interval holds 1
        // is noise, whatever its factor.
        exceeded: s.significant && (s.factor - 1.0).abs() > bound,
    });
    // The placement rule (docs/watch.md): where the host placed the CPUs
    // differently, the figures moved with it, and no verdict of the code can
    // be read from them: the check fails on the placement, and calls no
    // figure a regression and no shift the whole run's, unless allowed.
    let placement = compared.placement.clone();
    let placement_blocks =
        placement.as_ref().is_some_and(|p| p.differ) && !gate.allow_placement_change;
    let exceeded = shift_bound.as_ref().is_some_and(|b| b.exceeded) && !placement_blocks;
    // Beyond its bound the shift is no longer the machine's level: each
    // figure is judged as it moved.
    let shift = match exceeded {
        true => None,
        false => compared.common_shift.as_ref().map(|s| s.factor),
    };
    let figures: Vec<CheckFigure> = compared
        .comparisons
        .iter()
        .map(|c| {
            let mut f = figure(c, shift, gate.max_regression);
            f.regressed &= !placement_blocks;
            f
        })
        .collect();
    let regressions = figures.iter().filter(|f| f.regressed).count();
    let lost = lost(a, b, gate);
    let lost_failing = lost.iter().filter(|l| !l.allowed).count();
    CheckReport {
        schema: CHECK_SCHEMA.into(),
        build,
        baseline: compared.a,
        run: compared.b,
        max_regression: gate.max_regression,
        alpha: compared.alpha,
        common_shift: compared.common_shift,
        figures,
        unmatched: compared.unmatched,
        lost,
        shift_bound,
        placement,
        placement_allowed: gate.allow_placement_change,
        regressions,
        passed: regressions == 0 && lost_failing == 0 && !exceeded && !placement_blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::record::RunRecord;

    fn checked(a: &RunRecord, b: &RunRecord) -> CheckReport {
        gated(a, b, &Gate::new(0.05))
    }

    fn gated(a: &RunRecord, b: &RunRecord, gate: &Gate) -> CheckReport {
        let compared =
            crate::analysis::compare::compare("a", a, "b", b, 0.05, a.header.build.clone());
        check(compared, a, b, gate, a.header.build.clone())
    }

    /// A run of seven figures with distinct keys (enough for a common shift).
    fn seven() -> RunRecord {
        let mut r = fixture("ipc-quick");
        r.results.extend(fixture("op").results);
        r
    }

    #[test]
    fn a_figure_ten_percent_slower_fails_and_an_a_a_pair_passes() {
        let a = fixture("op");
        // syscall-read-tmpfs, whose samples lie within ±3% of their median.
        let b = scaled(&a, |i| if i == 1 { 1.10 } else { 1.0 });
        let c = checked(&a, &b);
        assert!(!c.passed && c.regressions == 1, "{c:?}");
        let f = c.figures.iter().find(|f| f.regressed).unwrap();
        assert_eq!(f.benchmark, "syscall-read-tmpfs");
        assert!((f.change - 0.10).abs() < 1e-9);
        assert!(c.common_shift.is_none(), "three figures: no shift");
        let c = checked(&a, &a);
        assert!(c.passed && c.regressions == 0, "{c:?}");
        // Below the threshold: slower, significant, but allowed.
        let b = scaled(&a, |i| if i == 1 { 1.03 } else { 1.0 });
        let c = checked(&a, &b);
        assert!(c.passed, "{c:?}");
    }

    #[test]
    fn a_machine_slower_all_over_passes_and_a_figure_beyond_it_fails() {
        let a = seven();
        let read_tmpfs = a
            .results
            .iter()
            .position(|f| f.benchmark == "syscall-read-tmpfs")
            .unwrap();
        // A machine whose runs move by up to 25% (a selftest's A/A range).
        let gate = Gate {
            max_common_shift: (0.25, "selftest 1".into()),
            ..Gate::new(0.05)
        };
        let b = scaled(&a, |_| 1.20);
        let c = gated(&a, &b, &gate);
        let shift = c.common_shift.as_ref().unwrap();
        assert!((shift.factor - 1.20).abs() < 1e-9, "{shift:?}");
        assert!(c.passed, "{c:?}");
        assert!(!c.shift_bound.as_ref().unwrap().exceeded);
        let b = scaled(&a, |i| if i == read_tmpfs { 1.32 } else { 1.20 });
        let c = gated(&a, &b, &gate);
        assert_eq!(c.regressions, 1, "{c:?}");
        let f = c.figures.iter().find(|f| f.regressed).unwrap();
        assert_eq!(f.benchmark, "syscall-read-tmpfs");
        assert!((f.beyond_shift.unwrap() - 0.10).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn a_whole_run_slower_beyond_the_machines_range_fails_and_says_so() {
        let a = seven();
        // Every figure 30% slower, on a machine that moves a few percent.
        let b = scaled(&a, |_| 1.30);
        let gate = Gate {
            max_common_shift: (0.04, "selftest 3".into()),
            ..Gate::new(0.05)
        };
        let c = gated(&a, &b, &gate);
        let bound = c.shift_bound.as_ref().unwrap();
        assert!(bound.exceeded && bound.from == "selftest 3", "{bound:?}");
        assert!(!c.passed, "{c:?}");
        // Each figure is then judged as it moved: all of them regressed.
        assert_eq!(c.regressions, c.figures.len(), "{c:?}");
        assert!(c.figures.iter().all(|f| f.beyond_shift.is_none()));
        // The default bound (10%) fails it too; an A/A pair passes.
        assert!(!checked(&a, &b).passed);
        let c = checked(&a, &a);
        assert!(c.passed && c.lost.is_empty(), "{c:?}");
    }

    #[test]
    fn a_figure_the_run_failed_skipped_or_lacks_fails_unless_allowed() {
        let a = fixture("op");
        let mut b = a.clone();
        b.results[0].status = Status::Failed;
        b.results[0].error = Some("the peer died".into());
        let c = checked(&a, &b);
        assert!(!c.passed, "{c:?}");
        assert_eq!(c.lost.len(), 1);
        let l = &c.lost[0];
        assert_eq!(
            (l.benchmark.as_str(), l.in_run.as_str(), l.allowed),
            (a.results[0].benchmark.as_str(), "failed", false)
        );
        assert_eq!(l.reason.as_deref(), Some("the peer died"));
        // A failure is never allowed.
        let lenient = Gate {
            allow_skipped: true,
            allow_missing: true,
            ..Gate::new(0.05)
        };
        assert!(!gated(&a, &b, &lenient).passed);

        let mut b = a.clone();
        b.results[1].status = Status::Skipped;
        b.results[1].reason = Some("no such file".into());
        assert!(!checked(&a, &b).passed);
        let c = gated(
            &a,
            &b,
            &Gate {
                allow_skipped: true,
                ..Gate::new(0.05)
            },
        );
        assert!(c.passed && c.lost[0].allowed, "{c:?}");

        let mut b = a.clone();
        b.results.remove(2);
        let c = checked(&a, &b);
        assert!(!c.passed && c.lost[0].in_run == "absent", "{c:?}");
        let c = gated(
            &a,
            &b,
            &Gate {
                allow_missing: true,
                ..Gate::new(0.05)
            },
        );
        assert!(c.passed, "{c:?}");
    }
}
