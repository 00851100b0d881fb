//! A check's verdicts in words, one line each, as JUnit's failures and
//! GitHub's annotations say them: each figure that fails the check, and
//! what of the whole run fails it or is worth a warning. Every string from
//! a report is made safe here ([`sanitise::text`]).

use crate::output::sanitise;
use crate::record::check::{CheckFigure, CheckReport, LostFigure};
use crate::record::compare::{Comparison, Unmatched};
use crate::record::units::percent;

/// A p value as the verdicts print it.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// Why `f` fails the check (it regressed).
pub fn regressed(f: &CheckFigure, r: &CheckReport) -> String {
    let (change, beyond) = match f.beyond_shift {
        Some(b) => (b, " beyond the machine's common shift"),
        None => (f.change, ""),
    };
    format!(
        "{:.1}% slower than the baseline{beyond} ({}; over --max-regression {}%): \
         {:.2} µs → {:.2} µs",
        change * 100.0,
        p_text(f.p),
        percent(r.max_regression),
        f.baseline_ns / 1e3,
        f.run_ns / 1e3,
    )
}

/// What became of a figure the baseline measured and the run did not.
pub fn lost(l: &LostFigure) -> String {
    let why = l
        .reason
        .as_deref()
        .map_or(String::new(), |r| format!(": {}", sanitise::text(r)));
    let allowed = match (l.allowed, l.in_run.as_str()) {
        (true, "absent") => " (allowed by --allow-missing)",
        (true, _) => " (allowed by --allow-skipped)",
        (false, _) => "",
    };
    format!(
        "measured in the baseline, {} in the run{allowed}{why}",
        sanitise::text(&l.in_run)
    )
}

/// Whether `u` is a figure the check already names as lost.
pub fn is_lost(u: &Unmatched, r: &CheckReport) -> bool {
    r.lost
        .iter()
        .any(|l| l.benchmark == u.benchmark && l.mode == u.mode && l.size_bytes == u.size_bytes)
}

/// The whole run moved beyond the machine's range: why the check fails on it.
pub fn run_moved(r: &CheckReport) -> Option<String> {
    let (s, b) = (r.common_shift.as_ref()?, r.shift_bound.as_ref()?);
    b.exceeded.then(|| {
        format!(
            "every figure moved together by ×{:.3} (95% CI {:.3}–{:.3}), beyond this machine's \
             run-to-run range of ±{}% ({}): the whole run moved, so each figure is judged as it moved",
            s.factor,
            s.interval.low,
            s.interval.high,
            percent(b.bound),
            sanitise::text(&b.from)
        )
    })
}

/// A significant common shift within the machine's range: left out of the
/// verdicts, worth a warning.
pub fn shift_within(r: &CheckReport) -> Option<String> {
    let (s, b) = (r.common_shift.as_ref()?, r.shift_bound.as_ref()?);
    (s.significant && !b.exceeded).then(|| {
        format!(
            "every figure moved together by ×{:.3} (95% CI {:.3}–{:.3}), within this machine's \
             run-to-run range of ±{}% ({}): left out of the verdicts",
            s.factor,
            s.interval.low,
            s.interval.high,
            percent(b.bound),
            sanitise::text(&b.from)
        )
    })
}

/// The host placed the CPUs differently; with whether that fails the check.
pub fn placement(r: &CheckReport) -> Option<(String, bool)> {
    let p = r.placement.as_ref().filter(|p| p.differ)?;
    let line = crate::output::compare::table::placement_line(p)?;
    Some(match r.placement_allowed {
        true => (
            format!("{line}; judged as they moved (--allow-placement-change)"),
            false,
        ),
        false => (
            format!(
                "{line}; no figure is judged a regression of the code: rerun RUN in \
                 BASELINE's placement, or give --allow-placement-change"
            ),
            true,
        ),
    })
}

/// The baseline and the run come from different hosts.
pub fn other_host(r: &CheckReport) -> Option<String> {
    (r.baseline.hostname != r.run.hostname).then(|| {
        format!(
            "the baseline was measured on {} and the run on {}: a difference may be the machine's",
            sanitise::text(&r.baseline.hostname),
            sanitise::text(&r.run.hostname)
        )
    })
}

/// Whether compare calls `c` slower: significantly, beyond the common
/// shift where there is one.
pub fn compare_slower(c: &Comparison) -> bool {
    match &c.beyond_shift {
        Some(b) => b.significant && b.verdict == "slower",
        None => c.significant && c.verdict == "slower",
    }
}

/// Why compare calls `c` slower.
pub fn compare_slower_text(c: &Comparison) -> String {
    let (p, beyond) = match &c.beyond_shift {
        Some(b) => (b.p, " beyond the common shift"),
        None => (c.p, ""),
    };
    format!(
        "{:+.1}% ({:.2} µs → {:.2} µs), significantly slower{beyond} ({})",
        c.diff_percent,
        c.median_a_ns / 1e3,
        c.median_b_ns / 1e3,
        p_text(p)
    )
}
