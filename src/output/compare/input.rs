//! What `ipcmark compare` reads: a run report as its typed record
//! ([`RunRecord`], `ipcmark.run/1`, its schema checked first), its strings
//! made safe before anything quotes them. A figure is paired by its
//! identity, [`FigureRecord::key`](crate::record::FigureRecord::key).

use crate::record::RunRecord;
pub use crate::record::run::ReadError;

/// A run report as `compare` reads it: the record itself (the name the
/// HTML report still uses).
pub type RunFile = RunRecord;

/// Reads a run report's text (a file given on the command line): its
/// strings made safe (they, and serde's errors that quote them, reach the
/// terminal), then its schema and every field.
pub fn read(text: &str) -> Result<RunRecord, ReadError> {
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ReadError::NotARunReport(e.to_string()))?;
    crate::output::sanitise::report(&mut value);
    RunRecord::from_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_read_is_made_safe_first() {
        let (_, text) = crate::record::run::tests::FIXTURES[0];
        let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
        value["environment"]["hostname"] = "h\u{1b}[2Jx".into();
        let run = read(&value.to_string()).unwrap();
        assert!(!run.environment.hostname.contains('\u{1b}'));
        value["schema"] = "other/1\u{1b}".into();
        assert!(
            matches!(read(&value.to_string()), Err(ReadError::Schema(s)) if !s.contains('\u{1b}'))
        );
        assert!(matches!(read("not json"), Err(ReadError::NotARunReport(_))));
    }
}
