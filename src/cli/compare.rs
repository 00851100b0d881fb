//! `ipcmark compare A.json B.json`: checks the arguments, reads the two run
//! reports, and hands them to `output::compare`, which builds the comparison
//! (its records, its table); then writes the JSON if asked and prints the
//! table.

use super::{CompareArgs, Failure, print_stdout};
use crate::output::compare::{self, ReadError, RunFile};
use crate::output::json::SCHEMA;
use std::path::Path;
use std::process::ExitCode;

fn load(path: &Path) -> Result<RunFile, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    RunFile::parse(&text).map_err(|e| {
        Failure::usage(match e {
            ReadError::NotARunReport(e) => {
                format!("{} is not an ipcmark run report: {e}", path.display())
            }
            ReadError::Schema(schema) => format!(
                "{} has schema '{schema}'; compare reads '{SCHEMA}'",
                path.display()
            ),
        })
    })
}

pub fn compare(args: CompareArgs) -> Result<ExitCode, Failure> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return Err(Failure::usage(format!(
            "--alpha {}: must lie strictly between 0 and 0.5",
            args.alpha
        )));
    }
    if let Some(out) = &args.json {
        super::check_output_path("--json", out)?;
    }
    let (fa, fb) = (load(&args.a)?, load(&args.b)?);
    let report = compare::compare(
        &args.a.display().to_string(),
        &fa,
        &args.b.display().to_string(),
        &fb,
        args.alpha,
    );
    if let Some(out) = &args.json {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&compare::table::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
