//! The terminal rendering of a comparison: one row per compared result, then
//! the method, the common shift and what was not compared.

use crate::output::sanitise;
use crate::output::table::format_size;
use crate::record::compare::{CompareReport, PartsMoved, Test};
use comfy_table::{CellAlignment, ColumnConstraint};

/// The comparison as the terminal shows it.
pub fn render(r: &CompareReport) -> String {
    let mut header = vec![
        "benchmark",
        "size",
        "A µs",
        "B µs",
        "Δ %",
        "p",
        "B/A 95% CI",
        "MDC %",
        "verdict",
    ];
    if r.common_shift.is_some() {
        header.push("beyond shift");
    }
    let mut t = crate::output::table::new_table(header);
    for c in &r.comparisons {
        let ci = c
            .ratio_interval
            .map_or("-".to_string(), |i| format!("{:.3}–{:.3}", i.low, i.high));
        // Where the two methods disagree, say so: the difference is borderline.
        let verdict = match (
            c.verdict.as_str(),
            c.interval_excludes_one == Some(c.significant),
        ) {
            ("no significant difference", true) => "n.s.".to_string(),
            ("no significant difference", false) => "n.s. (interval excludes 1)".to_string(),
            (v, true) => v.to_string(),
            (v, false) => format!("{v} (interval includes 1)"),
        };
        // How it was timed, where that tells two figures of one size apart
        // (`vm-copy (cold)`, `posix-mq (saturated)`).
        let name = match c.mode.split_once(" (") {
            Some((_, how)) => format!("{} ({how}", c.benchmark),
            None => c.benchmark.clone(),
        };
        let mut row = vec![
            name,
            format_size(c.size_bytes),
            format!("{:.2}", c.median_a_ns / 1e3),
            format!("{:.2}", c.median_b_ns / 1e3),
            format!("{:+.1}", c.diff_percent),
            format!("{:.3}", c.p),
            ci,
            c.min_detectable_change.map_or("-".to_string(), mdc_cell),
            verdict,
        ];
        if r.common_shift.is_some() {
            row.push(
                c.beyond_shift
                    .as_ref()
                    .map_or("-", |b| match b.verdict.as_str() {
                        "no significant difference" => "n.s.",
                        v => v,
                    })
                    .to_string(),
            );
        }
        t.add_row(row);
    }
    // The names whole: the other columns wrap first.
    if let Some(c) = t.column_mut(0) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
    for col in 1..8 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let significant = r.comparisons.iter().filter(|c| c.significant).count();
    let with_passes = r
        .comparisons
        .iter()
        .filter(|c| c.test == Test::WelchPasses)
        .count();
    let method = match (with_passes, r.comparisons.len()) {
        (w, n) if w == n => "Welch's t on the pass medians".to_string(),
        (0, _) => "Mann–Whitney U on the samples".to_string(),
        (w, n) => format!(
            "Welch's t on the pass medians for {w}, Mann–Whitney U on the samples for {}",
            n - w
        ),
    };
    let mut out = format!(
        "A: {} ({}, {}, Linux {})\nB: {} ({}, {}, Linux {})\n{t}\n{} of {} results differ significantly ({method}, α = {}; n.s. = not significant; with no change at all about {:.0} would, by chance); Δ and the interval are B relative to A\n",
        r.a.path,
        r.a.started_at,
        r.a.hostname,
        r.a.kernel,
        r.b.path,
        r.b.started_at,
        r.b.hostname,
        r.b.kernel,
        significant,
        r.comparisons.len(),
        r.alpha,
        r.alpha * r.comparisons.len() as f64
    );
    let mut mdc: Vec<f64> = r
        .comparisons
        .iter()
        .filter_map(|c| c.min_detectable_change)
        .collect();
    if !mdc.is_empty() {
        mdc.sort_by(f64::total_cmp);
        out.push_str(&format!(
            "MDC % = the smallest change each test would have found 4 times in 5 (80% power at \
             α = {}), from the spread that result showed ({:.1}–{:.1}%, median {:.1}%): a smaller \
             change can pass unseen{}\n",
            r.alpha,
            mdc[0] * 100.0,
            mdc[mdc.len() - 1] * 100.0,
            crate::stats::median(&mdc) * 100.0,
            if with_passes < r.comparisons.len() {
                "; on samples alone, a normal approximation on their logs"
            } else {
                ""
            }
        ));
    }
    if with_passes < r.comparisons.len() {
        out.push_str(
            "without passes on both sides a test sees only the samples of each run, not how \
             much a run's level moves between runs: measure both with --passes 2 or more \
             (the default is 5)\n",
        );
    }
    if let Some(sh) = &r.common_shift {
        let beyond = r
            .comparisons
            .iter()
            .filter(|c| c.beyond_shift.as_ref().is_some_and(|b| b.significant))
            .count();
        out.push_str(&format!(
            "all {} results together: B/A {:.3} ({:+.1}%, 95% CI {:.3}–{:.3}, {}): a change of the \
             machine's speed between the runs moves every result so, as does a change that touches \
             every mechanism; {} of {} differ beyond it\n",
            sh.results,
            sh.factor,
            (sh.factor - 1.0) * 100.0,
            sh.interval.low,
            sh.interval.high,
            if sh.significant {
                "significant"
            } else {
                "not significant"
            },
            beyond,
            r.comparisons.len()
        ));
    }
    if let Some(line) = machine_line(r) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(line) = r.placement.as_ref().and_then(placement_line) {
        out.push_str(&line);
        out.push('\n');
    }
    for c in &r.comparisons {
        if let Some(m) = &c.parts {
            out.push_str(&parts_moved(&c.benchmark, c.size_bytes, &c.mode, m));
        }
    }
    for u in &r.unmatched {
        out.push_str(&format!(
            "not compared: {} {} {}: {}\n",
            u.benchmark,
            u.mode,
            format_size(u.size_bytes),
            u.why
        ));
    }
    out
}

