//! The history of runs: every `ipcmark run` and `ipcmark workload` kept in
//! one SQLite database (docs/history.md), written figure by figure as the
//! run goes, so a run that is stopped or killed keeps what it measured.
//!
//! It stores the JSON reports output writes, as JSON, and hands them back
//! typed: [`open`] (`stored.rs`) opens a stored run or a report file as its
//! record ([`StoredRun`]), the one door every reader goes through
//! (`export` alone passes the stored JSON through as it was written). Its
//! columns (a run's start, host, completion; a figure's key, status,
//! median and interval) are read from the reports' typed records
//! (`record`), never from their JSON by path.

mod class;
mod import;
mod open;
mod schema;
mod selftest;
mod stored;
mod watch;
mod writer;

pub use import::check_file;
pub use stored::{OpenError, Opened, Refused, StoredRun, open, open_run};
pub use watch::Cached;
pub use writer::{Report, RunWriter};

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
        let schema = crate::record::schema_of(report).unwrap_or("");
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
    /// Which report it is (a run or a workload).
    pub kind: Kind,
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

/// An SQLite error a user can act on, said in ipcmark's words, with the
/// library's own beside it; any other as the library says it.
fn sqlite_error(path: &Path, e: &rusqlite::Error) -> Error {
    match in_words(e) {
        Some(what) => Error::Store(format!(
            "history {}: cannot be written: {what} ({e})",
            path.display()
        )),
        None => sql_error(path, e),
    }
}

/// What an SQLite error means for a user who can do something about it:
/// a full disk, a read-only file or directory, a file that is no database.
fn in_words(e: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode as C;
    Some(match e.sqlite_error_code()? {
        C::DiskFull => "the disk is full (or the file system's quota is reached)",
        C::ReadOnly => "the file or its directory is read-only",
        C::CannotOpen => "the file cannot be opened (a missing or unwritable directory)",
        C::PermissionDenied => "permission denied",
        C::NotADatabase => "the file is not a database",
        C::DatabaseCorrupt => "the database is damaged",
        C::SystemIoFailure => "the disk failed to read or write",
        _ => return None,
    })
}

