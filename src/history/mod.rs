//! The history of runs: every `ipcmark run` and `ipcmark workload` kept in
//! one SQLite database (docs/history.md), written figure by figure as the
//! run goes, so a run that is stopped or killed keeps what it measured.
//!
//! It stores the JSON reports output defines, as JSON: a stored run gives
//! back the report `--json` writes, and output reads it as it reads a file.

mod import;
mod open;
mod schema;
mod writer;

pub use import::check_file;
pub use writer::RunWriter;

use crate::record::key::FigureKey;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A run's id in the history (`ipcmark history` lists them).
pub type RunId = i64;

/// Why the history could not do what was asked: a line for stderr.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the user named is not there: a bad spec, an unknown id, an
    /// empty history, a file that is no report (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The database cannot be used: unreadable, damaged, or from a newer
    /// ipcmark (exit 1).
    #[error("{0}")]
    Store(String),
}

/// The kind of report a run is, by its `schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ipcmark run` (`ipcmark.run/1`): figures under `results`.
    Run,
    /// `ipcmark workload` (`ipcmark.workload/1`): figures under `configurations`.
    Workload,
}

impl Kind {
    /// The kind of `report`, from its `schema` field.
    pub fn of(report: &Value) -> Result<Kind, Error> {
        let schema = report.get("schema").and_then(Value::as_str).unwrap_or("");
        if schema == crate::record::SCHEMA {
            Ok(Kind::Run)
        } else if schema == crate::record::workload::SCHEMA {
            Ok(Kind::Workload)
        } else if schema.is_empty() {
            Err(Error::Usage("not an ipcmark report (no schema)".into()))
        } else {
            Err(Error::Usage(format!(
                "schema '{schema}' is not one this ipcmark stores ({}, {})",
                crate::record::SCHEMA,
                crate::record::workload::SCHEMA
            )))
        }
    }

    /// The name stored in `runs.kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Workload => "workload",
        }
    }

    /// The report's field that holds its list of figures.
    pub fn figures_key(self) -> &'static str {
        match self {
            Kind::Run => "results",
            Kind::Workload => "configurations",
        }
    }

    fn from_name(name: &str) -> Kind {
        if name == "workload" {
            Kind::Workload
        } else {
            Kind::Run
        }
    }
}

/// One line of `ipcmark history`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Its id.
    pub id: RunId,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Whether every planned figure was attempted.
    pub complete: bool,
    /// Whether the run ended (false: killed, or still running).
    pub finished: bool,
    /// Host name.
    pub host: String,
    /// Kernel release.
    pub kernel: String,
    /// The arguments, program name first.
    pub command_line: Vec<String>,
    /// Figures stored.
    pub figures: usize,
    /// The file it was imported from, if it was.
    pub imported_from: Option<String>,
}

/// Which runs `ipcmark history --prune` deletes: every run any selector picks.
#[derive(Debug, Clone, Default)]
pub struct Prune {
    /// All but this many of the latest runs.
    pub keep: Option<usize>,
    /// Runs started before this time.
    pub before: Option<jiff::Timestamp>,
    /// Runs not complete (stopped, killed, or failed to finish).
    pub incomplete: bool,
}

/// The history database, open.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Whether it has its tables: a reader of a new, empty file sees an
    /// empty history (a writer makes them).
    tables: bool,
}

/// Where the history lives by default: `$XDG_DATA_HOME/ipcmark/history.sqlite`,
/// or `~/.local/share/ipcmark/history.sqlite`.
pub fn default_path() -> Result<PathBuf, Error> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or_else(|| {
            Error::Usage("neither XDG_DATA_HOME nor HOME is set: give --db PATH".into())
        })?;
    Ok(data.join("ipcmark").join("history.sqlite"))
}

/// `path`, or the default one.
pub fn path_or_default(path: Option<&Path>) -> Result<PathBuf, Error> {
    match path {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path(),
    }
}

fn sql_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Store(format!("history {}: {e}", path.display()))
}

