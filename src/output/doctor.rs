//! `ipcmark doctor`: its record built from the engine's checks
//! (`record::doctor`, schema `ipcmark.doctor/1`) and the table printed from
//! that record — status, check, what it found, the fix.

use crate::machine::doctor::{Check, Status};
use crate::output::sanitise;
use crate::output::table::cells::fit_width;
use crate::record::doctor::{CheckRecord, CheckStatus, CostRecord, DOCTOR_SCHEMA, DoctorRecord};
use comfy_table::{Attribute, Cell, Color, ColumnConstraint, ContentArrangement, Table, presets};

impl From<Status> for CheckStatus {
    fn from(s: Status) -> CheckStatus {
        match s {
            Status::Pass => CheckStatus::Pass,
            Status::Info => CheckStatus::Info,
            Status::Warn => CheckStatus::Warn,
            Status::Fail => CheckStatus::Fail,
            Status::Skip => CheckStatus::Skip,
        }
    }
}

impl From<&Check> for CheckRecord {
    fn from(c: &Check) -> CheckRecord {
        CheckRecord {
            id: c.id.into(),
            title: c.title.into(),
            status: c.status.into(),
            found: c.found.clone(),
            cost: c.cost.as_ref().map(|k| CostRecord {
                value: k.value,
                unit: k.unit.into(),
                what: k.what.clone(),
            }),
            needs_root: c.needs_root,
            fix: c.fix.clone(),
        }
    }
}

/// The record of an examination of `host` at `time` for `cpus`.
pub fn record(
    host: &str,
    time: String,
    root: bool,
    cpus: &[usize],
    checks: &[Check],
) -> DoctorRecord {
    DoctorRecord {
        schema: DOCTOR_SCHEMA.into(),
        build: crate::output::json::build::current(),
        host: host.into(),
        time,
        root,
        cpus: cpus.to_vec(),
        checks: checks.iter().map(CheckRecord::from).collect(),
    }
}

pub fn status_name(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Pass => "PASS",
        CheckStatus::Info => "INFO",
        CheckStatus::Warn => "WARN",
        CheckStatus::Fail => "FAIL",
        CheckStatus::Skip => "SKIP",
    }
}

/// A cost as the table shows it: "4.1 µs", "12%".
pub fn cost_text(c: &CostRecord) -> String {
    let unit = match c.unit.as_str() {
        "us" => " µs",
        "ns" => " ns",
        "%" => "%",
        other => return format!("{:.1} {other}", c.value),
    };
    format!("{:.1}{unit}", c.value)
}

/// The page: a header line, the table (what a condition costs here after
/// what was found, the fix shown where a check warns or fails), and a
/// closing line counting the statuses, with the checks that
/// saw less for not being root.
pub fn render(r: &DoctorRecord, colour: bool) -> String {
    let clean = |s: &str| sanitise::text(s).into_owned();
    let t = table(&r.checks, Some(r.root), colour);
    let count = |s: CheckStatus| r.checks.iter().filter(|c| c.status == s).count();
    let mut out = format!(
        "ipcmark doctor: {} for a run on CPUs {}{}\n",
        clean(&r.host),
        r.cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        if r.root { "" } else { " (not root)" }
    );
    out.push_str(&t);
    out.push('\n');
    out.push_str(&format!(
        "{} checks: {} pass, {} info, {} warn, {} fail, {} skipped\n",
        r.checks.len(),
        count(CheckStatus::Pass),
        count(CheckStatus::Info),
        count(CheckStatus::Warn),
        count(CheckStatus::Fail),
        count(CheckStatus::Skip),
    ));
    if !r.root {
        let rooted: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| c.needs_root)
            .map(|c| c.id.as_str())
            .collect();
        if !rooted.is_empty() {
            out.push_str(&format!(
                "not root: {} need root to see all they read; run as root for them\n",
                clean(&rooted.join(", "))
            ));
        }
    }
    out
}

