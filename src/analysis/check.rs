//! The verdict of `ipcmark check BASELINE RUN --max-regression 5%`, a gate
//! for CI: the two runs compared as `ipcmark compare` compares them
//! ([`super::compare::compare`]: figures paired by key, Welch's t on pass
//! medians or Mann–Whitney U on samples, the shift common to all figures),
//! then a figure fails when it is significantly slower by more than the
//! threshold, beyond the common shift where there is one: a machine that is
//! slower today moves every figure, which is the machine, not the change
//! being checked (the shift is reported beside the verdict).

use crate::record::build::BuildRecord;
use crate::record::check::{CHECK_SCHEMA, CheckFigure, CheckReport};
use crate::record::compare::{CompareReport, Comparison};

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

/// The check of `compared` (A the baseline, B the run) against a largest
/// slowdown of `max_regression` (a fraction).
pub fn check(compared: CompareReport, max_regression: f64, build: BuildRecord) -> CheckReport {
    let shift = compared.common_shift.as_ref().map(|s| s.factor);
    let figures: Vec<CheckFigure> = compared
        .comparisons
        .iter()
        .map(|c| figure(c, shift, max_regression))
        .collect();
    let regressions = figures.iter().filter(|f| f.regressed).count();
    CheckReport {
        schema: CHECK_SCHEMA.into(),
        build,
        baseline: compared.a,
        run: compared.b,
        max_regression,
        alpha: compared.alpha,
        common_shift: compared.common_shift,
        figures,
        unmatched: compared.unmatched,
        regressions,
        passed: regressions == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::record::RunRecord;

    fn checked(a: &RunRecord, b: &RunRecord) -> CheckReport {
        let compared =
            crate::analysis::compare::compare("a", a, "b", b, 0.05, a.header.build.clone());
        check(compared, 0.05, a.header.build.clone())
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
        let b = scaled(&a, |_| 1.20);
        let c = checked(&a, &b);
        let shift = c.common_shift.as_ref().unwrap();
        assert!((shift.factor - 1.20).abs() < 1e-9, "{shift:?}");
        assert!(c.passed, "{c:?}");
        let b = scaled(&a, |i| if i == read_tmpfs { 1.32 } else { 1.20 });
        let c = checked(&a, &b);
        assert_eq!(c.regressions, 1, "{c:?}");
        let f = c.figures.iter().find(|f| f.regressed).unwrap();
        assert_eq!(f.benchmark, "syscall-read-tmpfs");
        assert!((f.beyond_shift.unwrap() - 0.10).abs() < 1e-9, "{f:?}");
    }
}
