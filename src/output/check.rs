//! The terminal rendering of `ipcmark check`: one row per figure, the
//! common shift, and the verdict the exit code gives.

use crate::output::sanitise;
use crate::output::table::{align_right, format_size, new_table};
use crate::record::check::CheckReport;
use crate::record::units::percent;

/// The check as the terminal shows it.
pub fn render(r: &CheckReport) -> String {
    let shift = r.common_shift.as_ref();
    let mut header = vec!["benchmark", "mode", "size", "baseline µs", "run µs", "Δ %"];
    if shift.is_some() {
        header.push("beyond shift %");
    }
    header.extend(["MDC %", "p", "verdict"]);
    let mut t = new_table(header);
    for f in &r.figures {
        let mut row = vec![
            sanitise::text(&f.benchmark).into_owned(),
            sanitise::text(&f.mode).into_owned(),
            format_size(f.size_bytes),
            format!("{:.2}", f.baseline_ns / 1e3),
            format!("{:.2}", f.run_ns / 1e3),
            format!("{:+.1}", f.change * 100.0),
        ];
        if shift.is_some() {
            row.push(
                f.beyond_shift
                    .map_or("-".into(), |b| format!("{:+.1}", b * 100.0)),
            );
        }
        let change = f.beyond_shift.unwrap_or(f.change);
        let verdict = match (f.regressed, f.significant, change > 0.0) {
            (true, ..) => "REGRESSED",
            (false, true, true) => "slower, within the threshold",
            (false, true, false) => "faster",
            (false, false, _) => "n.s.",
        };
        row.extend([
            f.min_detectable_change
                .map_or("-".into(), |m| format!("{:.1}", m * 100.0)),
            format!("{:.3}", f.p),
            verdict.to_string(),
        ]);
        t.add_row(row);
    }
    let last = if shift.is_some() { 8 } else { 7 };
    align_right(&mut t, 3..last + 1);
    let mut out = format!(
        "baseline: {} ({}, {}, Linux {})\nrun:      {} ({}, {}, Linux {})\n{t}\n",
        sanitise::text(&r.baseline.path),
        sanitise::text(&r.baseline.started_at),
        sanitise::text(&r.baseline.hostname),
        sanitise::text(&r.baseline.kernel),
        sanitise::text(&r.run.path),
        sanitise::text(&r.run.started_at),
        sanitise::text(&r.run.hostname),
        sanitise::text(&r.run.kernel),
    );
    if r.baseline.hostname != r.run.hostname {
        out.push_str(
            "the baseline and the run were measured on different hosts: a difference may be the machine's\n",
        );
    }
    match (shift, &r.shift_bound) {
        (Some(s), Some(b)) if b.exceeded => out.push_str(&format!(
            "common shift of all {} figures: ×{:.3} (95% CI {:.3}–{:.3}, significant), beyond this \
             machine's run-to-run range of ±{}% ({}): the whole run moved, so each figure is \
             judged as it moved\n",
            s.results,
            s.factor,
            s.interval.low,
            s.interval.high,
            percent(b.bound),
            sanitise::text(&b.from)
        )),
        (Some(s), Some(b)) => out.push_str(&format!(
            "common shift of all {} figures: ×{:.3} (95% CI {:.3}–{:.3}, {}), within this machine's \
             run-to-run range of ±{}% ({}): left out of the verdicts\n",
            s.results,
            s.factor,
            s.interval.low,
            s.interval.high,
            if s.significant { "significant" } else { "not significant" },
            percent(b.bound),
            sanitise::text(&b.from)
        )),
        (Some(s), None) => out.push_str(&format!(
            "common shift of all {} figures: ×{:.3} (95% CI {:.3}–{:.3}, {}), left out of the verdicts\n",
            s.results,
            s.factor,
            s.interval.low,
            s.interval.high,
            if s.significant { "significant" } else { "not significant" }
        )),
        (None, _) => out.push_str(
            "no common shift (fewer than five figures): each figure is judged as it moved\n",
        ),
    }
    for l in &r.lost {
        out.push_str(&format!(
            "{}: {} {} {} was measured in the baseline, {} in the run{}{}\n",
            if l.allowed { "allowed" } else { "LOST" },
            sanitise::text(&l.benchmark),
            sanitise::text(&l.mode),
            format_size(l.size_bytes),
            sanitise::text(&l.in_run),
            l.reason
                .as_deref()
                .map_or(String::new(), |why| format!(" ({})", sanitise::text(why))),
            match (l.allowed, l.in_run.as_str()) {
                (true, "absent") => " (--allow-missing)",
                (true, _) => " (--allow-skipped)",
                (false, "skipped") => ": give --allow-skipped to accept it",
                (false, "absent") => ": give --allow-missing to accept it",
                _ => "",
            }
        ));
    }
    // A figure the baseline measured and the run lost is said above.
    let said = |u: &&crate::record::compare::Unmatched| {
        r.lost
            .iter()
            .any(|l| l.benchmark == u.benchmark && l.mode == u.mode && l.size_bytes == u.size_bytes)
    };
    for u in r.unmatched.iter().filter(|u| !said(u)) {
        out.push_str(&format!(
            "not checked: {} {} {}: {}\n",
            sanitise::text(&u.benchmark),
            sanitise::text(&u.mode),
            format_size(u.size_bytes),
            sanitise::text(&u.why)
        ));
    }
    let blind = r
        .figures
        .iter()
        .filter(|f| {
            f.min_detectable_change
                .is_some_and(|m| m > r.max_regression)
        })
        .count();
    if blind > 0 {
        out.push_str(&format!(
            "{blind} of {} figures could not have seen a slowdown of {}% (MDC %: the smallest \
             change its test finds 4 times in 5 at α = {}): more --passes on both sides narrow it\n",
            r.figures.len(),
            percent(r.max_regression),
            r.alpha
        ));
    }
    let placed = r.placement.as_ref().filter(|p| p.differ);
    if let Some(line) = placed.and_then(crate::output::compare::table::placement_line) {
        out.push_str(&line);
        out.push_str(if r.placement_allowed {
            "; judged as they moved (--allow-placement-change)\n"
        } else {
            "; no figure is judged a regression of the code: rerun RUN in BASELINE's placement, \
             or give --allow-placement-change\n"
        });
    }
    let placement_failed = placed.is_some() && !r.placement_allowed;
    let lost = r.lost.iter().filter(|l| !l.allowed).count();
    let moved = r.shift_bound.as_ref().is_some_and(|b| b.exceeded);
    out.push_str(&match r.passed {
        true => format!(
            "check passed: no figure of {} is significantly slower by more than {}% (α = {})\n",
            r.figures.len(),
            percent(r.max_regression),
            r.alpha
        ),
        false if placement_failed => format!(
            "check FAILED: the host placed the measured CPUs differently in the two runs{}\n",
            if lost > 0 {
                format!("; {lost} figure(s) of the baseline lost in the run")
            } else {
                String::new()
            }
        ),
        false => {
            let mut why = vec![format!(
                "{} of {} figures significantly slower by more than {}% (α = {})",
                r.regressions,
                r.figures.len(),
                percent(r.max_regression),
                r.alpha
            )];
            if lost > 0 {
                why.push(format!("{lost} figure(s) of the baseline lost in the run"));
            }
            if moved {
                why.push("the whole run moved beyond the machine's range".into());
            }
            format!("check FAILED: {}\n", why.join("; "))
        }
    });
    out
}
