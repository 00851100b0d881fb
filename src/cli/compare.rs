//! `ipcmark compare A B`: checks the arguments, reads the two run reports
//! (files, or runs of the history: `last`, `last~1`, an id), and hands them
//! to `output::compare`, which builds the comparison (its records, its
//! table); then writes the JSON and the exports asked for (B's figures for
//! dashboards, the verdicts as JUnit) and prints the table.

use super::{CompareArgs, Failure, print_stdout};
use crate::output::compare;
use crate::record::RunRecord;
use std::path::Path;
use std::process::ExitCode;

/// How compare words a spec that gave no run: a file and a stored run
/// that are none say so in words of their own.
pub(super) fn words(spec: &str) -> super::history::RunsOnly {
    super::history::RunsOnly {
        reads: "compare",
        not_a_run: if crate::history::is_file_spec(spec) {
            "is not an ipcmark run report"
        } else {
            "is not a run of ipcmark run"
        },
        not_json: Some("is not an ipcmark run report"),
    }
}

/// The run `spec` names (a file, or a run of the history) and its label
/// in the comparison, through `history::open_run`.
fn load(db: Option<&Path>, spec: &str) -> Result<(String, RunRecord), Failure> {
    super::history::open_run(db, spec, &words(spec))
}

pub fn compare(args: CompareArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    args.dashboards.check()?;
    args.junit.check()?;
    match (
        super::report::open_tax(&args.a)?,
        super::report::open_tax(&args.b)?,
    ) {
        (Some(a), Some(b)) => {
            no_exports(&args, "A and B are tax reports (ipcmark tax)")?;
            return compare_taxes((&args.a, &a), (&args.b, &b), alpha, &args);
        }
        (Some(_), None) => return Err(one_tax(&args.a, &args.b)),
        (None, Some(_)) => return Err(one_tax(&args.b, &args.a)),
        (None, None) => {}
    }
    let (la, fa) = load(args.db.as_deref(), &args.a)?;
    let (lb, fb) = load(args.db.as_deref(), &args.b)?;
    match (fa.settings.map.is_some(), fb.settings.map.is_some()) {
        (true, true) => {
            no_exports(&args, "A and B are maps (ipcmark map)")?;
            return compare_maps((&la, &fa), (&lb, &fb), alpha, &args);
        }
        (true, false) | (false, true) => {
            return Err(Failure::usage(format!(
                "{} is a map (ipcmark map) and {} is not: compare a map with a map",
                if fa.settings.map.is_some() { &la } else { &lb },
                if fa.settings.map.is_some() { &lb } else { &la },
            )));
        }
        (false, false) => {}
    }
    let report = crate::analysis::compare::compare(
        &la,
        &fa,
        &lb,
        &fb,
        alpha,
        crate::output::json::build::current(),
    );
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    args.dashboards.write(&crate::output::export::of_run(&fb))?;
    if let Some(out) = &args.junit.path {
        super::flags::write_file(out, &crate::output::export::junit::compare(&report))?;
    }
    print_stdout(&compare::table::render(&report))?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses the export flags where A and B are `what`: the exports take
/// runs of `ipcmark run`.
fn no_exports(args: &CompareArgs, what: &str) -> Result<(), Failure> {
    let mut given = args.dashboards.given();
    if args.junit.path.is_some() {
        given.push("--export-junit");
    }
    match given.first() {
        Some(flag) => Err(Failure::usage(format!(
            "{flag}: {what}; the exports take runs of ipcmark run"
        ))),
        None => Ok(()),
    }
}

/// Two maps compared class by class (`analysis::map::compare`).
fn compare_maps(
    a: (&str, &RunRecord),
    b: (&str, &RunRecord),
    alpha: f64,
    args: &CompareArgs,
) -> Result<ExitCode, Failure> {
    let report = crate::analysis::map::compare(a, b, alpha, crate::output::json::build::current());
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::map::compare_table(&report))?;
    Ok(ExitCode::SUCCESS)
}

/// A tax report beside something else.
fn one_tax(tax: &str, other: &str) -> Failure {
    Failure::usage(format!(
        "{} is a tax report (ipcmark tax) and {} is not: compare a tax with a tax",
        crate::output::sanitise::text(tax),
        crate::output::sanitise::text(other),
    ))
}

/// Two tax reports compared layer by layer (`analysis::tax::compare`).
fn compare_taxes(
    a: (&str, &crate::record::tax::TaxReport),
    b: (&str, &crate::record::tax::TaxReport),
    alpha: f64,
    args: &CompareArgs,
) -> Result<ExitCode, Failure> {
    let report = crate::analysis::tax::compare::compare(
        a.0,
        a.1,
        b.0,
        b.1,
        alpha,
        crate::output::json::build::current(),
    );
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::tax_compare::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
