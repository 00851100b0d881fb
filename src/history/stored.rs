//! The one door through which a report is read back typed: a run of the
//! history (an id, `last`, `last~N`, a name given with `history --tag`) or
//! a JSON report file, opened as its record ([`StoredRun`]). Every reader
//! (`show`, `export`, `compare`, `check`, `report`, `watch`, the studies)
//! takes its runs from here, so none converts a report's JSON itself.
//!
//! Why a spec gave no record is kept apart ([`OpenError`]): each command
//! words a report that is not a run in its own way ("compare reads …",
//! "report reads …"), and those messages are part of its behaviour.

use super::{Error, Kind, RunId, Store, is_file_spec, path_or_default};
use crate::record::RunRecord;
use crate::record::workload::WorkloadRecord;
use serde_json::Value;
use std::path::Path;

/// A report read back as its typed record.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredRun {
    /// A report of `ipcmark run` (`ipcmark.run/1`). (Boxed, as the other:
    /// a record is large and an `Opened` is moved about in `Result`s.)
    Run(Box<RunRecord>),
    /// A report of `ipcmark workload` (`ipcmark.workload/1`).
    Workload(Box<WorkloadRecord>),
}

impl StoredRun {
    /// The report's schema (which record it is).
    pub fn schema(&self) -> &str {
        match self {
            StoredRun::Run(r) => &r.header.schema,
            StoredRun::Workload(w) => &w.header.schema,
        }
    }
}

/// A report opened by its spec, with the label commands name it by.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// `run N` for a run of the history, the file's path for a file.
    pub label: String,
    /// Its id in the history; `None` for a file.
    pub id: Option<RunId>,
    /// The record.
    pub run: StoredRun,
}

/// Why a spec gave no typed report.
#[derive(Debug)]
pub enum OpenError {
    /// The spec names nothing, the file cannot be read, or the history
    /// cannot be used: the history's own error, worded as every command
    /// words it.
    History(Error),
    /// The file is not JSON (serde's message, made safe).
    NotJson {
        /// The file's path.
        label: String,
        /// Why.
        message: String,
    },
    /// JSON, but not a report of a schema the history keeps.
    Schema {
        /// `run N` or the file's path.
        label: String,
        /// The schema it names; `None` when it names none.
        schema: Option<String>,
    },
    /// A report of a known schema whose fields do not read.
    Unreadable {
        /// `run N` or the file's path.
        label: String,
        /// The schema it named.
        kind: Kind,
        /// serde's message, made safe.
        message: String,
    },
}

impl From<Error> for OpenError {
    fn from(e: Error) -> Self {
        OpenError::History(e)
    }
}

impl OpenError {
    /// The error as `ipcmark show` words it (and any command that reads
    /// both kinds of report): a usage error naming the report.
    pub fn into_error(self) -> Error {
        match self {
            OpenError::History(e) => e,
            OpenError::NotJson { label, message } => {
                Error::Usage(format!("{label} is not JSON: {message}"))
            }
            OpenError::Schema { label, schema } => {
                Error::Usage(format!("{label}: {}", schema_message(schema.as_deref())))
            }
            OpenError::Unreadable {
                label,
                kind,
                message,
            } => Error::Usage(format!(
                "{label}: not an ipcmark {} report: {message}",
                kind.name()
            )),
        }
    }
}

/// Why a schema is not one the history stores (as [`Kind::of`] says it).
fn schema_message(schema: Option<&str>) -> String {
    match schema {
        None | Some("") => "not an ipcmark report (no schema)".into(),
        Some(s) => format!(
            "schema '{s}' is not one this ipcmark stores ({}, {})",
            crate::record::SCHEMA,
            crate::record::workload::SCHEMA
        ),
    }
}

/// The report `spec` names: a JSON report file, or a run of the history at
/// `db` (or the default one), which is opened, read-only, only then.
pub fn open(db: Option<&Path>, spec: &str) -> Result<Opened, OpenError> {
    if is_file_spec(spec) {
        return open_file(spec);
    }
    let store = Store::open_reader(&path_or_default(db)?)?;
    store.open_run(spec)
}

/// A spec that gave no run of `ipcmark run`: which, and what it gave.
#[derive(Debug)]
pub struct Refused {
    /// The spec as given.
    pub spec: String,
    /// What it opened as (another report), or why it opened nothing.
    pub opened: Result<Opened, OpenError>,
}

/// The run of `ipcmark run` that `spec` names, with its label.
pub fn open_run(db: Option<&Path>, spec: &str) -> Result<(String, RunRecord), Refused> {
    match open(db, spec) {
        Ok(Opened {
            label,
            run: StoredRun::Run(run),
            ..
        }) => Ok((label, *run)),
        opened => Err(Refused {
            spec: spec.to_string(),
            opened,
        }),
    }
}

/// The report file at `path`, labelled by `path` as given.
fn open_file(path: &str) -> Result<Opened, OpenError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("cannot read {path}: {e}")))?;
    let mut value: Value = serde_json::from_str(&text).map_err(|e| OpenError::NotJson {
        label: path.to_string(),
        // serde quotes the text: made safe as the report would be.
        message: crate::output::sanitise::text(&e.to_string()).into_owned(),
    })?;
    crate::output::sanitise::report(&mut value);
    Ok(Opened {
        label: path.to_string(),
        id: None,
        run: typed(path, value)?,
    })
}