impl Store {
    /// Where this history lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        sql_error(&self.path, e)
    }

    /// An SQLite error of this history, in words where a user can act on it.
    fn sql(&self, e: rusqlite::Error) -> Error {
        sqlite_error(&self.path, &e)
    }

    /// The run a spec names: an id (`12`), `last`, or `last~N` (the Nth
    /// before the last, by id: the order runs were saved in), each of the
    /// last two optionally of one host (`last@HOST`, `last~N@HOST`: a
    /// history that holds several machines' runs).
    pub fn resolve(&self, spec: &str) -> Result<RunId, Error> {
        let spec = spec.trim();
        let (spec, host) = match spec.split_once('@') {
            Some((last, host)) if last.starts_with("last") && !host.is_empty() => {
                (last, Some(host))
            }
            _ => (spec, None),
        };
        if let Ok(id) = spec.parse::<RunId>() {
            let found: Option<RunId> = if self.tables {
                self.conn
                    .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                    .optional()
                    .map_err(|e| self.sql(e))?
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
            None => return self.tagged(spec)?.ok_or_else(|| bad_spec(spec)),
        };
        let found: Option<RunId> = if self.tables {
            self.conn
                .query_row(
                    "SELECT id FROM runs WHERE ?2 IS NULL OR host = ?2 \
                     ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    rusqlite::params![back, host],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.sql(e))?
        } else {
            None
        };
        if let Some(id) = found {
            return Ok(id);
        }
        let count = self.count()?;
        let host_runs = match host {
            Some(h) if self.tables => self
                .conn
                .query_row("SELECT COUNT(*) FROM runs WHERE host = ?1", [h], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|e| self.sql(e))?,
            _ => 0,
        };
        let shown = |h: &str| crate::output::sanitise::text(h).into_owned();
        Err(Error::Usage(match host {
            _ if count == 0 => format!("the history {} is empty", self.path.display()),
            Some(h) if host_runs == 0 => format!(
                "no run of host '{}' in the history {} (ipcmark history --host NAME lists one host's)",
                shown(h),
                self.path.display()
            ),
            Some(h) => format!(
                "'{spec}@{}': the history {} holds only {host_runs} run(s) of that host",
                shown(h),
                self.path.display()
            ),
            None => format!(
                "'{spec}': the history {} holds only {count} run(s)",
                self.path.display()
            ),
        }))
    }

    /// Whether the history has the table `name` (a reader of a history of
    /// an older schema may find a later table missing).
    fn has_table(&self, name: &str) -> Result<bool, Error> {
        if !self.tables {
            return Ok(false);
        }
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [name],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.sql(e))
    }

    /// The run the name `name` names (`ipcmark history --tag NAME RUN`).
    pub fn tagged(&self, name: &str) -> Result<Option<RunId>, Error> {
        if !self.has_table("tags")? {
            return Ok(None);
        }
        self.conn
            .query_row("SELECT run_id FROM tags WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Every name and the run it names, by name.
    pub fn tags(&self) -> Result<Vec<(String, RunId)>, Error> {
        if !self.has_table("tags")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT name, run_id FROM tags ORDER BY name")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// Names run `id` `name` (a name of letters, digits, `.`, `_` and `-`
    /// that no other spec reads as a run: not a number, not `last…`); a
    /// name that named another run moves. The run it named before, if any.
    pub fn tag(&mut self, name: &str, id: RunId, now: &str) -> Result<Option<RunId>, Error> {
        check_tag(name)?;
        let before = self.tagged(name)?;
        self.conn
            .execute(
                "INSERT INTO tags (name, run_id, tagged_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (name) DO UPDATE SET run_id = ?2, tagged_at = ?3",
                rusqlite::params![name, id, now],
            )
            .map_err(|e| self.sql(e))?;
        Ok(before)
    }

    fn count(&self) -> Result<usize, Error> {
        if !self.tables {
            return Ok(0);
        }
        self.conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(|e| self.sql(e))
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
            .map_err(|e| self.sql(e))?
            .ok_or_else(|| Error::Usage(format!("no run {id} in the history")))?;
        let mut report: Value = serde_json::from_str(&report)
            .map_err(|e| self.err(format!("run {id}: stored report unreadable: {e}")))?;
        let mut stmt = self
            .conn
            .prepare("SELECT figure FROM figures WHERE run_id = ?1 ORDER BY ordinal")
            .map_err(|e| self.sql(e))?;
        let figures = stmt
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?
            .map(|text| {
                let text = text.map_err(|e| self.sql(e))?;
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
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                let argv: String = r.get(7)?;
                Ok(RunSummary {
                    id: r.get(0)?,
                    kind: Kind::from_name(&r.get::<_, String>(1)?),
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
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
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
        "'{spec}' names no run: give an id, last, last~N (last@HOST, last~N@HOST: of one host), a name given with history --tag, or a JSON report"
    ))
}

/// Whether `name` may name a run: letters, digits, `.`, `_`, `-`, and
/// read as nothing else (a number, `last…`, a file).
fn check_tag(name: &str) -> Result<(), Error> {
    let chars = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let other = name.parse::<RunId>().is_ok() || name.starts_with("last") || is_file_spec(name);
    if !chars || other {
        return Err(Error::Usage(format!(
            "'{name}' cannot name a run: use up to 64 letters, digits, '.', '_' or '-', not a number, not starting with 'last', not a file's name"
        )));
    }
    Ok(())
}

fn user_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map(|v| v.max(0) as usize)
}

/// Whether `spec` names a file rather than a stored run.
pub fn is_file_spec(spec: &str) -> bool {
    Path::new(spec).is_file() || spec.ends_with(".json")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::RunRecord;
    use crate::record::workload::WorkloadRecord;

    /// Every report of tests/reports/: each run's, then each workload's,
    /// with its name and text.
    pub(crate) fn fixtures() -> impl Iterator<Item = (&'static str, &'static str)> {
        let runs = crate::record::run::tests::FIXTURES.iter();
        runs.chain(crate::record::workload::tests::FIXTURES)
            .copied()
    }

    /// A run report of tests/reports/.
    fn run(name: &str) -> RunRecord {
        let (_, text) = crate::record::run::tests::FIXTURES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap();
        RunRecord::parse(text).unwrap()
    }

    /// `n` runs saved in the history at `path` (the ipc-quick report's,
    /// as they start); their ids.
    pub(crate) fn saved_runs(path: &Path, n: usize) -> Vec<RunId> {
        let r = started(&run("ipc-quick"));
        (0..n)
            .map(|_| {
                RunWriter::start(Store::open(path).unwrap(), Report::Run(&r))
                    .unwrap()
                    .id()
            })
            .collect()
    }

    /// `whole` as it starts: no figure yet, not complete, not finished.
    fn started(whole: &RunRecord) -> RunRecord {
        let mut r = RunRecord {
            results: Vec::new(),
            ..whole.clone()
        };
        r.header.complete = false;
        r.header.finished_at = None;
        r
    }

    /// One column of every figure of run `id`, in order.
    fn column<T: rusqlite::types::FromSql>(store: &Store, id: RunId, col: &str) -> Vec<T> {
        store
            .conn
            .prepare(&format!(
                "SELECT {col} FROM figures WHERE run_id = ?1 ORDER BY ordinal"
            ))
            .unwrap()
            .query_map([id], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Every report, saved figure by figure as a run saves it (a later pass
    /// changing a figure already stored), comes back byte for byte, and its
    /// columns are its records' key, status, median and interval.
    #[test]
    fn every_report_saved_step_by_step_comes_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        for (name, text) in crate::record::run::tests::FIXTURES {
            let whole = RunRecord::parse(text).unwrap();
            let mut r = started(&whole);
            let mut w = RunWriter::start(Store::open(&path).unwrap(), Report::Run(&r)).unwrap();
            for f in &whole.results {
                r.results.push(f.clone());
                w.save(Report::Run(&r)).unwrap();
            }
            // A later pass merges into the first figure.
            if let Some(latency) = r.results[0].latency_ns.as_mut() {
                latency.median += 1.0;
            }
            w.save(Report::Run(&r)).unwrap();
            w.save(Report::Run(&whole)).unwrap();
            let (id, store) = (w.id(), Store::open_existing(&path).unwrap());
            let back = serde_json::to_string_pretty(&store.load_report(id).unwrap()).unwrap();
            assert_eq!(back + "\n", *text, "{name}");
            let keys: Vec<String> = whole.results.iter().map(|f| f.key().to_string()).collect();
            assert_eq!(column::<String>(&store, id, "key"), keys, "{name}");
            let status: Vec<String> = whole
                .results
                .iter()
                .map(|f| f.status.name().to_string())
                .collect();
            assert_eq!(column::<String>(&store, id, "status"), status, "{name}");
            let medians: Vec<Option<f64>> = whole
                .results
                .iter()
                .map(|f| f.latency_ns.as_ref().map(|l| l.median))
                .collect();
            assert_eq!(column::<Option<f64>>(&store, id, "median"), medians);
            let lows: Vec<Option<f64>> = whole
                .results
                .iter()
                .map(|f| f.precision.as_ref().map(|p| p.interval_ns.low))
                .collect();
            assert_eq!(column::<Option<f64>>(&store, id, "interval_low"), lows);
            let runs = store.runs().unwrap();
            let row = runs.iter().find(|s| s.id == id).unwrap();
            assert!(row.complete && row.finished, "{name}");
            assert_eq!(row.figures, whole.results.len());
            assert_eq!(row.host, whole.header.environment.hostname);
            assert_eq!(row.command_line, whole.header.command_line);
        }
        for (name, text) in crate::record::workload::tests::FIXTURES {
            let whole = crate::record::workload::tests::parse(text).unwrap();
            let mut r = WorkloadRecord {
                configurations: Vec::new(),
                ..whole.clone()
            };
            (r.header.complete, r.header.finished_at) = (false, None);
            let mut w =
                RunWriter::start(Store::open(&path).unwrap(), Report::Workload(&r)).unwrap();
            for c in &whole.configurations {
                r.configurations.push(c.clone());
                w.save(Report::Workload(&r)).unwrap();
            }
            w.save(Report::Workload(&whole)).unwrap();
            let (id, store) = (w.id(), Store::open_existing(&path).unwrap());
            let back = serde_json::to_string_pretty(&store.load_report(id).unwrap()).unwrap();
            assert_eq!(back + "\n", *text, "{name}");
            let names: Vec<String> = whole
                .configurations
                .iter()
                .map(|c| c.name.clone())
                .collect();
            assert_eq!(column::<String>(&store, id, "key"), names, "{name}");
            assert!(
                column::<Option<String>>(&store, id, "status")
                    .iter()
                    .all(Option::is_none)
            );
        }
    }

    #[test]
    fn a_report_that_loses_figures_loses_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut r = run("ipc-quick");
        let mut w = RunWriter::start(Store::open(&path).unwrap(), Report::Run(&r)).unwrap();
        w.save(Report::Run(&r)).unwrap();
        r.results.truncate(1);
        w.save(Report::Run(&r)).unwrap();
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(column::<String>(&store, w.id(), "key").len(), 1);
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(store.load_report(w.id()).unwrap(), back);
    }

    #[test]
    fn specs_resolve_by_id_last_last_tilde_n_and_one_hosts_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let empty = Store::open(&path).unwrap();
        assert!(matches!(empty.resolve("last"), Err(Error::Usage(m)) if m.contains("empty")));
        let r = started(&run("ipc-quick"));
        let ids: Vec<RunId> = (0..3)
            .map(|_| {
                RunWriter::start(Store::open(&path).unwrap(), Report::Run(&r))
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
        // A history of two hosts: the last of one of them.
        let mut other = r.clone();
        other.header.environment.hostname = "node-b".into();
        let b = RunWriter::start(Store::open(&path).unwrap(), Report::Run(&other))
            .unwrap()
            .id();
        let s = Store::open(&path).unwrap();
        let here = r.header.environment.hostname.clone();
        assert_eq!(s.resolve("last").unwrap(), b);
        assert_eq!(s.resolve("last@node-b").unwrap(), b);
        assert_eq!(s.resolve(&format!("last@{here}")).unwrap(), ids[2]);
        assert_eq!(s.resolve(&format!("last~1@{here}")).unwrap(), ids[1]);
        let only = s.resolve("last~1@node-b");
        assert!(
            matches!(&only, Err(Error::Usage(m)) if m.contains("only 1 run(s) of that host")),
            "{only:?}"
        );
        let none = s.resolve("last@node-c");
        assert!(
            matches!(&none, Err(Error::Usage(m)) if m.contains("no run of host 'node-c'")),
            "{none:?}"
        );
    }

    #[test]
    fn a_tag_names_a_run_moves_when_given_again_and_goes_with_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let r = started(&run("ipc-quick"));
        let ids: Vec<RunId> = (0..2)
            .map(|_| {
                RunWriter::start(Store::open(&path).unwrap(), Report::Run(&r))
                    .unwrap()
                    .id()
            })
            .collect();
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.tag("base", ids[0], "t").unwrap(), None);
        assert_eq!(s.resolve("base").unwrap(), ids[0]);
        assert_eq!(s.tag("base", ids[1], "t").unwrap(), Some(ids[0]));
        assert_eq!(s.resolve("base").unwrap(), ids[1]);
        assert_eq!(s.tags().unwrap(), vec![("base".to_string(), ids[1])]);
        for bad in ["12", "last", "last~1", "a/b", "x.json", "", "a b"] {
            assert!(
                matches!(s.tag(bad, ids[0], "t"), Err(Error::Usage(_))),
                "{bad}"
            );
        }
        assert!(matches!(s.resolve("nobase"), Err(Error::Usage(m)) if m.contains("--tag")));
        s.prune(&Prune {
            keep: Some(1),
            ..Prune::default()
        })
        .unwrap();
        s.prune(&Prune {
            keep: Some(0),
            ..Prune::default()
        })
        .unwrap();
        assert!(s.tags().unwrap().is_empty());
        assert!(s.resolve("base").is_err());
    }

    #[test]
    fn prune_deletes_what_its_selectors_pick() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut done = run("op");
        done.results.truncate(1);
        let stopped = started(&done);
        let ids: Vec<RunId> = [&done, &stopped, &done, &done]
            .iter()
            .map(|r| {
                let mut w = RunWriter::start(Store::open(&path).unwrap(), Report::Run(r)).unwrap();
                w.save(Report::Run(r)).unwrap();
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