/// The checks as a table: status, check (marked "(root)" where it needs
/// root and `root` says the examiner was not), what was found with its
/// cost here, and the fix where a check warns or fails.
pub fn table(checks: &[CheckRecord], root: Option<bool>, colour: bool) -> String {
    let clean = |s: &str| sanitise::text(s).into_owned();
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["status", "check", "found", "fix"]);
    for c in checks {
        let mut status = Cell::new(status_name(c.status));
        if colour {
            let fg = match c.status {
                CheckStatus::Pass => Color::Green,
                CheckStatus::Info => Color::Cyan,
                CheckStatus::Warn => Color::Yellow,
                CheckStatus::Fail => Color::Red,
                CheckStatus::Skip => Color::DarkGrey,
            };
            status = status.fg(fg).add_attribute(Attribute::Bold);
        }
        let fix = match c.status {
            CheckStatus::Warn | CheckStatus::Fail => clean(&c.fix),
            _ => String::new(),
        };
        let id = if c.needs_root && root == Some(false) {
            format!("{} (root)", clean(&c.id))
        } else {
            clean(&c.id)
        };
        let found = match &c.cost {
            Some(cost) => format!("{} [costs here: {}]", clean(&c.found), cost_text(cost)),
            None => clean(&c.found),
        };
        t.add_row(vec![
            status,
            Cell::new(id),
            Cell::new(found),
            Cell::new(fix),
        ]);
    }
    for col in [0, 1] {
        if let Some(c) = t.column_mut(col) {
            c.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    if colour {
        t.enforce_styling();
    }
    fit_width(&mut t);
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::doctor::Cost;

    fn checks() -> Vec<Check> {
        vec![
            Check {
                id: "steal-time",
                title: "steal time",
                status: Status::Warn,
                found: "CPU 0 5.0% \u{1b}[2J".into(),
                cost: Some(Cost {
                    value: 5.0,
                    unit: "%",
                    what: "stolen".into(),
                }),
                needs_root: false,
                fix: "measure later".into(),
            },
            Check {
                id: "preemption",
                title: "preemption model and HZ",
                status: Status::Info,
                found: "PREEMPT_DYNAMIC".into(),
                cost: None,
                needs_root: true,
                fix: "boot with preempt=full".into(),
            },
        ]
    }

    #[test]
    fn the_table_shows_fixes_of_warnings_only_and_names_checks_that_need_root() {
        let r = record(
            "box",
            "2026-11-27T05:00:00Z".into(),
            false,
            &[0, 1],
            &checks(),
        );
        assert_eq!(r.checks[0].status, CheckStatus::Warn);
        assert_eq!(r.checks[0].cost.as_ref().unwrap().unit, "%");
        let page = render(&r, false);
        assert!(
            page.starts_with("ipcmark doctor: box for a run on CPUs 0,1 (not root)\n"),
            "{page}"
        );
        assert!(page.contains("WARN") && page.contains("INFO"), "{page}");
        assert!(page.contains("measure later"), "{page}");
        assert!(
            !page.contains("preempt=full"),
            "no fix shown for INFO: {page}"
        );
        assert!(page.contains("preemption (root)"), "{page}");
        assert!(page.contains("[costs here: 5.0%]"), "{page}");
        assert!(
            page.contains("2 checks: 0 pass, 1 info, 1 warn, 0 fail, 0 skipped"),
            "{page}"
        );
        assert!(page.contains("not root: preemption need root"), "{page}");
        assert!(
            !page.contains('\u{1b}'),
            "no escape without colour: {page:?}"
        );
        let as_root = render(&record("box", "t".into(), true, &[0, 1], &checks()), true);
        assert!(as_root.contains('\u{1b}'), "colour asked");
        assert!(
            !as_root.contains("(root)") && !as_root.contains("not root"),
            "{as_root}"
        );
        assert!(
            !as_root.contains("\u{1b}[2J"),
            "a found text cannot drive the terminal"
        );
    }
}
