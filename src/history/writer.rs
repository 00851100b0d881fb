//! A run written to the history as it goes: the run's row first (not
//! complete), then each figure in a transaction of its own as it is
//! recorded or changes (a later pass merges into it), then the finished
//! report. A run killed at any point leaves its figures so far, and a row
//! that says it is not complete.
//!
//! The columns are read from the report's typed records ([`Report`]:
//! `record::RunRecord` and its `FigureRecord`s, or `record::workload`'s);
//! what is stored is the report's JSON, as `--json` writes it.

use super::{Error, Kind, RunId, Store};
use crate::output::recorder::ReportSink;
use crate::record::workload::{ConfigurationRecord, WorkloadRecord};
use crate::record::{FigureRecord, RunRecord};
use rusqlite::{Connection, params};
use serde::Deserialize;

/// One run being written.
pub struct RunWriter {
    store: Store,
    id: RunId,
    kind: Kind,
    /// The stored report (figures left out) and figures, as last written,
    /// so a save writes only what changed.
    header: String,
    figures: Vec<String>,
}

/// A report the history keeps, as its typed record.
#[derive(Debug, Clone, Copy)]
pub enum Report<'a> {
    /// `ipcmark run`'s (`ipcmark.run/1`).
    Run(&'a RunRecord),
    /// `ipcmark workload`'s (`ipcmark.workload/1`).
    Workload(&'a WorkloadRecord),
}

/// The columns of a run's row: what `ipcmark history` lists and a query
/// selects on.
#[derive(Debug, Default)]
pub(super) struct RunRow<'a> {
    started_at: &'a str,
    finished_at: Option<&'a str>,
    complete: bool,
    host: &'a str,
    kernel: &'a str,
    command_line: &'a [String],
}

/// The columns of a figure's row besides its JSON: its identity, and for a
/// run's figure its status, median and interval (a workload's
/// configuration has none of those).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FigureRow {
    key: String,
    status: Option<&'static str>,
    median: Option<f64>,
    interval_low: Option<f64>,
    interval_high: Option<f64>,
}

impl FigureRow {
    /// A run's figure: its [`FigureKey`](crate::record::key::FigureKey)
    /// (benchmark, mode, size, and cold, pacing, interval or frequency
    /// where they apply), status, median and interval.
    fn of_figure(f: &FigureRecord) -> FigureRow {
        let interval = f.precision.as_ref().map(|p| &p.interval_ns);
        FigureRow {
            key: f.key().to_string(),
            status: Some(f.status.name()),
            median: f.latency_ns.as_ref().map(|l| l.median),
            interval_low: interval.map(|i| i.low),
            interval_high: interval.map(|i| i.high),
        }
    }

    /// A workload's configuration: its name.
    fn of_configuration(c: &ConfigurationRecord) -> FigureRow {
        FigureRow {
            key: c.name.clone(),
            status: None,
            median: None,
            interval_low: None,
            interval_high: None,
        }
    }

    /// The row of one element of a report's list of figures, read as the
    /// record of `kind` it must be (an imported file's figure, one at a time).
    pub(super) fn read(kind: Kind, figure: &serde_json::Value) -> serde_json::Result<FigureRow> {
        Ok(match kind {
            Kind::Run => FigureRow::of_figure(&FigureRecord::deserialize(figure)?),
            Kind::Workload => {
                FigureRow::of_configuration(&ConfigurationRecord::deserialize(figure)?)
            }
        })
    }
}

use crate::record::compact_json as json;

impl<'a> Report<'a> {
    /// Which kind of report it is.
    pub(super) fn kind(self) -> Kind {
        match self {
            Report::Run(_) => Kind::Run,
            Report::Workload(_) => Kind::Workload,
        }
    }

    /// Its run's row.
    pub(super) fn row(self) -> RunRow<'a> {
        match self {
            Report::Run(r) => RunRow {
                started_at: &r.header.started_at,
                finished_at: r.header.finished_at.as_deref(),
                complete: r.header.complete,
                host: &r.header.environment.hostname,
                kernel: &r.header.environment.kernel,
                command_line: &r.header.command_line,
            },
            Report::Workload(w) => RunRow {
                started_at: &w.header.started_at,
                finished_at: w.header.finished_at.as_deref(),
                complete: w.header.complete,
                host: &w.header.environment.hostname,
                kernel: &w.header.environment.kernel,
                command_line: &w.header.command_line,
            },
        }
    }

    /// The report's JSON with its list of figures left empty (`runs.report`).
    fn header(self) -> Result<String, String> {
        match self {
            Report::Run(r) => json(&RunRecord {
                results: Vec::new(),
                ..r.clone()
            }),
            Report::Workload(w) => json(&WorkloadRecord {
                configurations: Vec::new(),
                ..w.clone()
            }),
        }
    }

    /// Each figure's row and JSON, in order.
    fn figures(self) -> Result<Vec<(FigureRow, String)>, String> {
        match self {
            Report::Run(r) => r
                .results
                .iter()
                .map(|f| Ok((FigureRow::of_figure(f), json(f)?)))
                .collect(),
            Report::Workload(w) => w
                .configurations
                .iter()
                .map(|c| Ok((FigureRow::of_configuration(c), json(c)?)))
                .collect(),
        }
    }
}

