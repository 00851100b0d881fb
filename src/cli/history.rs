//! The commands of the run history (docs/history.md): `history` (list and
//! prune), `show`, `export`, `import`; and the history writer `run` and
//! `workload` hand their reports to.

use super::{Failure, print_stdout};
use crate::history::{self, OpenError, Opened, Prune, Refused, Store, StoredRun};
use crate::output::{csv, sanitise};
use crate::record::RunRecord;
use crate::record::class::MachineClass;
use crate::run::save::failure;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `ipcmark history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    db: super::flags::Db,
    /// Delete runs instead of listing them: those the selectors pick
    /// (--keep, --before, --incomplete; any of them).
    #[arg(long)]
    prune: bool,
    /// With --prune: keep only the N latest runs.
    #[arg(long, value_name = "N", requires = "prune")]
    keep: Option<usize>,
    /// With --prune: delete runs started before this date (2026-11-01) or
    /// time (2026-11-01T12:00:00Z).
    #[arg(long, value_name = "DATE", requires = "prune", value_parser = parse_date)]
    before: Option<jiff::Timestamp>,
    /// With --prune: delete runs that did not complete (stopped or killed).
    #[arg(long, requires = "prune")]
    incomplete: bool,
    /// Name a run (an id, `last`, `last~N`, `last@HOST`) so that check, compare, show and
    /// export take the name: `ipcmark history --tag baseline last`. A name
    /// given again moves to the run named; deleting the run deletes its names.
    #[arg(long, num_args = 2, value_names = ["NAME", "RUN"], conflicts_with = "prune")]
    tag: Option<Vec<String>>,
    /// List only the runs of this host.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["prune", "tag"])]
    host: Option<String>,
    /// List only the runs of one class of machine (the same CPU model, CPU
    /// count, kernel release and hypervisor): a class's id as `ipcmark
    /// fleet` prints it, or a run (an id, `last`, a name) whose class it is.
    #[arg(long, value_name = "CLASS|RUN", conflicts_with_all = ["prune", "tag"])]
    class: Option<String>,
}

/// Arguments of `ipcmark show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: an id, `last`, `last~N`, `last@HOST`, or a JSON report.
    #[arg(value_name = "RUN")]
    run: String,
    /// The run's `--long` page: every figure's own row, with its p99, MB/s,
    /// interval and notes, and the cost models' table.
    #[arg(long)]
    long: bool,
    #[command(flatten)]
    db: super::flags::Db,
}

/// Format of `ipcmark export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The JSON report, as `run --json` writes it.
    Json,
    /// One row per figure (runs of `ipcmark run` only).
    Csv,
}

/// Arguments of `ipcmark export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run: an id, `last`, `last~N` or `last@HOST`.
    #[arg(value_name = "RUN")]
    run: String,
    /// What to write.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    output: Option<PathBuf>,
    #[command(flatten)]
    db: super::flags::Db,
}

/// Arguments of `ipcmark import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// JSON reports written by `run --json` or `workload --json`.
    #[arg(value_name = "FILE.json", required = true, value_hint = clap::ValueHint::FilePath)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    db: super::flags::Db,
}

/// A date (midnight UTC) or an RFC 3339 time (`--before`, `watch --since`).
pub(super) fn parse_date(s: &str) -> Result<jiff::Timestamp, String> {
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t);
    }
    s.parse::<jiff::civil::Date>()
        .map_err(|_| format!("'{s}' is not a date (2026-11-01) or an RFC 3339 time"))
        .and_then(|d| {
            d.to_zoned(jiff::tz::TimeZone::UTC)
                .map(|z| z.timestamp())
                .map_err(|e| e.to_string())
        })
}

/// The history a command only reads, opened read-only.
fn reader(db: Option<&Path>) -> Result<Store, Failure> {
    let path = history::path_or_default(db).map_err(failure)?;
    Store::open_reader(&path).map_err(failure)
}

