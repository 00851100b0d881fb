//! How a run (or a command) fails: one line for stderr and the exit code
//! that goes with it, 2 for what the user asked, 1 for a run that could not
//! be carried out; and the checks of an output path made before any work.

use std::path::Path;

/// A failure with its exit code: 2 for bad usage, 1 for a failed run.
#[derive(Debug)]
pub struct Failure {
    /// Exit code.
    pub code: u8,
    /// One line for stderr.
    pub message: String,
}

impl Failure {
    /// Bad usage (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// The run could not be carried out (exit 1).
    pub fn run(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

/// Checks `--json PATH`, when given, before any work (see [`check_output_path`]).
pub fn check_json_path(path: Option<&Path>) -> Result<(), Failure> {
    match path {
        Some(p) => check_output_path("--json", p),
        None => Ok(()),
    }
}

/// Checks, before any work, that `path` can be written as an output file.
pub fn check_output_path(flag: &str, path: &Path) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {}: is a directory, expected a file path",
            path.display()
        )));
    }
    Ok(())
}