/// What the comparison says of the machine, on one line: the checks that
/// differ between the runs, and the common shift as the machine's level
/// ("machine: −4.2% between the runs (common to all figures)") unless a
/// differing check may explain it, which is then named; `None` where
/// neither applies.
pub fn machine_line(r: &CompareReport) -> Option<String> {
    let differ: Vec<String> = r
        .checks_differ
        .iter()
        .flatten()
        .map(|d| format!("{} {}", sanitise::text(&d.id), sanitise::text(&d.change)))
        .collect();
    // What may explain a shift: the checks, and the placement (whose own
    // line follows).
    let mut explains = differ.clone();
    if let Some(p) = r.placement.as_ref().filter(|p| p.differ) {
        explains.push(format!(
            "placement {:.0} → {:.0} ns",
            p.round_trip_a_ns, p.round_trip_b_ns
        ));
    }
    let shift = r.common_shift.as_ref().map(|sh| {
        let pct = format!("{:+.1}%", (sh.factor - 1.0) * 100.0).replace('-', "−");
        let within = if sh.significant {
            ""
        } else {
            "; not significant"
        };
        if sh.explained_by.is_empty() {
            format!("machine: {pct} between the runs (common to all figures{within})")
        } else {
            format!(
                "common shift {pct} between the runs{within}, where the machine's checks differ: \
                 {}",
                explains.join(", ")
            )
        }
    });
    match (shift, differ.is_empty()) {
        (Some(s), _) => Some(s),
        (None, false) => Some(format!(
            "the machine's checks differ between the runs: {}",
            differ.join(", ")
        )),
        (None, true) => None,
    }
}

/// Where the host placed the measured CPUs differently in the two runs,
/// one line that says so and what follows from it; `None` where it did not.
pub fn placement_line(p: &crate::record::compare::PlacementDifference) -> Option<String> {
    if !p.differ {
        return None;
    }
    let cpus = |c: [usize; 2]| format!("{} and {}", c[0], c[1]);
    let (a, b) = (cpus(p.cpus_a), cpus(p.cpus_b));
    let which = if a == b {
        format!("CPUs {a}")
    } else {
        format!("CPUs {a} (A) and {b} (B)")
    };
    Some(format!(
        "placement: the host placed {which} differently: cache-line round trip {:.0} → {:.0} ns \
         ({} → {}); every figure that moves data between the CPUs follows it, so a difference \
         may be the placement's, not the code's (docs/trust.md)",
        p.round_trip_a_ns,
        p.round_trip_b_ns,
        sanitise::text(&p.class_a),
        sanitise::text(&p.class_b)
    ))
}

/// What an explained figure of `mode` divides, as (its name, the figure's
/// name): a timer's wake-up latency (mode periodic, no size) or a round
/// trip.
fn anatomy_words(benchmark: &str, size: usize, mode: &str) -> (&'static str, String) {
    if mode == "periodic" {
        ("wake-up latency", benchmark.to_string())
    } else {
        ("round trip", format!("{benchmark} {}", format_size(size)))
    }
}