impl Store {
    /// Where this history lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        sql_error(&self.path, e)
    }

    /// The run a spec names: an id (`12`), `last`, or `last~N` (the Nth
    /// before the last, by id: the order runs were saved in).
    pub fn resolve(&self, spec: &str) -> Result<RunId, Error> {
        let spec = spec.trim();
        if let Ok(id) = spec.parse::<RunId>() {
            let found: Option<RunId> = if self.tables {
                self.conn
                    .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                    .optional()
                    .map_err(|e| self.err(e))?
            } else {
                None
            };
            return found.ok_or_else(|| {
                Error::Usage(format!(
                    "no run {id} in the history {} (see ipcmark history)",
                    self.path.display()
                ))
            });
        }
        let back = match spec.strip_prefix("last") {
            Some("") => 0,
            Some(rest) => rest
                .strip_prefix('~')
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| bad_spec(spec))?,
            None => return Err(bad_spec(spec)),
        };
        let found: Option<RunId> = if self.tables {
            self.conn
                .query_row(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    [back],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?
        } else {
            None
        };
        let count = self.count()?;
        found.ok_or_else(|| {
            Error::Usage(if count == 0 {
                format!("the history {} is empty", self.path.display())
            } else {
                format!(
                    "'{spec}': the history {} holds only {count} run(s)",
                    self.path.display()
                )
            })
        })
    }

    fn count(&self) -> Result<usize, Error> {
        if !self.tables {
            return Ok(0);
        }
        self.conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(|e| self.err(e))
    }

    /// The run's whole JSON report, as `run --json` (or `workload --json`)
    /// wrote it: its stored report with every stored figure put back in order.
    pub fn load_report(&self, id: RunId) -> Result<Value, Error> {
        let (kind, report): (String, String) = self
            .conn
            .query_row("SELECT kind, report FROM runs WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| Error::Usage(format!("no run {id} in the history")))?;
        let mut report: Value = serde_json::from_str(&report)
            .map_err(|e| self.err(format!("run {id}: stored report unreadable: {e}")))?;
        let mut stmt = self
            .conn
            .prepare("SELECT figure FROM figures WHERE run_id = ?1 ORDER BY ordinal")
            .map_err(|e| self.err(e))?;
        let figures = stmt
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .map(|text| {
                let text = text.map_err(|e| self.err(e))?;
                serde_json::from_str::<Value>(&text)
                    .map_err(|e| self.err(format!("run {id}: stored figure unreadable: {e}")))
            })
            .collect::<Result<Vec<Value>, Error>>()?;
        if let Some(obj) = report.as_object_mut() {
            obj.insert(
                Kind::from_name(&kind).figures_key().into(),
                Value::Array(figures),
            );
        }
        // An imported report is another's text: made safe once, here.
        crate::output::sanitise::report(&mut report);
        Ok(report)
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, Error> {
        if !self.tables {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.kind, r.started_at, r.complete, r.finished_at IS NOT NULL,
                        r.host, r.kernel, r.command_line, r.imported_from,
                        (SELECT count(*) FROM figures f WHERE f.run_id = r.id)
                   FROM runs r
                  ORDER BY r.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let argv: String = r.get(7)?;
                Ok(RunSummary {
                    id: r.get(0)?,
                    started_at: r.get(2)?,
                    complete: r.get(3)?,
                    finished: r.get(4)?,
                    host: r.get(5)?,
                    kernel: r.get(6)?,
                    command_line: serde_json::from_str(&argv).unwrap_or_default(),
                    imported_from: r.get(8)?,
                    figures: r.get::<_, i64>(9)? as usize,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Deletes the runs `prune` selects, in one transaction; their ids.
    pub fn prune(&mut self, prune: &Prune) -> Result<Vec<RunId>, Error> {
        let runs = self.runs()?;
        let keep_from = prune
            .keep
            .map(|k| runs.len().saturating_sub(k))
            .unwrap_or(0);
        let mut doomed = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let old = prune.before.is_some_and(|before| {
                r.started_at
                    .parse::<jiff::Timestamp>()
                    .is_ok_and(|t| t < before)
            });
            if i < keep_from || old || (prune.incomplete && !r.complete) {
                doomed.push(r.id);
            }
        }
        let tx = self
            .conn
            .transaction()
            .map_err(|e| sql_error(&self.path, e))?;
        for id in &doomed {
            tx.execute("DELETE FROM figures WHERE run_id = ?1", [id])
                .and_then(|_| tx.execute("DELETE FROM runs WHERE id = ?1", [id]))
                .map_err(|e| sql_error(&self.path, e))?;
        }
        tx.commit().map_err(|e| sql_error(&self.path, e))?;
        Ok(doomed)
    }
}

fn bad_spec(spec: &str) -> Error {
    Error::Usage(format!(
        "'{spec}' names no run: give an id, last, last~N or a JSON report"
    ))
}

fn user_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map(|v| v.max(0) as usize)
}

/// Whether `spec` names a file rather than a stored run.
pub fn is_file_spec(spec: &str) -> bool {
    Path::new(spec).is_file() || spec.ends_with(".json")
}

/// The JSON report `spec` names, with a label for it (the file's path, or
/// `run N`): the helper `ipcmark compare` and `ipcmark report` share. The
/// history (`db`, or the default one) is opened only for a stored run.
pub fn load_spec(db: Option<&Path>, spec: &str) -> Result<(String, Value), Error> {
    if is_file_spec(spec) {
        let text = std::fs::read_to_string(spec)
            .map_err(|e| Error::Usage(format!("cannot read {spec}: {e}")))?;
        let mut v = serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{spec} is not JSON: {e}")))?;
        crate::output::sanitise::report(&mut v);
        return Ok((spec.to_string(), v));
    }
    let store = Store::open_reader(&path_or_default(db)?)?;
    let id = store.resolve(spec)?;
    Ok((format!("run {id}"), store.load_report(id)?))
}

/// What a figure is, for `figures.key`: a run's figure by its
/// [`FigureKey`] (benchmark, mode, size, and cold, pacing, interval or
/// frequency where they apply); a workload's configuration by its name.
fn figure_key(kind: Kind, f: &Value) -> String {
    let s = |k: &str| {
        f.get(k).map_or(String::new(), |v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    match kind {
        Kind::Workload => s("name"),
        Kind::Run => FigureKey::of_result(f).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(results: Vec<Value>) -> Value {
        json!({
            "schema": crate::record::SCHEMA,
            "started_at": "2026-11-24T04:00:00Z",
            "finished_at": null,
            "complete": false,
            "command_line": ["ipcmark", "run", "--quick"],
            "environment": {"hostname": "h", "kernel": "6.18"},
            "results": results,
            "warnings": [],
        })
    }

    fn figure(name: &str, median: f64) -> Value {
        json!({"benchmark": name, "mode": "pingpong", "size_bytes": 64, "status": "ok",
               "latency_ns": {"median": median},
               "precision": {"interval_ns": {"low": median - 1.5, "high": median + 0.25}}})
    }

    #[test]
    fn a_report_saved_step_by_step_comes_back_key_for_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut r = report(vec![]);
        let mut w = RunWriter::start(Store::open(&path).unwrap(), &r).unwrap();
        r["results"] = json!([figure("pipe", 1_234.567_890_123_4)]);
        w.save(&r).unwrap();
        r["results"] = json!([figure("pipe", 1200.1), figure("fifo", 0.1 + 0.2)]);
        r["complete"] = json!(true);
        r["finished_at"] = json!("2026-11-24T04:01:00Z");
        w.save(&r).unwrap();
        let id = w.id();
        let store = Store::open_existing(&path).unwrap();
        let back = store.load_report(id).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&r).unwrap()
        );
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert!(runs[0].complete && runs[0].finished);
        assert_eq!(runs[0].figures, 2);
    }

    #[test]
    fn specs_resolve_by_id_last_and_last_tilde_n() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let empty = Store::open(&path).unwrap();
        assert!(matches!(empty.resolve("last"), Err(Error::Usage(m)) if m.contains("empty")));
        let ids: Vec<RunId> = (0..3)
            .map(|_| {
                RunWriter::start(Store::open(&path).unwrap(), &report(vec![]))
                    .unwrap()
                    .id()
            })
            .collect();
        let s = Store::open(&path).unwrap();
        assert_eq!(s.resolve("last").unwrap(), ids[2]);
        assert_eq!(s.resolve("last~2").unwrap(), ids[0]);
        assert_eq!(s.resolve(&ids[1].to_string()).unwrap(), ids[1]);
        for bad in ["last~3", "999", "lastt", "last~x", "first"] {
            assert!(matches!(s.resolve(bad), Err(Error::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn prune_deletes_what_its_selectors_pick() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut done = report(vec![figure("pipe", 1.0)]);
        done["complete"] = json!(true);
        let ids: Vec<RunId> = [&done, &report(vec![]), &done, &done]
            .iter()
            .map(|r| {
                let mut w = RunWriter::start(Store::open(&path).unwrap(), r).unwrap();
                w.save(r).unwrap();
                w.id()
            })
            .collect();
        let mut s = Store::open(&path).unwrap();
        let gone = s
            .prune(&Prune {
                incomplete: true,
                ..Prune::default()
            })
            .unwrap();
        assert_eq!(gone, vec![ids[1]]);
        let gone = s
            .prune(&Prune {
                keep: Some(1),
                ..Prune::default()
            })
            .unwrap();
        assert_eq!(gone, vec![ids[0], ids[2]]);
        let left: Vec<RunId> = s.runs().unwrap().iter().map(|r| r.id).collect();
        assert_eq!(left, vec![ids[3]]);
        let figures: i64 = s
            .conn
            .query_row("SELECT count(*) FROM figures", [], |r| r.get(0))
            .unwrap();
        assert_eq!(figures, 1);
    }
}
