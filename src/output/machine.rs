//! What a run's page says of the machine it ran on, from the record: its
//! checks on one line (those that did not pass named, and those whose
//! verdict changed from pass to pass), the machine's level during the run
//! on one line, and with `--long` every check and every pass's.

use crate::analysis::level::half_width;
use crate::output::doctor::{cost_text, status_name, table};
use crate::output::sanitise;
use crate::output::table::cells::{PAGE_WIDTH, wrap};
use crate::record::RunRecord;
use crate::record::doctor::{CheckRecord, CheckStatus};
use crate::record::units::percent;

/// Statuses in the order the line counts them, with their words.
const COUNTED: [(CheckStatus, &str); 5] = [
    (CheckStatus::Pass, "pass"),
    (CheckStatus::Info, "info"),
    (CheckStatus::Warn, "warn"),
    (CheckStatus::Fail, "fail"),
    (CheckStatus::Skip, "skipped"),
];

fn flagged(s: CheckStatus) -> bool {
    matches!(s, CheckStatus::Warn | CheckStatus::Fail)
}

/// A check named on the line: its id, and its cost where it is a share.
fn label(c: &CheckRecord) -> String {
    let id = sanitise::text(&c.id).into_owned();
    match &c.cost {
        Some(cost) if cost.unit == "%" => format!("{id} {}", cost_text(cost)),
        _ => id,
    }
}

/// The checks taken over the passes, by id in the order first seen: each
/// pass's (number, check).
fn over_passes(report: &RunRecord) -> Vec<(String, Vec<(usize, &CheckRecord)>)> {
    let mut by_id: Vec<(String, Vec<(usize, &CheckRecord)>)> = Vec::new();
    for p in report.pass_checks.iter().flatten() {
        for c in &p.checks {
            match by_id.iter_mut().find(|(id, _)| *id == c.id) {
                Some((_, v)) => v.push((p.pass, c)),
                None => by_id.push((c.id.clone(), vec![(p.pass, c)])),
            }
        }
    }
    by_id
}

/// Whether check `id` warned or failed at the run's start.
fn at_start(report: &RunRecord, id: &str) -> bool {
    report
        .checks
        .iter()
        .flatten()
        .any(|c| c.id == id && flagged(c.status))
}

/// What the passes add to the line: a check whose verdict changed from pass
/// to pass, with the worst and the first pass it was given in ("steal-time
/// fail in pass 3"), and one that warned or failed in every pass.
fn pass_notes(report: &RunRecord) -> Vec<String> {
    let mut notes = Vec::new();
    for (_, passes) in over_passes(report) {
        let (_, first) = passes[0];
        let changed = passes.iter().any(|(_, c)| c.status != first.status);
        let Some(&(pass, worst)) = passes
            .iter()
            .filter(|(_, c)| flagged(c.status))
            .max_by_key(|(p, c)| (c.status == CheckStatus::Fail, std::cmp::Reverse(*p)))
        else {
            if changed {
                notes.push(format!("{} changed over the passes", label(first)));
            }
            continue;
        };
        let status = status_name(worst.status).to_lowercase();
        if changed {
            notes.push(format!("{} {status} in pass {pass}", label(worst)));
        } else if !at_start(report, &worst.id) {
            // Named once: as it was at the start, where it already did not pass.
            notes.push(format!("{} in every pass", label(worst)));
        }
    }
    notes
}