/// `ipcmark history`: the runs, one a line; or `--prune`.
pub fn history(args: HistoryArgs) -> Result<ExitCode, Failure> {
    if args.prune {
        if args.keep.is_none() && args.before.is_none() && !args.incomplete {
            return Err(Failure::usage(
                "--prune needs a selector: --keep N, --before DATE or --incomplete",
            ));
        }
        let path = history::path_or_default(args.db.as_deref()).map_err(failure)?;
        let mut s = Store::open_existing(&path).map_err(failure)?;
        let gone = s
            .prune(&Prune {
                keep: args.keep,
                before: args.before,
                incomplete: args.incomplete,
            })
            .map_err(failure)?;
        let ids: Vec<String> = gone.iter().map(ToString::to_string).collect();
        print_stdout(&match ids.len() {
            0 => "no run deleted\n".to_string(),
            n => format!("deleted {n} run(s): {}\n", ids.join(", ")),
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(tag) = &args.tag {
        let [name, spec] = tag.as_slice() else {
            return Err(Failure::usage(
                "--tag takes a name and a run: --tag NAME RUN",
            ));
        };
        let path = history::path_or_default(args.db.as_deref()).map_err(failure)?;
        let mut s = Store::open_existing(&path).map_err(failure)?;
        let id = s.resolve(spec).map_err(failure)?;
        let now = jiff::Timestamp::now().to_string();
        let before = s.tag(name, id, &now).map_err(failure)?;
        print_stdout(&match before {
            Some(old) if old != id => format!("{name}: run {id} (was run {old})\n"),
            _ => format!("{name}: run {id}\n"),
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = reader(args.db.as_deref())?;
    let mut runs = s.runs().map_err(failure)?;
    let tags = s.tags().map_err(failure)?;
    if runs.is_empty() {
        print_stdout(&format!("the history {} is empty\n", s.path().display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(host) = &args.host {
        runs.retain(|r| r.host == *host);
    }
    if let Some(spec) = &args.class {
        let classes = s.classes().map_err(failure)?;
        let class = class_named(&s, &classes, spec)?;
        runs.retain(|r| classes.get(&r.id) == Some(&class));
    }
    if runs.is_empty() {
        print_stdout("no run of the history is of that host or class\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = crate::output::table::cells::new_table(vec![
        "id", "started", "host", "kernel", "command", "figures", "state",
    ]);
    for r in &runs {
        // The program's own path says nothing: `ipcmark run …`.
        let mut argv = r.command_line.clone();
        if let Some(first) = argv.first_mut() {
            *first = "ipcmark".into();
        }
        let state = match (r.complete, r.finished) {
            (true, _) => "complete",
            (false, true) => "stopped",
            (false, false) => "incomplete",
        };
        let mut state = match &r.imported_from {
            Some(_) => format!("{state}, imported"),
            None => state.to_string(),
        };
        for (name, _) in tags.iter().filter(|(_, id)| *id == r.id) {
            state.push_str(&format!(", {}", sanitise::text(name)));
        }
        t.add_row(vec![
            r.id.to_string(),
            r.started_at
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            sanitise::text(&r.host).into_owned(),
            sanitise::text(&r.kernel).into_owned(),
            sanitise::text(&argv.join(" ")).into_owned(),
            r.figures.to_string(),
            state,
        ]);
    }
    crate::output::table::cells::fit_width(&mut t);
    print_stdout(&format!("{t}\n{}\n", s.path().display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The class `spec` names: the id of a class of the history's runs
/// (`MachineClass::id`, as `fleet` prints it), else a run whose class it is.
fn class_named(
    s: &Store,
    classes: &std::collections::BTreeMap<history::RunId, MachineClass>,
    spec: &str,
) -> Result<MachineClass, Failure> {
    if let Some(c) = classes.values().find(|c| c.id() == spec) {
        return Ok(c.clone());
    }
    let id = s.resolve(spec).map_err(|_| {
        Failure::usage(format!(
            "--class {}: names no class of the history's runs (an id as `ipcmark fleet` \
             prints it) nor a run",
            sanitise::text(spec)
        ))
    })?;
    classes
        .get(&id)
        .cloned()
        .ok_or_else(|| Failure::usage(format!("--class: run {id}'s machine does not read")))
}

/// `ipcmark show RUN`: the stored run's page.
pub fn show(args: ShowArgs) -> Result<ExitCode, Failure> {
    let opened =
        history::open(args.db.as_deref(), &args.run).map_err(|e| failure(e.into_error()))?;
    let label = &opened.label;
    let shown = match &opened.run {
        StoredRun::Run(record) => crate::output::stored::run_page(
            label,
            record,
            crate::output::page::Options::for_stdout(args.long),
        ),
        StoredRun::Workload(record) => crate::output::stored::workload_page(label, record),
    };
    // The run's page alone on stdout, as the run printed it; which run it
    // is and what it warned of on stderr, where the run said them.
    eprint!("{}", shown.about);
    print_stdout(&shown.page)?;
    Ok(ExitCode::SUCCESS)
}

/// `ipcmark export RUN --format json|csv [-o FILE]`.
pub fn export(args: ExportArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.output {
        super::check_output_path("--output", out)?;
    }
    let s = reader(args.db.as_deref())?;
    let id = s.resolve(&args.run).map_err(failure)?;
    let text = match args.format {
        // The report as it was written, every field of it, an imported
        // one's unknown fields too: passed through, not read.
        Format::Json => {
            let report = s.load_report(id).map_err(failure)?;
            let mut t = serde_json::to_string_pretty(&report)
                .map_err(|e| Failure::run(format!("run {id}: {e}")))?;
            t.push('\n');
            t
        }
        Format::Csv => {
            let run = match s.open_run_id(id) {
                Ok(Opened {
                    run: StoredRun::Run(run),
                    ..
                }) => run,
                Ok(_)
                | Err(OpenError::Schema { .. })
                | Err(OpenError::Unreadable {
                    kind: history::Kind::Workload,
                    ..
                }) => {
                    return Err(Failure::usage(format!("run {id}: {}", csv::NOT_A_RUN)));
                }
                Err(OpenError::Unreadable { message, .. }) => {
                    return Err(Failure::usage(format!(
                        "run {id}: not an ipcmark run report: {message}"
                    )));
                }
                Err(e) => return Err(failure(e.into_error())),
            };
            csv::render(&run).map_err(|e| Failure::usage(format!("run {id}: {e}")))?
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?,
        None => print_stdout(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// How a command that reads only runs of `ipcmark run` words a report
/// that is not one (`compare`, `check`, `report`): `not_a_run` for a
/// report whose fields do not read, and the command's name in "CMD reads".
pub(super) struct RunsOnly {
    /// The command, as "compare reads 'ipcmark.run/1'" names it.
    pub reads: &'static str,
    /// The words after the label for a report that does not read
    /// ("is not an ipcmark run report").
    pub not_a_run: &'static str,
    /// The same, for a file that is not JSON.
    pub not_json: Option<&'static str>,
}

/// The run of `ipcmark run` `spec` names (a file, or a run of the history
/// at `db`), with its label: through `history::open_run`, refused in the
/// command's words when it is another report.
pub(super) fn open_run(
    db: Option<&Path>,
    spec: &str,
    words: &RunsOnly,
) -> Result<(String, RunRecord), Failure> {
    history::open_run(db, spec).map_err(|r| words.refuse(r))
}

impl RunsOnly {
    /// The command's failure for a spec that gave no run of `ipcmark run`.
    pub(super) fn refuse(&self, refused: Refused) -> Failure {
        let schema = |label: &str, schema: &str| {
            Failure::usage(format!(
                "{label} has schema '{schema}'; {} reads '{}'",
                self.reads,
                crate::record::SCHEMA
            ))
        };
        match refused.opened {
            Ok(Opened { label, run, .. }) => schema(&label, run.schema()),
            Err(OpenError::Schema {
                label,
                schema: None,
            }) => Failure::usage(format!("{label} {}: no schema", self.not_a_run)),
            Err(OpenError::Schema {
                label,
                schema: Some(s),
            }) => schema(&label, &s),
            Err(OpenError::Unreadable {
                label,
                kind: history::Kind::Workload,
                ..
            }) => schema(&label, crate::record::workload::SCHEMA),
            Err(OpenError::Unreadable { label, message, .. }) => {
                Failure::usage(format!("{label} {}: {message}", self.not_a_run))
            }
            Err(OpenError::NotJson { label, message }) => match self.not_json {
                Some(w) => Failure::usage(format!("{label} {w}: {message}")),
                None => failure(OpenError::NotJson { label, message }.into_error()),
            },
            Err(OpenError::History(e)) => failure(e),
        }
    }
}

/// `ipcmark import FILE.json…`: each report becomes a run of the history.
pub fn import(args: ImportArgs) -> Result<ExitCode, Failure> {
    // Every file is read and checked before any is stored; each is then
    // read again as it is stored, so no report is ever held whole.
    let mut kinds = Vec::new();
    for f in &args.files {
        kinds.push(history::check_file(f).map_err(failure)?);
    }
    let path = history::path_or_default(args.db.as_deref()).map_err(failure)?;
    let mut lines = String::new();
    for (f, kind) in args.files.iter().zip(kinds) {
        let source = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        let mut store = Store::open(&path).map_err(failure)?;
        let id = store
            .import_file(f, kind, &source.display().to_string())
            .map_err(failure)?;
        lines.push_str(&format!("{}: run {id}\n", f.display()));
    }
    print_stdout(&lines)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_takes_a_date_at_midnight_utc_or_a_time() {
        let day = parse_date("2026-11-01").unwrap();
        assert_eq!(
            day,
            "2026-11-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap()
        );
        let t = parse_date("2026-11-01T12:30:00+01:00").unwrap();
        assert_eq!(
            t,
            "2026-11-01T11:30:00Z".parse::<jiff::Timestamp>().unwrap()
        );
        for bad in ["yesterday", "2026-13-01", ""] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }
}
