//! The terminal rendering of `ipcmark selftest`: one row per pair (what it
//! compared, flagged, and the machine's shift), one per figure flagged at
//! least once, then the false-positive rate against α and the verdict the
//! exit code gives; where each pair was judged as `check` judges, whether
//! check failed it and how often (false failures).

use crate::output::sanitise;
use crate::output::table::{align_right, format_size, new_table};
use crate::record::selftest::{CheckFalseFailures, Rate, SelftestReport};
use crate::record::units::percent;

fn rate_text(r: &Rate) -> String {
    match (r.rate, r.interval) {
        (Some(v), Some(i)) => format!(
            "{} of {} = {:.1}% (95% CI {:.1}–{:.1}%)",
            r.flagged,
            r.compared,
            v * 100.0,
            i.low * 100.0,
            i.high * 100.0
        ),
        _ => "nothing compared".into(),
    }
}

/// How often `check` failed an A/A pair, as the page says it.
fn check_line(c: &CheckFalseFailures) -> String {
    let rate = match (c.rate, c.interval) {
        (Some(v), Some(i)) => format!(
            "{} of {} pairs = {:.1}% (95% CI {:.1}–{:.1}%)",
            c.failed,
            c.pairs,
            v * 100.0,
            i.low * 100.0,
            i.high * 100.0
        ),
        _ => "no pair judged".into(),
    };
    format!(
        "false failures of `check --max-regression {}%` (common shift left out up to ±{}%, {}): \
         {rate}\n",
        percent(c.max_regression),
        percent(c.max_common_shift),
        sanitise::text(&c.max_common_shift_from)
    )
}

