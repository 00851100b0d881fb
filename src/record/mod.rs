//! The records ipcmark writes and reads back: what a report's parts are,
//! defined once for every reader. Each is an owned type that serialises to
//! the report's JSON and deserialises from it (`Serialize + Deserialize`),
//! so reading a report is parsing it into [`RunRecord`] and checking its
//! schema ([`RunRecord::parse`]); nothing outside this layer looks a field
//! up by its JSON path. A figure's identity is [`key::FigureKey`].
//!
//! Records are built from the engine's results by conversions in
//! `output::json` (this layer knows no engine type), and every renderer —
//! the page of `run` and `show`, CSV, the HTML report, `compare`, the
//! history — reads them.

pub mod advise;
pub mod build;
pub mod check;
pub mod class;
pub mod compare;
pub mod doctor;
pub mod environment;
pub mod explain;
pub mod facts;
pub mod fleet;
pub mod header;
pub mod key;
pub mod load;
pub mod map;
pub mod placement;
pub mod rate;
pub mod remote;
mod report_views;
pub mod run;
pub mod selftest;
pub mod summary;
pub mod tax;
pub mod units;
pub mod watch;
pub mod workload;

pub use run::{FigureRecord, Mode, Peer, RunRecord, SCHEMA, Settings, Status};

/// The `schema` a report's JSON names, if it names one: which record reads it.
pub fn schema_of(report: &serde_json::Value) -> Option<&str> {
    report.get("schema").and_then(serde_json::Value::as_str)
}

/// Reads a field that may be absent, null or a value as `Option<Option<T>>`:
/// absent is `None` (by `#[serde(default)]`), a present null `Some(None)`,
/// so a null the writer wrote is read back as written (serde alone reads a
/// present null as absent).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A record's JSON, compact (as the history stores a report).
pub fn compact_json<T: serde::Serialize>(record: &T) -> Result<String, String> {
    serde_json::to_string(record).map_err(|e| format!("cannot represent the report: {e}"))
}

/// Where two texts part, for a test's message: the first line that
/// differs (1-based), with each side's line; `None` when they are equal.
#[cfg(test)]
pub(crate) fn first_difference(got: &str, want: &str) -> Option<String> {
    if got == want {
        return None;
    }
    let line = got
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(got.lines().count().min(want.lines().count()));
    Some(format!(
        "line {}:\n  got  {:?}\n  want {:?}",
        line + 1,
        got.lines().nth(line),
        want.lines().nth(line)
    ))
}

/// Panics, naming `name` and where they part, unless `record` written
/// again (as `--json` writes it) is `text` byte for byte.
#[cfg(test)]
pub(crate) fn assert_writes_back<T: serde::Serialize>(name: &str, record: &T, text: &str) {
    let again = serde_json::to_string_pretty(record).unwrap() + "\n";
    if let Some(at) = first_difference(&again, text) {
        panic!("{name}: written again, differs at {at}");
    }
}
