//! What `ipcmark compare` reads of a run report: the few fields of
//! `ipcmark.run/1` (written by `json/run.rs`) a comparison needs. They are
//! read beside where they are written, so a renamed field of the run report
//! is renamed here in the same layer.

use crate::record::SCHEMA;
use crate::record::key::FigureKey;
use serde::Deserialize;

/// The parts of a run report a comparison needs.
#[derive(Debug, Deserialize)]
pub struct RunFile {
    schema: String,
    /// Each result's identity, in `results`' order (read from the same
    /// report by the one definition of a figure's identity).
    #[serde(skip)]
    pub(super) keys: Vec<FigureKey>,
    pub(super) started_at: String,
    pub(super) environment: RunEnv,
    pub(super) results: Vec<RunResult>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RunEnv {
    pub(super) hostname: String,
    pub(super) kernel: String,
}

/// One result: what a comparison tests. What the result *is* (benchmark,
/// mode, size, how it was timed) is its [`FigureKey`], in `RunFile::keys`.
#[derive(Debug, Deserialize)]
pub(super) struct RunResult {
    /// Required of every result, checked here: a result without it has no
    /// identity to pair it by.
    #[serde(rename = "benchmark")]
    _benchmark: String,
    #[serde(rename = "mode")]
    _mode: String,
    #[serde(rename = "size_bytes")]
    _size_bytes: usize,
    pub(super) status: String,
    #[serde(default)]
    pub(super) samples_ns: Option<Vec<f64>>,
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
        let keys = value
            .get("results")
            .and_then(serde_json::Value::as_array)
            .map(|r| r.iter().map(FigureKey::of_result).collect())
            .unwrap_or_default();
        let mut file: RunFile =
            serde_json::from_value(value).map_err(|e| ReadError::NotARunReport(e.to_string()))?;
        file.keys = keys;
        if file.schema != SCHEMA {
            return Err(ReadError::Schema(file.schema));
        }
        Ok(file)
    }
}