/// The machine's checks on one line: how many of each verdict at the run's
/// start, the checks that warned or failed then, and what the passes
/// changed ("machine: 13 pass, 2 warn — cpu-governor, steal-time fail in
/// pass 3: ipcmark doctor"); `None` for a run without checks.
pub fn checks_line(report: &RunRecord) -> Option<String> {
    let checks = report.checks.as_ref()?;
    let counts: Vec<String> = COUNTED
        .iter()
        .filter_map(|(s, word)| {
            let n = checks.iter().filter(|c| c.status == *s).count();
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect();
    let mut named: Vec<String> = checks
        .iter()
        .filter(|c| flagged(c.status))
        .map(label)
        .collect();
    named.extend(pass_notes(report));
    let mut line = format!("machine: {}", counts.join(", "));
    if !named.is_empty() {
        line.push_str(&format!(" — {}", named.join(", ")));
    }
    line.push_str(": ipcmark doctor");
    Some(wrap(&line, PAGE_WIDTH))
}

/// The machine's level during the run on one line: its interval, common to
/// every figure (the intervals of the tables are each figure's own), or why
/// it could not be told apart; `None` for a run of one pass.
pub fn level_line(report: &RunRecord) -> Option<String> {
    let l = report.level.as_ref()?;
    let line = match &l.interval {
        Some(i) if !l.factors.is_empty() => format!(
            "machine level: ±{}% over {} passes, common to all {} figures in every pass; \
             the intervals above are each figure's own",
            percent(half_width(i)),
            l.passes,
            l.figures
        ),
        _ => format!(
            "machine level: not separable: {} figure{} / {} passes (the intervals above include it)",
            l.figures,
            if l.figures == 1 { "" } else { "s" },
            l.passes
        ),
    };
    // A wide interval (a disturbed pass) lengthens the line past the page.
    Some(wrap(&line, PAGE_WIDTH))
}

/// `--long`: every check at the run's start, and each pass's checks as
/// one row per pass and check.
pub fn long(report: &RunRecord, colour: bool) -> String {
    let mut out = String::new();
    if let Some(checks) = &report.checks {
        out.push_str("\nthe machine's checks at the run's start (ipcmark doctor has all):\n");
        out.push_str(&table(checks, None, colour));
        out.push('\n');
    }
    if let Some(passes) = &report.pass_checks {
        out.push_str("\nthe checks over each pass:\n");
        let mut t =
            crate::output::table::cells::new_table(vec!["pass", "status", "check", "found"]);
        for p in passes {
            let pass = match p.level {
                Some(l) => format!("{l}.{}", p.pass),
                None => p.pass.to_string(),
            };
            for c in &p.checks {
                t.add_row(vec![
                    pass.clone(),
                    status_name(c.status).to_string(),
                    sanitise::text(&c.id).into_owned(),
                    sanitise::text(&c.found).into_owned(),
                ]);
            }
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::doctor::{CostRecord, PassChecksRecord};
    use crate::record::facts::IntervalRecord;
    use crate::record::run::LevelRecord;

    fn check(id: &str, status: CheckStatus, steal: Option<f64>) -> CheckRecord {
        CheckRecord {
            id: id.into(),
            title: id.into(),
            status,
            found: format!("{id} found"),
            cost: steal.map(|v| CostRecord {
                value: v,
                unit: "%".into(),
                what: "stolen".into(),
            }),
            needs_root: false,
            fix: "fix it".into(),
        }
    }

    fn report() -> RunRecord {
        let mut r =
            RunRecord::parse(include_str!("../../tests/reports/passes.json")).expect("fixture");
        let mut checks: Vec<CheckRecord> = (0..13)
            .map(|i| check(&format!("check-{i}"), CheckStatus::Pass, None))
            .collect();
        checks.push(check("cpu-governor", CheckStatus::Warn, None));
        checks.push(check("virtualization", CheckStatus::Info, None));
        r.checks = Some(checks);
        r
    }

    #[test]
    fn the_line_counts_the_checks_and_names_those_that_did_not_pass() {
        let r = report();
        assert_eq!(
            checks_line(&r).unwrap(),
            "machine: 13 pass, 1 info, 1 warn — cpu-governor: ipcmark doctor"
        );
        let mut bare = r.clone();
        bare.checks = None;
        assert_eq!(checks_line(&bare), None);
    }

    #[test]
    fn a_pass_that_was_disturbed_is_named() {
        let mut r = report();
        let pass = |n: usize, steal: f64, status| PassChecksRecord {
            level: None,
            pass: n,
            checks: vec![
                check("steal-time", status, Some(steal)),
                check("cpu-pressure", CheckStatus::Pass, None),
                check("swap-activity", CheckStatus::Warn, None),
            ],
        };
        r.pass_checks = Some(vec![
            pass(1, 0.5, CheckStatus::Pass),
            pass(2, 12.0, CheckStatus::Fail),
            pass(3, 1.0, CheckStatus::Pass),
        ]);
        let line = checks_line(&r).unwrap();
        assert!(
            line.contains("cpu-governor, steal-time 12.0% fail in pass 2"),
            "{line}"
        );
        assert!(line.contains("swap-activity in every pass"), "{line}");
        // A check that did not pass at the start either is named once.
        let mut both = r.clone();
        both.checks.as_mut().unwrap()[0] = check("swap-activity", CheckStatus::Warn, None);
        let line = checks_line(&both).unwrap();
        assert_eq!(line.matches("swap-activity").count(), 1, "{line}");
        assert!(!line.contains("cpu-pressure"), "{line}");
        // A long line wraps within the page.
        let mut many = r.clone();
        for c in many.checks.as_mut().unwrap().iter_mut().take(12) {
            c.status = CheckStatus::Warn;
        }
        let line = checks_line(&many).unwrap();
        assert!(line.lines().count() > 1, "{line}");
        assert!(
            line.lines().all(|l| l.chars().count() <= PAGE_WIDTH),
            "{line}"
        );
        assert!(
            line.lines()
                .skip(1)
                .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{line}"
        );
        let long = long(&r, false);
        assert!(
            long.contains("cpu-governor") && long.contains("steal-time"),
            "{long}"
        );
        assert_eq!(long.matches("steal-time found").count(), 3, "{long}");
    }

    #[test]
    fn the_level_line_says_the_machines_share_or_why_not() {
        let mut r = report();
        assert_eq!(level_line(&r), None, "one pass, no level");
        r.level = Some(LevelRecord {
            figures: 12,
            passes: 5,
            factors: vec![1.0, 0.98, 1.05, 1.0, 0.97],
            interval: Some(IntervalRecord {
                low: 0.969,
                high: 1.031,
            }),
        });
        let line = level_line(&r).unwrap();
        assert!(
            line.starts_with("machine level: ±3.1% over 5 passes, common to all 12 figures"),
            "{line}"
        );
        r.level = Some(LevelRecord {
            figures: 2,
            passes: 2,
            factors: vec![],
            interval: None,
        });
        assert!(
            level_line(&r)
                .unwrap()
                .starts_with("machine level: not separable: 2 figures / 2 passes"),
        );
        // A disturbed pass of two makes a wide level: its line still fits.
        r.level = Some(LevelRecord {
            figures: 144,
            passes: 2,
            factors: vec![0.01, 1.0],
            interval: Some(IntervalRecord {
                low: 0.006,
                high: 158.76,
            }),
        });
        let line = level_line(&r).unwrap();
        assert!(line.contains("±15776"), "{line}");
        assert!(
            line.lines().all(|l| l.chars().count() <= PAGE_WIDTH),
            "{line}"
        );
    }
}
