//! What `ipcmark watch` reads of the history and keeps in it: the index of
//! every series (which runs measured which figure on which host, from the
//! columns alone, no report read), the figures of one series, and the
//! series computed before (`watch_series`, schema version 3), valid while
//! the series' runs and the method's settings are the same.

use super::{Error, RunId, Store};
use crate::record::FigureRecord;
use crate::record::watch::SeriesRecord;
use rusqlite::{OptionalExtension, params};
use serde_json::Value;

/// One figure of one run, as the index lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRow {
    /// The run.
    pub run_id: RunId,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Its host.
    pub host: String,
    /// The figure's key (`figures.key`).
    pub key: String,
    /// The figure's place in the run's report.
    pub ordinal: i64,
}

/// A series as computed before, and what it holds for.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    /// The series' runs, in order.
    pub run_ids: Vec<RunId>,
    /// The method's settings, as the caller wrote them.
    pub settings: String,
    /// The series' record.
    pub series: SeriesRecord,
}

impl Store {
    /// Every measured figure with a latency (`status` ok, a median) of
    /// every run of `ipcmark run`, by run id and place in the report.
    pub fn watch_index(&self) -> Result<Vec<IndexRow>, Error> {
        if !self.tables {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.host, f.key, f.ordinal
                   FROM figures f JOIN runs r ON r.id = f.run_id
                  WHERE r.kind = 'run' AND f.status = 'ok' AND f.median IS NOT NULL
                  ORDER BY r.id, f.ordinal",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(IndexRow {
                    run_id: r.get(0)?,
                    started_at: r.get(1)?,
                    host: r.get(2)?,
                    key: r.get(3)?,
                    ordinal: r.get(4)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The figure at `ordinal` of run `id`, as its record (its strings made safe).
    pub fn figure(&self, id: RunId, ordinal: i64) -> Result<FigureRecord, Error> {
        let text: String = self
            .conn
            .query_row(
                "SELECT figure FROM figures WHERE run_id = ?1 AND ordinal = ?2",
                params![id, ordinal],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or_else(|| Error::Usage(format!("no figure {ordinal} in run {id}")))?;
        let mut v: Value = serde_json::from_str(&text)
            .map_err(|e| self.err(format!("run {id}: stored figure unreadable: {e}")))?;
        crate::output::sanitise::report(&mut v);
        serde_json::from_value(v)
            .map_err(|e| self.err(format!("run {id}: stored figure unreadable: {e}")))
    }

    /// The series of `key` on `host` as computed before, if any.
    pub fn cached_series(&self, host: &str, key: &str) -> Result<Option<Cached>, Error> {
        if !self.has_table("watch_series")? {
            return Ok(None);
        }
        let row: Option<(String, String, String)> = self
            .conn
            .query_row(
                "SELECT run_ids, settings, series FROM watch_series WHERE host = ?1 AND key = ?2",
                params![host, key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        // A row that no longer reads (an older ipcmark's) is computed again.
        Ok(row.and_then(|(ids, settings, series)| {
            let mut series: Value = serde_json::from_str(&series).ok()?;
            crate::output::sanitise::report(&mut series);
            Some(Cached {
                run_ids: serde_json::from_str(&ids).ok()?,
                settings,
                series: serde_json::from_value(series).ok()?,
            })
        }))
    }

    /// Keeps `cached` as the series of its record's key and host, in one
    /// transaction with the others given.
    pub fn save_series(&mut self, cached: &[Cached]) -> Result<(), Error> {
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| super::sql_error(&path, e);
        let tx = self.conn.transaction().map_err(|e| err(&e))?;
        for c in cached {
            let ids = serde_json::to_string(&c.run_ids).map_err(|e| err(&e))?;
            let series = crate::record::compact_json(&c.series).map_err(|e| err(&e))?;
            tx.execute(
                "INSERT INTO watch_series (host, key, run_ids, settings, series)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (host, key) DO UPDATE
                    SET run_ids = ?3, settings = ?4, series = ?5",
                params![c.series.host, c.series.key, ids, c.settings, series],
            )
            .map_err(|e| err(&e))?;
        }
        tx.commit().map_err(|e| err(&e))
    }
}