/// `value` (a report made safe) read as the record its schema names.
fn typed(label: &str, value: Value) -> Result<StoredRun, OpenError> {
    let unreadable = |kind, message: String| OpenError::Unreadable {
        label: label.to_string(),
        kind,
        message,
    };
    match Kind::of(&value) {
        Ok(Kind::Run) => RunRecord::from_value(value)
            .map(|r| StoredRun::Run(Box::new(r)))
            .map_err(|e| match e {
                crate::record::run::ReadError::NotARunReport(m) => unreadable(Kind::Run, m),
                crate::record::run::ReadError::Schema(s) => OpenError::Schema {
                    label: label.to_string(),
                    schema: Some(s),
                },
            }),
        Ok(Kind::Workload) => WorkloadRecord::from_value(value)
            .map(|w| StoredRun::Workload(Box::new(w)))
            .map_err(|e| match e {
                crate::record::workload::ReadError::NotAWorkloadReport(m) => {
                    unreadable(Kind::Workload, m)
                }
                crate::record::workload::ReadError::Schema(s) => OpenError::Schema {
                    label: label.to_string(),
                    schema: Some(s),
                },
            }),
        Err(_) => Err(OpenError::Schema {
            label: label.to_string(),
            schema: crate::record::schema_of(&value).map(str::to_string),
        }),
    }
}

impl Store {
    /// The run of this history `spec` names (an id, `last`, `last~N`, a
    /// tag; never a file), read as its record.
    pub fn open_run(&self, spec: &str) -> Result<Opened, OpenError> {
        let id = self.resolve(spec)?;
        self.open_run_id(id)
    }

    /// Run `id` of this history, read as its record.
    pub fn open_run_id(&self, id: RunId) -> Result<Opened, OpenError> {
        let label = format!("run {id}");
        let value = self.load_report(id)?;
        Ok(Opened {
            run: typed(&label, value)?,
            label,
            id: Some(id),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::tests::fixtures;

    #[test]
    fn every_stored_report_opens_as_its_record_by_id_and_by_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        for (name, text) in fixtures() {
            let file = dir.path().join(format!("{name}.json"));
            std::fs::write(&file, text).unwrap();
            let mut store = Store::open(&db).unwrap();
            let kind = crate::history::check_file(&file).unwrap();
            let id = store.import_file(&file, kind, "test").unwrap();
            drop(store);
            let stored = open(Some(&db), &id.to_string()).unwrap();
            assert_eq!(stored.label, format!("run {id}"));
            assert_eq!(stored.id, Some(id));
            let from_file = open(None, file.to_str().unwrap()).unwrap();
            assert_eq!(from_file.id, None);
            assert_eq!(stored.run, from_file.run, "{name}");
            let want = crate::record::schema_of(&serde_json::from_str(text).unwrap())
                .unwrap()
                .to_string();
            assert_eq!(stored.run.schema(), want, "{name}");
        }
    }

    #[test]
    fn a_file_that_is_no_report_says_why_as_show_says_it() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.to_str().unwrap().to_string()
        };
        let cases = [
            (at("a.json", "not json"), "is not JSON: "),
            (at("b.json", "{}"), ": not an ipcmark report (no schema)"),
            (
                at("c.json", r#"{"schema": "other/1"}"#),
                ": schema 'other/1' is not one this ipcmark stores",
            ),
            (
                at("d.json", r#"{"schema": "ipcmark.run/1", "results": 3}"#),
                ": not an ipcmark run report: ",
            ),
            (
                at("e.json", r#"{"schema": "ipcmark.workload/1"}"#),
                ": not an ipcmark workload report: ",
            ),
        ];
        for (path, says) in cases {
            let Err(Error::Usage(m)) = open(None, &path).map_err(OpenError::into_error) else {
                panic!("{path} opened")
            };
            assert!(m.starts_with(&path) && m.contains(says), "{m}");
        }
        let Err(OpenError::History(Error::Usage(m))) = open(None, "/nonexistent/x.json") else {
            panic!("a missing file opened")
        };
        assert!(m.starts_with("cannot read /nonexistent/x.json"), "{m}");
    }

    #[test]
    fn a_file_is_made_safe_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let (_, text) = crate::record::run::tests::FIXTURES[0];
        let mut value: Value = serde_json::from_str(text).unwrap();
        value["environment"]["hostname"] = "h\u{1b}[2Jx".into();
        let path = dir.path().join("r.json");
        std::fs::write(&path, value.to_string()).unwrap();
        let Ok(Opened {
            run: StoredRun::Run(run),
            ..
        }) = open(None, path.to_str().unwrap())
        else {
            panic!("the report did not open")
        };
        assert!(!run.header.environment.hostname.contains('\u{1b}'));
        value["schema"] = "other/1\u{1b}".into();
        std::fs::write(&path, value.to_string()).unwrap();
        let Err(OpenError::Schema {
            schema: Some(s), ..
        }) = open(None, path.to_str().unwrap())
        else {
            panic!("another schema opened")
        };
        assert!(!s.contains('\u{1b}'), "{s}");
    }
}
