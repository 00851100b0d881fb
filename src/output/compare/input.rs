//! What `ipcmark compare` reads: a run report as its typed record
//! ([`RunRecord`], `ipcmark.run/1`), opened by `history::open` (its schema
//! checked first, its strings made safe before anything quotes them). A
//! figure is paired by its identity,
//! [`FigureRecord::key`](crate::record::FigureRecord::key).

use crate::record::RunRecord;

/// A run report as `compare` reads it: the record itself (the name the
/// HTML report still uses).
pub type RunFile = RunRecord;
