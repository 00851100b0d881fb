//! Where a run is kept as it is measured: the history's writer (`--db`,
//! `--no-save`), shared with `ipcmark workload`, and what a command says
//! when its report could not be saved everywhere.

use super::Failure;
use crate::history::Report;
use crate::history::{self, Error, RunWriter, Store};
use std::path::Path;

/// A history error as the command's failure: exit 2 for what the user
/// named, 1 for a database that cannot be used.
pub fn failure(e: Error) -> Failure {
    match e {
        Error::Usage(m) => Failure::usage(m),
        Error::Store(m) => Failure::run(m),
    }
}

/// The writer that keeps `report` in the history as it grows, for `run`
/// and `workload`; none with `--no-save`. A history given with `--db` that
/// cannot be opened refuses the command; the default one only warns, so a
/// user without a writable home can still measure.
pub fn writer(
    db: Option<&Path>,
    no_save: bool,
    report: Report<'_>,
) -> Result<Option<RunWriter>, Failure> {
    if no_save {
        return Ok(None);
    }
    let opened = history::path_or_default(db)
        .and_then(|path| Store::open(&path))
        .and_then(|store| RunWriter::start(store, report));
    match (opened, db) {
        (Ok(w), _) => Ok(Some(w)),
        (Err(e), Some(_)) => Err(failure(e)),
        (Err(e), None) => {
            eprintln!("warning: {e}; this run is not saved in the history (--no-save skips it)");
            Ok(None)
        }
    }
}

/// The line that ends a command whose report could not be saved to
/// `unsaved` of its places, if any.
pub fn unsaved_line(unsaved: usize) -> Option<String> {
    (unsaved > 0).then(|| {
        format!(
            "ipcmark: the report could not be saved to {unsaved} of its places (see the warning{} above): the results shown are not all kept",
            if unsaved > 1 { "s" } else { "" }
        )
    })
}
