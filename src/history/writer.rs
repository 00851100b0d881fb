//! A run written to the history as it goes: the run's row first (not
//! complete), then each figure in a transaction of its own as it is
//! recorded or changes (a later pass merges into it), then the finished
//! report. A run killed at any point leaves its figures so far, and a row
//! that says it is not complete.

use super::{Error, Kind, RunId, Store, figure_key};
use crate::output::recorder::ReportSink;
use rusqlite::{Connection, params};
use serde_json::Value;

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

/// `report` with its list of figures emptied, as text.
fn header_of(kind: Kind, report: &Value) -> String {
    let mut head = report.clone();
    if let Some(obj) = head.as_object_mut()
        && let Some(list) = obj.get_mut(kind.figures_key())
    {
        *list = Value::Array(Vec::new());
    }
    head.to_string()
}

fn text(report: &Value, pointer: &str) -> String {
    match report.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

fn number(f: &Value, pointer: &str) -> Option<f64> {
    f.pointer(pointer).and_then(Value::as_f64)
}

/// Adds a run's row for `report`, its report stored as `header`; its id.
pub(super) fn insert_run(
    conn: &Connection,
    kind: Kind,
    report: &Value,
    header: &str,
    imported_from: Option<&str>,
) -> rusqlite::Result<RunId> {
    conn.execute(
        "INSERT INTO runs (kind, started_at, finished_at, complete, host, kernel,
                           command_line, imported_from, report)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            kind.name(),
            text(report, "/started_at"),
            finished_at(report),
            complete(report),
            text(report, "/environment/hostname"),
            text(report, "/environment/kernel"),
            command_line(report),
            imported_from,
            header,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Writes every column of run `id` that `report` gives, its report stored
/// as `header` (an import's row, written once the whole file is read).
pub(super) fn rewrite_run(
    conn: &Connection,
    id: RunId,
    report: &Value,
    header: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE runs SET started_at = ?2, finished_at = ?3, complete = ?4, host = ?5,
                         kernel = ?6, command_line = ?7, report = ?8
          WHERE id = ?1",
        params![
            id,
            text(report, "/started_at"),
            finished_at(report),
            complete(report),
            text(report, "/environment/hostname"),
            text(report, "/environment/kernel"),
            command_line(report),
            header,
        ],
    )
    .map(drop)
}

/// Writes figure `f` (as `json`) of run `id` at `ordinal`, replacing what was there.
pub(super) fn write_figure(
    conn: &Connection,
    id: RunId,
    kind: Kind,
    ordinal: usize,
    f: &Value,
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
        figure_key(kind, f),
        f.get("status").and_then(Value::as_str),
        number(f, "/latency_ns/median"),
        number(f, "/precision/interval_ns/low"),
        number(f, "/precision/interval_ns/high"),
        json,
    ])
    .map(drop)
}

fn finished_at(report: &Value) -> Option<&str> {
    report.get("finished_at").and_then(Value::as_str)
}

fn complete(report: &Value) -> bool {
    report
        .get("complete")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn command_line(report: &Value) -> String {
    report
        .get("command_line")
        .map_or("[]".to_string(), Value::to_string)
}

impl RunWriter {
    /// Adds a run for `report` (its figures so far are written by [`save`](Self::save)).
    pub fn start(store: Store, report: &Value) -> Result<RunWriter, Error> {
        let kind = Kind::of(report)?;
        let header = header_of(kind, report);
        let id = insert_run(&store.conn, kind, report, &header, None).map_err(|e| store.err(e))?;
        Ok(RunWriter {
            store,
            id,
            kind,
            header,
            figures: Vec::new(),
        })
    }

    /// The run's id.
    #[cfg(test)]
    pub fn id(&self) -> RunId {
        self.id
    }

    /// Writes what changed in `report` since the last save: each new or
    /// changed figure in its own transaction, then the report's other
    /// fields (so `complete` is written after the last figure).
    pub fn save(&mut self, report: &Value) -> Result<(), Error> {
        let empty = Vec::new();
        let figures = report
            .get(self.kind.figures_key())
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        for (ordinal, f) in figures.iter().enumerate() {
            let json = f.to_string();
            if self.figures.get(ordinal) == Some(&json) {
                continue;
            }
            let path = &self.store.path;
            let tx = self
                .store
                .conn
                .transaction()
                .map_err(|e| super::sql_error(path, e))?;
            write_figure(&tx, self.id, self.kind, ordinal, f, &json)
                .and_then(|_| tx.commit())
                .map_err(|e| super::sql_error(path, e))?;
            match self.figures.get_mut(ordinal) {
                Some(old) => *old = json,
                None => self.figures.push(json),
            }
        }
        if figures.len() < self.figures.len() {
            self.store
                .conn
                .execute(
                    "DELETE FROM figures WHERE run_id = ?1 AND ordinal >= ?2",
                    params![self.id, figures.len() as i64],
                )
                .map_err(|e| self.store.err(e))?;
            self.figures.truncate(figures.len());
        }
        let header = header_of(self.kind, report);
        if header != self.header {
            self.store
                .conn
                .execute(
                    "UPDATE runs SET report = ?2, finished_at = ?3, complete = ?4 WHERE id = ?1",
                    params![self.id, header, finished_at(report), complete(report)],
                )
                .map_err(|e| self.store.err(e))?;
            self.header = header;
        }
        Ok(())
    }
}

/// The history as one more keeper of `ipcmark run`'s report: the
/// recorder hands it the report at every save.
impl ReportSink for RunWriter {
    fn saved(&mut self, report: &crate::record::RunRecord) -> Result<(), String> {
        let v = serde_json::to_value(report).map_err(|e| format!("history: {e}"))?;
        self.save(&v).map_err(|e| e.to_string())
    }
}
