//! `ipcmark report RUN… --html FILE`: reads each run ([`load_run`]), hands
//! them to `output::report`, which builds the page, and writes it.

use super::{Failure, print_stdout};
use crate::output::report::{self, RunInput};
use crate::record::RunRecord;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `ipcmark report`.
#[derive(Debug, Args)]
#[command(mut_arg("alpha", |a| a.help(super::flags::Alpha::REPORT_HELP)))]
pub struct ReportArgs {
    /// The runs to report: ids from the history (`last`, `last~1`, a number)
    /// or JSON files written by `ipcmark run --json FILE`; the last run when
    /// none is named. With two or more, each later run is compared with the first.
    #[arg(value_name = "RUN", value_hint = clap::ValueHint::FilePath)]
    runs: Vec<String>,
    #[command(flatten)]
    db: super::flags::Db,
    /// Write the report as one self-contained HTML page to this file.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, required = true)]
    html: PathBuf,
    #[command(flatten)]
    alpha: super::flags::Alpha,
    /// Add the history's change points (as `ipcmark watch`): every figure
    /// series that changed level, drawn across its runs with the change
    /// points marked, and its table of changes.
    #[arg(long)]
    watch: bool,
    /// Add advise's ranking from its JSON (`ipcmark advise … --json FILE`).
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    advise: Option<PathBuf>,
}

/// Reads `advise --json`'s record from `path` (its strings made safe).
fn load_advise(path: &Path) -> Result<crate::record::advise::AdviseReport, Failure> {
    use crate::record::advise::ADVISE_SCHEMA;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("--advise: cannot read {}: {e}", path.display())))?;
    let mut value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("--advise: {} is not JSON: {e}", path.display())))?;
    crate::output::sanitise::report(&mut value);
    match crate::record::schema_of(&value) {
        Some(ADVISE_SCHEMA) => {}
        other => {
            return Err(Failure::usage(format!(
                "--advise: {} has schema '{}'; it reads '{ADVISE_SCHEMA}' (ipcmark advise --json FILE)",
                path.display(),
                other.unwrap_or("none")
            )));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        Failure::usage(format!(
            "--advise: {} is not an advise record: {e}",
            path.display()
        ))
    })
}

/// Reads one run named on the command line — a history id (`last`,
/// `last~1`, a number) or a JSON file — and returns its label and its report
/// (`ipcmark.run/1`, its strings sanitised), so nothing else in the command
/// knows where a run came from. A workload report (`ipcmark.workload/1`) or
/// any other schema is refused, naming it.
pub fn load_run(db: Option<&Path>, spec: &str) -> Result<(String, RunRecord), Failure> {
    super::history::open_run(
        db,
        spec,
        &super::history::RunsOnly {
            reads: "report",
            not_a_run: "is not an ipcmark run report",
            not_json: None,
        },
    )
}

pub fn report(args: ReportArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    super::check_output_path("--html", &args.html)?;
    let last = ["last".to_string()];
    let specs = if args.runs.is_empty() {
        &last[..]
    } else {
        &args.runs[..]
    };
    let runs = specs
        .iter()
        .map(|spec| {
            let (label, report) = load_run(args.db.as_deref(), spec)?;
            Ok(RunInput { label, report })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let mut sections = Vec::new();
    if args.watch {
        let charted = super::watch::charted(args.db.as_deref(), &[])?;
        sections.push(report::history::watch_section(&charted, charted.len()));
    }
    if let Some(path) = &args.advise {
        sections.push(report::history::advise_section(&load_advise(path)?));
    }
    let page = report::render_with(&runs, alpha, &sections);
    crate::output::json::write_text_atomic(&args.html, &page.html)
        .map_err(|e| Failure::run(format!("cannot write {}: {e}", args.html.display())))?;
    print_stdout(&format!(
        "wrote {} ({} run{}, {} chart{})\n",
        args.html.display(),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        page.charts,
        if page.charts == 1 { "" } else { "s" },
    ))?;
    Ok(ExitCode::SUCCESS)
}
