//! The JSON reports: of a run ([`run`]), the records of the engine values
//! they write ([`context`], [`facts`]), and atomic writing.

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
