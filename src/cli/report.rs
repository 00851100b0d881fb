//! `ipcmark report RUN… --html FILE`: reads each run ([`load_run`]), hands
//! them to `output::report`, which builds the page, and writes it.

use super::{Failure, print_stdout};
use crate::output::compare::{ReadError, RunFile};
use crate::output::json::SCHEMA;
use crate::output::report::{self, RunInput};
use clap::Args;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `ipcmark report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The runs to report: JSON files written by `ipcmark run --json FILE`.
    /// With two or more, each later run is compared with the first.
    #[arg(value_name = "RUN", value_hint = clap::ValueHint::FilePath)]
    runs: Vec<String>,
    /// Write the report as one self-contained HTML page to this file.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, required = true)]
    html: PathBuf,
    /// Significance level of the comparison (and 1 − confidence of its intervals).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
}

/// Reads one run named on the command line and returns its report, as
/// `ipcmark run --json` writes it. Today a RUN is a file; the history's ids
/// (`last`, `last~1`, a number) will resolve here too, so nothing else in
/// the command knows where a run came from.
pub fn load_run(spec: &str) -> Result<Value, Failure> {
    let path = Path::new(spec);
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {spec}: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("{spec} is not an ipcmark run report: {e}")))?;
    // The comparison reads these fields: check them once, here, for a clear line.
    RunFile::from_value(value.clone()).map_err(|e| {
        Failure::usage(match e {
            ReadError::NotARunReport(e) => format!("{spec} is not an ipcmark run report: {e}"),
            ReadError::Schema(schema) => {
                format!("{spec} has schema '{schema}'; report reads '{SCHEMA}'")
            }
        })
    })?;
    Ok(value)
}

pub fn report(args: ReportArgs) -> Result<ExitCode, Failure> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return Err(Failure::usage(format!(
            "--alpha {}: must lie strictly between 0 and 0.5",
            args.alpha
        )));
    }
    super::check_output_path("--html", &args.html)?;
    if args.runs.is_empty() {
        return Err(Failure::usage(
            "report: name the runs to report (JSON files written by `ipcmark run --json FILE`); \
             reporting the last runs without naming them needs the run history, which this \
             build does not have",
        ));
    }
    let runs = args
        .runs
        .iter()
        .map(|spec| {
            Ok(RunInput {
                label: spec.clone(),
                report: load_run(spec)?,
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let page = report::render(&runs, args.alpha);
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
