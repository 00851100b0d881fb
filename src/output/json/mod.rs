//! The JSON reports: of a run ([`run`]), the records of the engine values
//! they write ([`context`], [`facts`]), the build that wrote them
//! ([`build`]), and atomic writing.
//!
//! **The JSON schemas belong to output.** Every record a report writes is a
//! type in `src/output/` (here; `workload/records.rs` for `ipcmark
//! workload`; `warnings.rs`; `cost_model.rs`), built from engine and workload
//! results by a conversion in output; engine and workload types do not
//! derive `Serialize`. A field's name, unit, order and when it is left out
//! are decided here, beside `docs/schema/`, and the engine can rename or
//! reshape its own types without changing a report. A report may keep an
//! engine value and name the function here that writes it
//! (`#[serde(serialize_with = "context::environment")]`). The one object a
//! workload fills itself is its `parameters` (its resolved settings, free in
//! shape per workload and checked by the schema).

pub mod build;
pub mod context;
pub mod facts;
pub mod run;

use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

pub use run::{Report, ResultRecord, SCHEMA, Settings};

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

    /// The policy above: no engine or workload type serialises itself (a
    /// workload's `parameters` are built with `serde_json::json!`, which is
    /// no derive).
    #[test]
    fn engine_and_workload_types_do_not_derive_serialize() {
        fn walk(dir: &Path, offenders: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, offenders);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, line) in text.lines().enumerate() {
                        let code = line.trim_start();
                        if !code.starts_with("//")
                            && (code.contains("Serialize") || code.contains("#[serde"))
                        {
                            offenders.push(format!("{}:{}: {code}", path.display(), n + 1));
                        }
                    }
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        walk(&src.join("engine"), &mut offenders);
        walk(&src.join("workloads"), &mut offenders);
        assert!(
            offenders.is_empty(),
            "give these a record in src/output/ instead:\n{}",
            offenders.join("\n")
        );
    }
}
