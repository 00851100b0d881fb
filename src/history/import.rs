//! `ipcmark import` of a report of any size, in bounded memory: the file is
//! read from a buffered reader, never held whole, twice. The first reading
//! checks it is JSON and a report this ipcmark stores (each figure read as
//! its record, `FigureRecord` or a workload's `ConfigurationRecord`, then
//! the rest as the report's), and finds its kind; the second stores each
//! figure as it is parsed, its columns read from its record and its JSON as
//! the file wrote it, so only the report's other fields and one figure are
//! in memory at a time. The whole run is stored in one transaction: a file
//! that fails half-way stores nothing.

use super::writer::{FigureRow, Report, RunRow};
use super::{Error, Kind, RunId, Store, writer};
use crate::record::RunRecord;
use crate::record::workload::WorkloadRecord;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::BufReader;
use std::path::Path;

/// The two fields that list a report's figures, by kind.
const FIGURE_KEYS: [&str; 2] = ["results", "configurations"];

/// What hands each figure on: the list's field, its place in the list, the figure.
type OnFigure<'a> = dyn FnMut(&'static str, usize, Value) -> Result<(), Error> + 'a;

/// A file that is not a report of `kind`: `why` (serde's words, which may
/// quote the file: made safe to print).
fn not_a_report(path: &Path, kind: Kind, why: &str) -> Error {
    Error::Usage(format!(
        "{}: not an ipcmark {} report: {}",
        path.display(),
        kind.name(),
        crate::output::sanitise::text(why)
    ))
}

/// The report's fields other than its figures (`header`, the list of
/// figures empty), read as the record of `kind` (its schema checked
/// again): its run's row, handed to `with`.
fn with_row<T>(
    path: &Path,
    kind: Kind,
    header: &Value,
    with: impl FnOnce(&RunRow) -> T,
) -> Result<T, Error> {
    let bad = |e: &dyn fmt::Display| {
        Error::Usage(format!(
            "{}: {}",
            path.display(),
            crate::output::sanitise::text(&e.to_string())
        ))
    };
    Ok(match kind {
        Kind::Run => {
            let r = RunRecord::from_value(header.clone()).map_err(|e| bad(&e))?;
            with(&Report::Run(&r).row())
        }
        Kind::Workload => {
            let w = WorkloadRecord::from_value(header.clone()).map_err(|e| bad(&e))?;
            with(&Report::Workload(&w).row())
        }
    })
}

/// Reads the report at `path` once, checking it is JSON and a report this
/// ipcmark stores, without storing anything or holding its figures: each
/// figure and the rest of the report are read as their records, one figure
/// at a time. Its kind.
pub fn check_file(path: &Path) -> Result<Kind, Error> {
    // The kind is known only once the schema is read, which may follow the
    // figures: each list is read as the figures of its kind, and the first
    // that is not one is kept until then.
    let mut wrong: Vec<(&'static str, String)> = Vec::new();
    let header = read(path, &FIGURE_KEYS, &mut |key, i, f| {
        let kind = [Kind::Run, Kind::Workload]
            .into_iter()
            .find(|k| k.figures_key() == key);
        if let Some(kind) = kind
            && !wrong.iter().any(|(k, _)| *k == key)
            && let Err(e) = FigureRow::read(kind, &f)
        {
            wrong.push((key, format!("{key}[{i}]: {e}")));
        }
        Ok(())
    })?;
    let kind = Kind::of(&header).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    if let Some((_, why)) = wrong.iter().find(|(k, _)| *k == kind.figures_key()) {
        return Err(not_a_report(path, kind, why));
    }
    with_row(path, kind, &header, |_| ())?;
    Ok(kind)
}

/// Reads the report at `path`, handing each figure of the lists under
/// `streamed` to `on_figure` as it is parsed and leaving it out of the
/// result: the report's other fields, in order, each streamed list empty.
fn read(
    path: &Path,
    streamed: &[&'static str],
    on_figure: &mut OnFigure<'_>,
) -> Result<Value, Error> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::Usage(format!("cannot read {}: {e}", path.display())))?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, file));
    let mut failed = None;
    let top = Top {
        streamed,
        on_figure,
        failed: &mut failed,
    };
    let parsed = top.deserialize(&mut de).and_then(|header| {
        de.end()?;
        Ok(header)
    });
    // An error from storing a figure is the import's, not a syntax error.
    if let Some(e) = failed {
        return Err(e);
    }
    parsed.map_err(|e| {
        Error::Usage(if e.is_io() {
            format!("cannot read {}: {e}", path.display())
        } else {
            format!("{} is not JSON: {e}", path.display())
        })
    })
}

