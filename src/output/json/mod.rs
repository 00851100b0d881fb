//! The JSON reports: the conversions from engine values to the report's
//! records (`src/record/`: [`run`] for a run's figures and settings,
//! [`context`] for the machine and budget, [`facts`], [`rate`], [`load`],
//! [`remote`]), the build that wrote them ([`build`]), and atomic writing.
//!
//! **The JSON schemas are the record layer's.** Every record a report
//! writes is an owned type in `src/record/` that serialises and
//! deserialises (the run report, the machine, loads, remote facts,
//! summaries, the workload report, the comparison; `list.rs` keeps the
//! records of `ipcmark list --json`), built from engine, workload and
//! statistics results by a conversion here; nothing outside `src/record/`
//! and `src/output/` derives or names `Serialize`. A field's name, unit,
//! order and when it is left out are decided in the record, beside
//! `docs/schema/`, and the engine can rename or reshape its own types
//! without changing a report. The one object a workload fills itself is
//! its `parameters` (its resolved settings, free in shape per workload and
//! checked by the schema).
//!
//! Reading is the mirror rule: a report is read by deserialising its
//! records (`RunRecord::parse`), never field by field. A `Deserialize`
//! type elsewhere, for input that is no report of ipcmark's, may carry
//! `#[serde(...)]` attributes; a file outside output and record without
//! `Deserialize` may not (there they could only shape a report).

pub mod build;
pub mod context;
pub mod facts;
pub mod load;
pub mod rate;
pub mod remote;
pub mod run;

use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A duration as the reports write it: milliseconds, fractional.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Writes `report` (any of ipcmark's reports) to `path` atomically: a temporary file beside it, then rename,
/// so a reader never sees half a file and an interrupted run keeps the last
/// complete one.
pub fn write_atomic<T: Serialize>(path: &Path, report: &T) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile_in(dir, path)?;
    let result = (|| {
        serde_json::to_writer_pretty(&mut tmp.1, report)?;
        tmp.1.write_all(b"\n")?;
        tmp.1.sync_all()?;
        std::fs::rename(&tmp.0, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp.0);
    }
    result
}

/// Writes `text` (a page, say) to `path` atomically, as [`write_atomic`] does
/// for a JSON report.
pub fn write_text_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile_in(dir, path)?;
    let result = (|| {
        tmp.1.write_all(text.as_bytes())?;
        tmp.1.sync_all()?;
        std::fs::rename(&tmp.0, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp.0);
    }
    result
}

fn tempfile_in(dir: &Path, target: &Path) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    Ok((tmp, file))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The lines of one source file (outside `src/output/`) against the
    /// policy above: every line naming `Serialize` (not as part of
    /// `Deserialize`), and every `#[serde` attribute of a file with no
    /// `Deserialize` to give it a reading meaning.
    fn offending_lines(text: &str) -> Vec<(usize, &str)> {
        let reads = text.contains("Deserialize");
        text.lines()
            .enumerate()
            .map(|(n, line)| (n + 1, line.trim_start()))
            .filter(|(_, code)| !code.starts_with("//"))
            .filter(|(_, code)| {
                // serde's trait, not another library's `…Serializer` (an
                // HdrHistogram log's encoding of a histogram).
                code.replace("Deserialize", "")
                    .replace("Serializer", "")
                    .contains("Serialize")
                    || (code.contains("#[serde") && !reads)
            })
            .collect()
    }

    #[test]
    fn the_policy_check_tells_writing_from_reading() {
        let offending = |t: &str| offending_lines(t).len();
        assert_eq!(
            offending("#[derive(Debug, serde::Serialize)]\nstruct A;"),
            1
        );
        assert_eq!(offending("use serde::{Deserialize, Serialize};"), 1);
        assert_eq!(
            offending("use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};"),
            0
        );
        assert_eq!(offending("impl Serialize for A {}"), 1);
        assert_eq!(
            offending("#[derive(Debug)]\n#[serde(rename_all = \"kebab-case\")]"),
            1
        );
        assert_eq!(offending("// a comment naming Serialize"), 0);
        assert_eq!(
            offending("#[derive(Deserialize)]\nstruct A {\n    #[serde(default)]\n    x: u8,\n}"),
            0
        );
        assert_eq!(offending("serde_json::json!({\"a\": 1})"), 0);
    }

    /// The policy above: outside `src/record/` and `src/output/` (the engine, workloads,
    /// statistics, the command line, mechanisms, benchmarks, sys, presets)
    /// no type serialises itself (a workload's `parameters` are built with
    /// `serde_json::json!`, which is no derive). `src/remote/` is the other
    /// exception: its types are the frames of the agent's protocol, a wire
    /// format between two ipcmarks, not a report; and so is
    /// `mechanisms/dbus_wire.rs`'s body of a D-Bus message.
    #[test]
    fn nothing_outside_output_derives_serialize() {
        fn walk(dir: &Path, offenders: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    // src/remote's messages are a wire protocol between
                    // two ipcmark processes, not report records.
                    if !path.ends_with("src/output")
                        && !path.ends_with("src/record")
                        && !path.ends_with("src/remote")
                    {
                        walk(&path, offenders);
                    }
                } else if path.ends_with("src/mechanisms/dbus_wire.rs") {
                    // D-Bus's wire format, which zbus encodes through
                    // serde: a message body, not a report record.
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, code) in offending_lines(&text) {
                        offenders.push(format!("{}:{n}: {code}", path.display()));
                    }
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for layer in ["engine", "workloads", "stats", "cli"] {
            assert!(
                src.join(layer).is_dir(),
                "src/{layer} moved: update this test"
            );
        }
        let mut offenders = Vec::new();
        walk(&src, &mut offenders);
        assert!(
            offenders.is_empty(),
            "give these a record in src/output/ instead:\n{}",
            offenders.join("\n")
        );
    }
}
