//! What every report of a command opens with, whichever its schema: which
//! schema and build wrote it, when it ran, whether it finished, the command
//! and the machine. One type, so a reader of either report (the history's
//! columns, `show`'s "which run" line) reads them the same way.

use super::build::BuildRecord;
use super::environment::EnvironmentRecord;
use serde::{Deserialize, Serialize};

/// A report's header: its first fields, in this order, in every schema.
/// Flattened into its record (`#[serde(flatten)]`), so the JSON is the
/// fields themselves, at the top of the report, as they always were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The report's schema (`ipcmark.run/1`, `ipcmark.workload/1`).
    pub schema: String,
    /// Version of ipcmark that wrote it.
    pub ipcmark_version: String,
    /// The build that wrote it: version, git commit, dirty tree, features.
    pub build: BuildRecord,
    /// RFC 3339 start time.
    pub started_at: String,
    /// RFC 3339 end time; null while it is still going.
    pub finished_at: Option<String>,
    /// Whether everything planned was attempted (false for a partial file).
    pub complete: bool,
    /// The arguments, program name first.
    pub command_line: Vec<String>,
    /// The machine.
    pub environment: EnvironmentRecord,
}

impl Header {
    /// The command's line as the pages print it: the program's own path
    /// says nothing (`ipcmark run …`).
    pub fn command(&self) -> String {
        let mut argv = self.command_line.clone();
        if let Some(first) = argv.first_mut() {
            *first = "ipcmark".into();
        }
        argv.join(" ")
    }
}
