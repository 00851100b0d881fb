//! The terminal rendering of `ipcmark selftest`: one row per pair (what it
//! compared, flagged, and the machine's shift), one per figure flagged at
//! least once, then the false-positive rate against α and the verdict the
//! exit code gives.

use crate::output::sanitise;
use crate::output::table::{align_right, format_size, new_table};
use crate::record::selftest::{Rate, SelftestReport};

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

/// The selftest as the terminal shows it.
pub fn render(r: &SelftestReport) -> String {
    let mut out = format!(
        "A/A selftest on {}: {} pair(s) of `ipcmark run {}`, back to back, compared at α = {}\n",
        sanitise::text(&r.host),
        r.pairs_done,
        sanitise::text(&r.suite.join(" ")),
        r.alpha
    );
    let mut t = new_table(vec![
        "pair",
        "runs",
        "compared",
        "flagged",
        "beyond shift",
        "shift ×",
        "shift 95% CI",
    ]);
    for p in &r.pairs {
        let id = |v: Option<i64>| v.map_or("-".into(), |v| v.to_string());
        let (f, ci) = match &p.common_shift {
            Some(s) => (
                format!("{:.3}{}", s.factor, if s.significant { "*" } else { "" }),
                format!("{:.3}–{:.3}", s.interval.low, s.interval.high),
            ),
            None => ("-".into(), "-".into()),
        };
        t.add_row(vec![
            p.pair.to_string(),
            format!("{} {}", id(p.run_a), id(p.run_b)),
            p.compared.to_string(),
            p.flagged.to_string(),
            p.flagged_beyond_shift.to_string(),
            f,
            ci,
        ]);
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