/// The report's top-level object.
struct Top<'a, 'f> {
    streamed: &'a [&'static str],
    on_figure: &'a mut OnFigure<'f>,
    /// The error `on_figure` returned, which ended the parse.
    failed: &'a mut Option<Error>,
}

impl<'de> DeserializeSeed<'de> for Top<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object (an ipcmark report)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut header = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some(&list) = self.streamed.iter().find(|k| **k == key) else {
                let v: Value = map.next_value()?;
                header.insert(key, v);
                continue;
            };
            if header.contains_key(&key) {
                return Err(de::Error::custom(format!("'{key}' appears twice")));
            }
            map.next_value_seed(Figures {
                list,
                on_figure: &mut *self.on_figure,
                failed: &mut *self.failed,
            })?;
            header.insert(key, Value::Array(Vec::new()));
        }
        Ok(Value::Object(header))
    }
}

/// The list of figures, each handed on as it is parsed. Anything but a
/// list holds no figures (as a whole report read at once would say).
struct Figures<'a, 'f> {
    /// The list's field.
    list: &'static str,
    on_figure: &'a mut OnFigure<'f>,
    failed: &'a mut Option<Error>,
}

impl<'de> DeserializeSeed<'de> for Figures<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Figures<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of figures")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(f) = seq.next_element::<Value>()? {
            if let Err(e) = (self.on_figure)(self.list, i, f) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

impl Store {
    /// Stores the report at `path` (its kind found by [`check_file`]) as a
    /// run imported from `source`, in one transaction; its id. Each figure
    /// is read as its record for its columns and stored as the file wrote
    /// it, one at a time.
    pub fn import_file(&mut self, path: &Path, kind: Kind, source: &str) -> Result<RunId, Error> {
        let store_path = self.path.clone();
        let err = |e: rusqlite::Error| super::sql_error(&store_path, e);
        let tx = self.conn.transaction().map_err(err)?;
        // The run's row comes first, for its figures to refer to; its
        // fields, some of which may follow the figures in the file, are
        // written once the file is read. No one sees it before the commit.
        let id =
            writer::insert_run(&tx, kind, &RunRow::default(), "{}", Some(source)).map_err(err)?;
        let header = read(path, &[kind.figures_key()], &mut |list, i, f| {
            let row = FigureRow::read(kind, &f)
                .map_err(|e| not_a_report(path, kind, &format!("{list}[{i}]: {e}")))?;
            writer::write_figure(&tx, id, i, &row, &f.to_string()).map_err(err)
        })?;
        if Kind::of(&header).ok() != Some(kind) {
            return Err(Error::Usage(format!(
                "{} changed while it was imported",
                path.display()
            )));
        }
        let text = header.to_string();
        with_row(path, kind, &header, |row| {
            writer::rewrite_run(&tx, id, row, &text)
        })?
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::writer::RunWriter;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Every row and column of the history, as text.
    fn dump(store: &Store) -> Vec<String> {
        let rows = |sql: &str| -> Vec<String> {
            let mut stmt = store.conn.prepare(sql).unwrap();
            let n = stmt.column_count();
            stmt.query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap()
            .map(|r| r.unwrap().join(" | "))
            .collect()
        };
        let mut all = rows(
            "SELECT kind, started_at, finished_at, complete, host, kernel, command_line, report
               FROM runs ORDER BY id",
        );
        all.extend(rows(
            "SELECT run_id, ordinal, key, status, median, interval_low, interval_high, figure
               FROM figures ORDER BY run_id, ordinal",
        ));
        all
    }

    /// A report imported from its file (its JSON read one figure at a time)
    /// is stored as the run that wrote it stores it (its records): the same
    /// columns, the same text.
    #[test]
    fn an_imported_report_is_stored_as_its_run_stores_it() {
        let dir = tempfile::tempdir().unwrap();
        let (imported, written) = (dir.path().join("i.sqlite"), dir.path().join("w.sqlite"));
        for (name, text) in crate::history::tests::fixtures() {
            let path = write(dir.path(), "r.json", text);
            let kind = check_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut store = Store::open(&imported).unwrap();
            store.import_file(&path, kind, "r.json").unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            let store = Store::open(&written).unwrap();
            match kind {
                Kind::Run => {
                    let r = RunRecord::from_value(value).unwrap();
                    let mut w = RunWriter::start(store, Report::Run(&r)).unwrap();
                    w.save(Report::Run(&r)).unwrap();
                }
                Kind::Workload => {
                    let r = WorkloadRecord::from_value(value).unwrap();
                    let mut w = RunWriter::start(store, Report::Workload(&r)).unwrap();
                    w.save(Report::Workload(&r)).unwrap();
                }
            }
        }
        let (a, b) = (
            dump(&Store::open_existing(&imported).unwrap()),
            dump(&Store::open_existing(&written).unwrap()),
        );
        assert!(a.len() > 20, "{a:?}");
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(a, b);
        }
        assert_eq!(a.len(), b.len());
    }