/// Adds a run's row of `kind` with the columns of `row`, its report stored
/// as `header`; its id.
pub(super) fn insert_run(
    conn: &Connection,
    kind: Kind,
    row: &RunRow,
    header: &str,
    imported_from: Option<&str>,
) -> rusqlite::Result<RunId> {
    conn.execute(
        "INSERT INTO runs (kind, started_at, finished_at, complete, host, kernel,
                           command_line, imported_from, report)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            kind.name(),
            row.started_at,
            row.finished_at,
            row.complete,
            row.host,
            row.kernel,
            command_line(row),
            imported_from,
            header,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Writes every column of run `id` from `row`, its report stored as
/// `header` (an import's row, written once the whole file is read).
pub(super) fn rewrite_run(
    conn: &Connection,
    id: RunId,
    row: &RunRow,
    header: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE runs SET started_at = ?2, finished_at = ?3, complete = ?4, host = ?5,
                         kernel = ?6, command_line = ?7, report = ?8
          WHERE id = ?1",
        params![
            id,
            row.started_at,
            row.finished_at,
            row.complete,
            row.host,
            row.kernel,
            command_line(row),
            header,
        ],
    )
    .map(drop)
}

/// Writes the figure of run `id` at `ordinal` with the columns of `row`
/// (its JSON `json`), replacing what was there.
pub(super) fn write_figure(
    conn: &Connection,
    id: RunId,
    ordinal: usize,
    row: &FigureRow,
    json: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO figures
                (run_id, ordinal, key, status, median, interval_low, interval_high, figure)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        id,
        ordinal as i64,
        row.key,
        row.status,
        row.median,
        row.interval_low,
        row.interval_high,
        json,
    ])
    .map(drop)
}

/// The arguments as the `command_line` column keeps them: a JSON array.
fn command_line(row: &RunRow) -> String {
    serde_json::to_string(row.command_line).unwrap_or_else(|_| "[]".into())
}

impl RunWriter {
    /// Adds a run for `report` (its figures so far are written by [`save`](Self::save)).
    pub fn start(store: Store, report: Report<'_>) -> Result<RunWriter, Error> {
        let kind = report.kind();
        let header = report.header().map_err(|e| store.err(e))?;
        let id = insert_run(&store.conn, kind, &report.row(), &header, None)
            .map_err(|e| store.sql(e))?;
        Ok(RunWriter {
            store,
            id,
            kind,
            header,
            figures: Vec::new(),
        })
    }

    /// The run's id.
    #[cfg(any(test, feature = "mpi"))]
    pub fn id(&self) -> RunId {
        self.id
    }

    /// Writes what changed in `report` since the last save: each new or
    /// changed figure in its own transaction, then the report's other
    /// fields (so `complete` is written after the last figure).
    pub fn save(&mut self, report: Report<'_>) -> Result<(), Error> {
        debug_assert_eq!(report.kind(), self.kind, "one run, one kind of report");
        let figures = report.figures().map_err(|e| self.store.err(e))?;
        for (ordinal, (row, json)) in figures.iter().enumerate() {
            if self.figures.get(ordinal) == Some(json) {
                continue;
            }
            let path = &self.store.path;
            let tx = self
                .store
                .conn
                .transaction()
                .map_err(|e| super::sql_error(path, e))?;
            write_figure(&tx, self.id, ordinal, row, json)
                .and_then(|_| tx.commit())
                .map_err(|e| super::sql_error(path, e))?;
            match self.figures.get_mut(ordinal) {
                Some(old) => old.clone_from(json),
                None => self.figures.push(json.clone()),
            }
        }
        if figures.len() < self.figures.len() {
            self.store
                .conn
                .execute(
                    "DELETE FROM figures WHERE run_id = ?1 AND ordinal >= ?2",
                    params![self.id, figures.len() as i64],
                )
                .map_err(|e| self.store.sql(e))?;
            self.figures.truncate(figures.len());
        }
        let header = report.header().map_err(|e| self.store.err(e))?;
        if header != self.header {
            let row = report.row();
            self.store
                .conn
                .execute(
                    "UPDATE runs SET report = ?2, finished_at = ?3, complete = ?4 WHERE id = ?1",
                    params![self.id, header, row.finished_at, row.complete],
                )
                .map_err(|e| self.store.sql(e))?;
            self.header = header;
        }
        Ok(())
    }
}

#[cfg(feature = "mpi")]
impl RunWriter {
    /// Stores a whole `ipcmark run` report made elsewhere (another rank of
    /// `fleet run`) in the history at `path`, as one run with the host its
    /// environment names; its id.
    pub fn store_whole(path: &std::path::Path, report: &RunRecord) -> Result<RunId, Error> {
        let mut writer = RunWriter::start(Store::open(path)?, Report::Run(report))?;
        writer.save(Report::Run(report))?;
        Ok(writer.id())
    }
}

/// The history as one more keeper of `ipcmark run`'s report: the
/// recorder hands it the report at every save.
impl ReportSink for RunWriter {
    fn saved(&mut self, report: &RunRecord) -> Result<(), String> {
        self.save(Report::Run(report)).map_err(|e| e.to_string())
    }
}