/// Where an explained figure's round trip (or wake-up latency) moved: each
/// part's mean per round trip in A and B, the change and its share of the
/// round trip's change, and the part that moved most.
pub fn parts_moved(benchmark: &str, size: usize, mode: &str, m: &PartsMoved) -> String {
    let (whole_word, figure) = anatomy_words(benchmark, size, mode);
    let name_w = m
        .parts
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(whole_word.len());
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:+.1}%", 100.0 * v));
    let mut out = format!(
        "\n{} — where the {whole_word} moved (both runs explained; traced means per {})\n",
        sanitise::text(&figure),
        if mode == "periodic" {
            "wake-up"
        } else {
            "round trip"
        }
    );
    out.push_str(&format!(
        "  {:<name_w$}  {:>10}  {:>10}  {:>10}  {:>10}\n",
        "part", "A ns", "B ns", "Δ ns", "share of Δ"
    ));
    for p in &m.parts {
        out.push_str(&format!(
            "  {:<name_w$}  {:>10.0}  {:>10.0}  {:>+10.0}  {:>10}\n",
            sanitise::text(&p.name),
            p.mean_a_ns,
            p.mean_b_ns,
            p.change_ns,
            pct(p.share_of_change)
        ));
    }
    let whole = m.round_trip_b_ns - m.round_trip_a_ns;
    out.push_str(&format!(
        "  {:<name_w$}  {:>10.0}  {:>10.0}  {:>+10.0}\n",
        whole_word, m.round_trip_a_ns, m.round_trip_b_ns, whole
    ));
    match m
        .moved_most
        .as_deref()
        .and_then(|n| m.parts.iter().find(|p| p.name == n))
    {
        Some(p) => out.push_str(&format!(
            "  moved most: {} ({:+.0} ns{})\n",
            sanitise::text(&p.name),
            p.change_ns,
            p.share_of_change.map_or(String::new(), |s| format!(
                ", {:.0}% of the {whole_word}'s change",
                100.0 * s
            ))
        )),
        None => out.push_str("  no part moved\n"),
    }
    out
}

/// A minimum detectable change (a fraction) as the table's percent: one
/// decimal under 100%, whole percents above (a figure that blind needs no more).
fn mdc_cell(m: f64) -> String {
    let pct = m * 100.0;
    if pct < 100.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::compare::{CheckDifference, CommonShift, IntervalRecord};
    use crate::record::doctor::CheckStatus;

    fn report(
        factor: f64,
        significant: bool,
        differ: Option<Vec<CheckDifference>>,
    ) -> CompareReport {
        let run =
            crate::record::RunRecord::parse(include_str!("../../../tests/reports/passes.json"))
                .unwrap();
        let mut r =
            crate::analysis::compare::compare("a", &run, "b", &run, 0.05, run.header.build.clone());
        r.common_shift = Some(CommonShift {
            factor,
            interval: IntervalRecord {
                low: factor - 0.01,
                high: factor + 0.01,
            },
            significant,
            results: 7,
            explained_by: differ.iter().flatten().map(|d| d.id.clone()).collect(),
        });
        r.checks_differ = differ;
        r
    }

    #[test]
    fn the_shift_is_the_machines_unless_a_check_differs() {
        let r = report(0.958, true, Some(vec![]));
        assert_eq!(
            machine_line(&r).unwrap(),
            "machine: −4.2% between the runs (common to all figures)"
        );
        let r = report(1.003, false, None);
        assert_eq!(
            machine_line(&r).unwrap(),
            "machine: +0.3% between the runs (common to all figures; not significant)"
        );
        let governor = CheckDifference {
            id: "cpu-governor".into(),
            status_a: Some(CheckStatus::Pass),
            status_b: Some(CheckStatus::Warn),
            change: "pass → warn".into(),
        };
        let r = report(0.958, true, Some(vec![governor.clone()]));
        let line = machine_line(&r).unwrap();
        assert_eq!(
            line,
            "common shift −4.2% between the runs, where the machine's checks differ: \
             cpu-governor pass → warn"
        );
        let mut r = report(1.0, false, Some(vec![governor]));
        r.common_shift = None;
        assert!(
            machine_line(&r)
                .unwrap()
                .starts_with("the machine's checks differ")
        );
        r.checks_differ = Some(vec![]);
        assert_eq!(machine_line(&r), None);
    }

    #[test]
    fn a_timers_parts_moved_are_a_wake_up_latencys_and_a_ping_pongs_a_round_trips() {
        let m = PartsMoved {
            round_trip_a_ns: 40000.0,
            round_trip_b_ns: 50000.0,
            parts: vec![crate::record::compare::PartMove {
                name: "timer irq: delay".into(),
                mean_a_ns: 20000.0,
                mean_b_ns: 30000.0,
                change_ns: 10000.0,
                share_of_change: Some(1.0),
            }],
            moved_most: Some("timer irq: delay".into()),
        };
        let timer = parts_moved("timer-latency", 0, "periodic", &m);
        assert!(
            timer.contains("timer-latency — where the wake-up latency moved"),
            "{timer}"
        );
        assert!(
            timer.contains("100% of the wake-up latency's change"),
            "{timer}"
        );
        assert!(!timer.contains("round trip"), "{timer}");
        let pipe = parts_moved("pipe", 64, "pingpong", &m);
        assert!(pipe.contains("— where the round trip moved"), "{pipe}");
        assert!(pipe.contains("pipe 64"), "{pipe}");
    }
}