    #[test]
    fn a_file_streamed_in_reads_back_as_a_whole_one_would() {
        let dir = tempfile::tempdir().unwrap();
        // The figures before and after other fields, the schema last.
        let (_, text) = crate::record::run::tests::FIXTURES[0];
        let Value::Object(mut fields) = serde_json::from_str::<Value>(text).unwrap() else {
            panic!("a report is an object");
        };
        let mut report = Map::new();
        for first in ["started_at", "results"] {
            report.insert(first.into(), fields.shift_remove(first).unwrap());
        }
        let schema = fields.shift_remove("schema").unwrap();
        report.extend(fields);
        report.insert("schema".into(), schema);
        let report = Value::Object(report);
        let path = write(
            dir.path(),
            "r.json",
            &serde_json::to_string_pretty(&report).unwrap(),
        );
        let kind = check_file(&path).unwrap();
        assert_eq!(kind, Kind::Run);
        let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
        let id = store.import_file(&path, kind, "r.json").unwrap();
        assert_eq!(
            serde_json::to_string(&store.load_report(id).unwrap()).unwrap(),
            serde_json::to_string(&report).unwrap()
        );
        let whole = RunRecord::parse(text).unwrap();
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1);
        let r = &runs[0];
        assert!(r.complete && r.finished);
        assert_eq!(
            (r.figures, r.host.as_str()),
            (
                whole.results.len(),
                whole.header.environment.hostname.as_str()
            )
        );
        assert_eq!(r.imported_from.as_deref(), Some("r.json"));
        assert_eq!(r.started_at, whole.header.started_at);
    }

    #[test]
    fn a_bad_file_is_refused_and_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let schema = crate::record::SCHEMA;
        let (_, good) = crate::record::run::tests::FIXTURES[0];
        let good: Value = serde_json::from_str(good).unwrap();
        let with = |f: &dyn Fn(&mut Value)| {
            let mut v = good.clone();
            f(&mut v);
            v.to_string()
        };
        for (text, needle) in [
            ("[1, 2]".to_string(), "is not JSON"),
            ("{\"schema\": \"other/1\"}".to_string(), "is not one"),
            (
                format!("{{\"schema\": \"{schema}\", \"results\": [], \"results\": []}}"),
                "appears twice",
            ),
            (
                format!("{{\"schema\": \"{schema}\", \"results\": [{{}}, {{\"a\": ]}}"),
                "is not JSON",
            ),
            (
                format!("{{\"schema\": \"{schema}\"}} trailing"),
                "is not JSON",
            ),
            // A run report's fields, or a figure's, missing or of another shape.
            (
                format!("{{\"schema\": \"{schema}\", \"results\": []}}"),
                "not an ipcmark run report: missing field",
            ),
            (
                with(&|v| v["results"][1]["status"] = "fine\u{1b}[2J".into()),
                "not an ipcmark run report: results[1]: unknown variant `fine?[2J`",
            ),
            (
                with(&|v| v["complete"] = "yes".into()),
                "not an ipcmark run report: invalid type",
            ),
            (
                with(&|v| v["schema"] = "ipcmark.workload/1".into()),
                "not an ipcmark workload report: missing field",
            ),
        ] {
            let path = write(dir.path(), "bad.json", &text);
            let got = check_file(&path).and_then(|kind| {
                let mut store = Store::open(&dir.path().join("h.sqlite"))?;
                store.import_file(&path, kind, "bad.json")
            });
            assert!(
                matches!(&got, Err(Error::Usage(m)) if m.contains(needle) && !m.contains('\u{1b}')),
                "{text}: {:?}",
                got.err()
            );
        }
        // A file that changes between the check and the import: nothing stored.
        let path = write(dir.path(), "r.json", &good.to_string());
        let kind = check_file(&path).unwrap();
        for changed in [
            format!("{{\"schema\": \"{schema}\", \"results\": [{{}}, {{\"a\": ]}}"),
            with(&|v| v["results"][0]["cpus"] = "none".into()),
        ] {
            write(dir.path(), "r.json", &changed);
            let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
            assert!(store.import_file(&path, kind, "r.json").is_err());
            assert!(store.runs().unwrap().is_empty());
            let figures: i64 = store
                .conn
                .query_row("SELECT count(*) FROM figures", [], |r| r.get(0))
                .unwrap();
            assert_eq!(figures, 0);
        }
    }
}
