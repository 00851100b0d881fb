//! `ipcmark report RUN… --html FILE`: reads each run ([`load_input`]), hands
//! them to `output::report`, which builds the page, and writes it. A tax
//! report (`ipcmark tax --json FILE`, `ipcmark.tax/1`), named alone, gets
//! its own page ([`write_tax_page`]).

use super::{Failure, print_stdout};
use crate::history::OpenError;
use crate::output::report::{self, RunInput};
use crate::record::tax::{TAX_SCHEMA, TaxReport};
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

/// How `report` words a report that is not a run.
const RUNS_ONLY: super::history::RunsOnly = super::history::RunsOnly {
    reads: "report",
    not_a_run: "is not an ipcmark run report",
    not_json: None,
};

/// What a name on the command line gave: a run, or a tax report (only ever
/// a file: the history keeps no tax).
enum Input {
    Run(Box<RunInput>),
    Tax(String, Box<TaxReport>),
}

/// Reads one name given on the command line — a history id (`last`,
/// `last~1`, a number) or a JSON file — as its label and its report (its
/// strings sanitised), so nothing else in the command knows where a run
/// came from: a run (`ipcmark.run/1`), or a file of a tax report
/// (`ipcmark.tax/1`). A workload report (`ipcmark.workload/1`) or any other
/// schema is refused, naming it.
fn load_input(db: Option<&Path>, spec: &str) -> Result<Input, Failure> {
    let refused = match crate::history::open_run(db, spec) {
        Ok((label, report)) => return Ok(Input::Run(Box::new(RunInput { label, report }))),
        Err(refused) => refused,
    };
    let tax = match &refused.opened {
        Err(OpenError::Schema {
            label,
            schema: Some(s),
        }) if s == TAX_SCHEMA => open_tax(label)?.map(|t| (label.clone(), t)),
        _ => None,
    };
    match tax {
        Some((label, t)) => Ok(Input::Tax(label, Box::new(t))),
        None => Err(RUNS_ONLY.refuse(refused)),
    }
}

/// Writes the page of `tax` (labelled `label`: where it was read from) to
/// `path`, its strings made safe first (a report read from a file already
/// is; the study's own may hold anything the host named); its charts.
pub fn write_tax_page(path: &Path, label: &str, tax: &TaxReport) -> Result<usize, Failure> {
    let safe = serde_json::to_value(tax)
        .and_then(|mut v| {
            crate::output::sanitise::report(&mut v);
            serde_json::from_value::<TaxReport>(v)
        })
        .map_err(|e| Failure::run(format!("cannot render the tax report: {e}")))?;
    let page = report::tax::render_tax(label, &safe);
    crate::output::json::write_text_atomic(path, &page.html)
        .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
    Ok(page.charts)
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
    let mut runs = Vec::new();
    let mut taxes = Vec::new();
    for spec in specs {
        match load_input(args.db.as_deref(), spec)? {
            Input::Run(run) => runs.push(*run),
            Input::Tax(label, tax) => taxes.push((label, tax)),
        }
    }
    if let Some((label, tax)) = taxes.first() {
        // A tax's page is its ledger: there is nothing to set a run beside.
        if specs.len() > 1 || args.watch || args.advise.is_some() {
            return Err(Failure::usage(format!(
                "{label} is a tax report ({TAX_SCHEMA}): report draws it on a page of its own; \
                 name it alone, without runs, --watch or --advise"
            )));
        }
        let charts = write_tax_page(&args.html, label, tax)?;
        print_stdout(&format!(
            "wrote {} (tax report, {charts} chart{})\n",
            args.html.display(),
            if charts == 1 { "" } else { "s" },
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
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

/// The tax report `spec` names, if it is a file whose schema is
/// `ipcmark.tax/1` (its strings made safe); `None` for anything else, which
/// the caller reads as it would (a run, a history id) and refuses in its
/// own words.
pub(super) fn open_tax(spec: &str) -> Result<Option<crate::record::tax::TaxReport>, Failure> {
    use crate::record::tax::TAX_SCHEMA;
    if !std::path::Path::new(spec).is_file() {
        return Ok(None);
    }
    let Ok(text) = std::fs::read_to_string(spec) else {
        return Ok(None);
    };
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None);
    };
    if crate::record::schema_of(&value) != Some(TAX_SCHEMA) {
        return Ok(None);
    }
    crate::output::sanitise::report(&mut value);
    serde_json::from_value(value).map(Some).map_err(|e| {
        Failure::usage(format!(
            "{} is not an ipcmark tax report ({TAX_SCHEMA}): {}",
            crate::output::sanitise::text(spec),
            crate::output::sanitise::text(&e.to_string())
        ))
    })
}