/// The selftest as the terminal shows it.
pub fn render(r: &SelftestReport) -> String {
    let mut out = format!(
        "A/A selftest on {}: {} pair(s) of `ipcmark run {}`, back to back, compared at α = {}\n",
        sanitise::text(&r.host),
        r.pairs_done,
        sanitise::text(&r.suite.join(" ")),
        r.alpha
    );
    let judged = r.pairs.iter().any(|p| p.check_failed.is_some());
    let mut header = vec![
        "pair",
        "runs",
        "compared",
        "flagged",
        "beyond shift",
        "shift ×",
        "shift 95% CI",
    ];
    if judged {
        header.push("check");
    }
    let mut t = new_table(header);
    for p in &r.pairs {
        let id = |v: Option<i64>| v.map_or("-".into(), |v| v.to_string());
        let (f, ci) = match &p.common_shift {
            Some(s) => (
                format!("{:.3}{}", s.factor, if s.significant { "*" } else { "" }),
                format!("{:.3}–{:.3}", s.interval.low, s.interval.high),
            ),
            None => ("-".into(), "-".into()),
        };
        let mut row = vec![
            p.pair.to_string(),
            format!("{} {}", id(p.run_a), id(p.run_b)),
            p.compared.to_string(),
            p.flagged.to_string(),
            p.flagged_beyond_shift.to_string(),
            f,
            ci,
        ];
        if judged {
            row.push(
                match p.check_failed {
                    Some(true) => "FAIL",
                    Some(false) => "pass",
                    None => "-",
                }
                .into(),
            );
        }
        t.add_row(row);
    }
    align_right(&mut t, 0..7);
    out.push_str(&format!("{t}\n"));
    if r.pairs.iter().any(|p| p.common_shift.is_some()) {
        out.push_str("* the shift is significant (its interval excludes 1)\n");
    }
    let flagged: Vec<_> = r
        .figures
        .iter()
        .filter(|f| f.flagged > 0 || f.flagged_beyond_shift > 0)
        .collect();
    if !flagged.is_empty() {
        let mut t = new_table(vec![
            "figure flagged",
            "mode",
            "size",
            "flagged",
            "beyond shift",
            "median MDC %",
        ]);
        for f in flagged {
            t.add_row(vec![
                sanitise::text(&f.benchmark).into_owned(),
                sanitise::text(&f.mode).into_owned(),
                format_size(f.size_bytes),
                format!("{} of {}", f.flagged, f.compared),
                format!("{} of {}", f.flagged_beyond_shift, f.compared),
                f.median_min_detectable_change
                    .map_or("-".into(), |m| format!("{:.1}", m * 100.0)),
            ]);
        }
        align_right(&mut t, 3..6);
        out.push_str(&format!("{t}\n"));
    }
    if let Some(s) = &r.shift {
        out.push_str(&format!(
            "machine's run-to-run shift: median ×{:.3}, typically {:.1}% from one run to the next, \
             ×{:.3} to ×{:.3}; significant in {} of {} pairs\n",
            s.median,
            s.median_abs_change * 100.0,
            s.low,
            s.high,
            s.significant,
            s.pairs
        ));
    }
    out.push_str(&format!(
        "figures flagged beyond each pair's shift (as check judges): {}\n",
        rate_text(&r.false_positives_beyond_shift)
    ));
    if let Some(c) = &r.check_false_failures {
        out.push_str(&check_line(c));
    }
    if let Some(why) = &r.stopped {
        out.push_str(&format!(
            "stopped after {} of {} pairs: {}\n",
            r.pairs_done,
            r.pairs_asked,
            sanitise::text(why)
        ));
    }
    out.push_str(&format!(
        "false-positive rate of compare's test: {} against α = {:.0}%: {}\n",
        rate_text(&r.false_positives),
        r.alpha * 100.0,
        match (r.passed, r.false_positives.rate) {
            (true, _) => format!("PASS (at most α + 2 points = {:.0}%)", r.limit * 100.0),
            (false, Some(_)) => format!(
                "FAIL (over α + 2 points = {:.0}%): this machine moves figures between runs \
                 by more than their intervals say; compare back-to-back runs with more --passes, \
                 or on a quieter machine",
                r.limit * 100.0
            ),
            (false, None) => "FAIL (no pair was compared)".into(),
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::compare::IntervalRecord;
    use crate::record::selftest::{SelftestPair, ShiftSpread};

    fn report() -> SelftestReport {
        let pair = |n: usize, failed: Option<bool>| SelftestPair {
            pair: n,
            run_a: Some(2 * n as i64 - 1),
            run_b: Some(2 * n as i64),
            compared: 13,
            flagged: 1,
            flagged_beyond_shift: 0,
            common_shift: None,
            check_failed: failed,
        };
        let rate = Rate {
            flagged: 2,
            compared: 26,
            rate: Some(2.0 / 26.0),
            interval: Some(IntervalRecord {
                low: 0.02,
                high: 0.24,
            }),
        };
        SelftestReport {
            schema: "ipcmark.selftest/1".into(),
            build: crate::record::build::BuildRecord {
                version: "0".into(),
                commit: "unknown".into(),
                dirty: None,
                features: vec![],
            },
            host: "h".into(),
            started_at: "t0".into(),
            finished_at: "t1".into(),
            suite: vec!["pipe".into()],
            alpha: 0.05,
            limit: 0.07,
            pairs_asked: 2,
            pairs_done: 2,
            stopped: None,
            pairs: vec![pair(1, Some(false)), pair(2, Some(true))],
            figures: vec![],
            false_positives: rate.clone(),
            false_positives_beyond_shift: rate,
            shift: None::<ShiftSpread>,
            check_false_failures: Some(CheckFalseFailures {
                max_regression: 0.05,
                max_common_shift: 0.1,
                max_common_shift_from: "default".into(),
                pairs: 2,
                failed: 1,
                rate: Some(0.5),
                interval: Some(IntervalRecord {
                    low: 0.095,
                    high: 0.905,
                }),
            }),
            passed: false,
        }
    }

    #[test]
    fn each_pairs_check_and_the_false_failure_rate_are_shown() {
        let page = render(&report());
        assert!(page.contains("check"), "{page}");
        let rows: Vec<&str> = page
            .lines()
            .filter(|l| l.starts_with('│') && (l.contains(" pass ") || l.contains(" FAIL ")))
            .collect();
        assert_eq!(rows.len(), 2, "{page}");
        assert!(rows[1].contains("FAIL"), "{page}");
        assert!(
            page.contains(
                "false failures of `check --max-regression 5%` (common shift left out up to \
                 ±10%, default): 1 of 2 pairs = 50.0% (95% CI 9.5–90.5%)"
            ),
            "{page}"
        );
        // A selftest from before check judged its pairs shows neither.
        let mut old = report();
        old.check_false_failures = None;
        old.pairs.iter_mut().for_each(|p| p.check_failed = None);
        let page = render(&old);
        assert!(!page.contains("check --max"), "{page}");
        assert!(!page.contains(" pass "), "{page}");
    }
}
