//! What `ipcmark compare` reads of a run report: the few fields of
//! `ipcmark.run/1` (written by `json/run.rs`) a comparison needs. They are
//! read beside where they are written, so a renamed field of the run report
//! is renamed here in the same layer.

use crate::output::json::SCHEMA;
use serde::Deserialize;

/// The parts of a run report a comparison needs.
#[derive(Debug, Deserialize)]
pub struct RunFile {
    schema: String,
    pub(super) started_at: String,
    pub(super) environment: RunEnv,
    pub(super) results: Vec<RunResult>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RunEnv {
    pub(super) hostname: String,
    pub(super) kernel: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct RunResult {
    pub(super) benchmark: String,
    pub(super) mode: String,
    pub(super) size_bytes: usize,
    pub(super) status: String,
    #[serde(default)]
    pub(super) samples_ns: Option<Vec<f64>>,
    #[serde(default)]
    pub(super) cold_region_bytes: Option<u64>,
    /// Mode oneway: "saturated" or "sporadic", with `interval_ns`.
    #[serde(default)]
    pub(super) pacing: Option<String>,
    #[serde(default)]
    pub(super) interval_ns: Option<u64>,
    /// With `--passes` 2 or more: each pass's median.
    #[serde(default)]
    pub(super) passes: Option<RunPasses>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RunPasses {
    pub(super) medians_ns: Vec<f64>,
}

/// Why a text is not a run report compare can read.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON of a run report's shape (serde's message).
    NotARunReport(String),
    /// A run report of another schema version.
    Schema(String),
}

impl RunFile {
    /// Parses a run report's text and checks its schema.
    pub fn parse(text: &str) -> Result<RunFile, ReadError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ReadError::NotARunReport(e.to_string()))?;
        Self::from_value(value)
    }

    /// Reads a run report already parsed as JSON (from a file or the
    /// history) and checks its schema.
    pub fn from_value(mut value: serde_json::Value) -> Result<RunFile, ReadError> {
        // Its strings (and serde's errors, which quote them) reach the terminal.
        crate::output::sanitise::report(&mut value);
        let file: RunFile =
            serde_json::from_value(value).map_err(|e| ReadError::NotARunReport(e.to_string()))?;
        if file.schema != SCHEMA {
            return Err(ReadError::Schema(file.schema));
        }
        Ok(file)
    }
}
