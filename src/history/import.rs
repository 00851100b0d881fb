//! `ipcmark import` of a report of any size, in bounded memory: the file is
//! read from a buffered reader, never held whole, twice. The first reading
//! checks it is JSON and finds its kind; the second stores each figure as
//! it is parsed, so only the report's other fields and one figure are in
//! memory at a time. The whole run is stored in one transaction: a file
//! that fails half-way stores nothing.

use super::{Error, Kind, RunId, Store, writer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::BufReader;
use std::path::Path;

/// The two fields that list a report's figures, by kind.
const FIGURE_KEYS: [&str; 2] = ["results", "configurations"];

/// Reads the report at `path` once, checking it is JSON and a report this
/// ipcmark stores, without storing anything or holding its figures: its kind.
pub fn check_file(path: &Path) -> Result<Kind, Error> {
    let header = read(path, None, &mut |_| Ok(()))?;
    Kind::of(&header).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
}

/// Reads the report at `path` (with the figures under `figures_key`, if
/// given, each handed to `on_figure` as it is parsed and left out of the
/// result; without, both fields that can list figures are skipped): the
/// report's other fields, in order, the figures' field an empty list.
fn read(
    path: &Path,
    figures_key: Option<&'static str>,
    on_figure: &mut dyn FnMut(Value) -> Result<(), Error>,
) -> Result<Value, Error> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::Usage(format!("cannot read {}: {e}", path.display())))?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, file));
    let mut failed = None;
    let top = Top {
        figures_key,
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
struct Top<'a> {
    figures_key: Option<&'static str>,
    on_figure: &'a mut dyn FnMut(Value) -> Result<(), Error>,
    /// The error `on_figure` returned, which ended the parse.
    failed: &'a mut Option<Error>,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object (an ipcmark report)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut header = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let streamed = match self.figures_key {
                Some(k) => key == k,
                None => FIGURE_KEYS.contains(&key.as_str()),
            };
            if !streamed {
                let v: Value = map.next_value()?;
                header.insert(key, v);
                continue;
            }
            if header.contains_key(&key) {
                return Err(de::Error::custom(format!("'{key}' appears twice")));
            }
            match self.figures_key {
                Some(_) => map.next_value_seed(Figures {
                    on_figure: &mut *self.on_figure,
                    failed: &mut *self.failed,
                })?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            header.insert(key, Value::Array(Vec::new()));
        }
        Ok(Value::Object(header))
    }
}

/// The list of figures, each handed on as it is parsed. Anything but a
/// list holds no figures (as a whole report read at once would say).
struct Figures<'a> {
    on_figure: &'a mut dyn FnMut(Value) -> Result<(), Error>,
    failed: &'a mut Option<Error>,
}

impl<'de> DeserializeSeed<'de> for Figures<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Figures<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of figures")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(f) = seq.next_element::<Value>()? {
            if let Err(e) = (self.on_figure)(f) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
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
    /// run imported from `source`, in one transaction; its id.
    pub fn import_file(&mut self, path: &Path, kind: Kind, source: &str) -> Result<RunId, Error> {
        let store_path = self.path.clone();
        let err = |e: rusqlite::Error| super::sql_error(&store_path, e);
        let tx = self.conn.transaction().map_err(err)?;
        // The run's row comes first, for its figures to refer to; its
        // fields, some of which may follow the figures in the file, are
        // written once the file is read. No one sees it before the commit.
        let id = writer::insert_run(&tx, kind, &Value::Null, "{}", Some(source)).map_err(err)?;
        let mut ordinal = 0;
        let header = read(path, Some(kind.figures_key()), &mut |f| {
            writer::write_figure(&tx, id, kind, ordinal, &f, &f.to_string()).map_err(err)?;
            ordinal += 1;
            Ok(())
        })?;
        if Kind::of(&header).ok() != Some(kind) {
            return Err(Error::Usage(format!(
                "{} changed while it was imported",
                path.display()
            )));
        }
        writer::rewrite_run(&tx, id, &header, &header.to_string()).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_file_streamed_in_reads_back_as_a_whole_one_would() {
        let dir = tempfile::tempdir().unwrap();
        // The figures before and after other fields, the schema last.
        let report = json!({
            "started_at": "2026-11-24T04:00:00Z",
            "results": [
                {"benchmark": "pipe", "mode": "pingpong", "size_bytes": 64, "status": "ok",
                 "latency_ns": {"median": 1234.5678901234}},
                {"benchmark": "fifo", "mode": "pingpong", "size_bytes": 64, "status": "failed"}
            ],
            "complete": true,
            "finished_at": "2026-11-24T04:01:00Z",
            "environment": {"hostname": "h", "kernel": "6.18"},
            "command_line": ["ipcmark", "run"],
            "schema": crate::record::SCHEMA,
        });
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
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1);
        let r = &runs[0];
        assert!(r.complete && r.finished);
        assert_eq!((r.figures, r.host.as_str()), (2, "h"));
        assert_eq!(r.imported_from.as_deref(), Some("r.json"));
        assert_eq!(r.started_at, "2026-11-24T04:00:00Z");
    }

    #[test]
    fn a_bad_file_is_refused_and_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let schema = crate::record::SCHEMA;
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
        ] {
            let path = write(dir.path(), "bad.json", &text);
            let got = check_file(&path).and_then(|kind| {
                let mut store = Store::open(&dir.path().join("h.sqlite"))?;
                store.import_file(&path, kind, "bad.json")
            });
            assert!(
                matches!(&got, Err(Error::Usage(m)) if m.contains(needle)),
                "{text}: {:?}",
                got.err()
            );
        }
        // A file that changes between the check and the import: nothing stored.
        let path = write(
            dir.path(),
            "r.json",
            &format!("{{\"schema\": \"{schema}\"}}"),
        );
        let kind = check_file(&path).unwrap();
        write(
            dir.path(),
            "r.json",
            &format!("{{\"schema\": \"{schema}\", \"results\": [{{}}, {{\"a\": ]}}"),
        );
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
