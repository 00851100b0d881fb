//! What `ipcmark selftest` keeps in the history (schema version 4): its own
//! record (`selftests`, the `ipcmark.selftest/1` JSON), and the mark on
//! each of its runs (`selftest_runs`), so that `watch` and `advise` leave
//! them out unless asked: an A/A run is a real measurement of the host, but
//! at the selftest's short budget, and forty of them in an hour would
//! outweigh the runs a user made.

use super::{Error, RunId, Store};
use rusqlite::params;
use std::collections::BTreeSet;

impl Store {
    /// Starts a selftest's row (its record null until [`Store::finish_selftest`]);
    /// its id.
    pub fn start_selftest(&mut self, started_at: &str, host: &str) -> Result<i64, Error> {
        self.conn
            .execute(
                "INSERT INTO selftests (started_at, host) VALUES (?1, ?2)",
                params![started_at, host],
            )
            .map_err(|e| self.sql(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Marks run `run` as side `side` ('a' or 'b') of pair `pair` of selftest `selftest`.
    pub fn mark_selftest_run(
        &mut self,
        selftest: i64,
        run: RunId,
        pair: usize,
        side: char,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO selftest_runs (run_id, selftest_id, pair, side)
                 VALUES (?1, ?2, ?3, ?4)",
                params![run, selftest, pair as i64, side.to_string()],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Stores selftest `selftest`'s record (its JSON) and verdict.
    pub fn finish_selftest(
        &mut self,
        selftest: i64,
        record: &str,
        passed: bool,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "UPDATE selftests SET record = ?2, passed = ?3 WHERE id = ?1",
                params![selftest, record, passed],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// The record of the newest finished selftest on `host`, with its id
    /// (none in a history older than version 4, or without one); a record
    /// that does not read as a selftest is passed over, as another's text.
    pub fn latest_selftest(
        &self,
        host: &str,
    ) -> Result<Option<(i64, crate::record::selftest::SelftestReport)>, Error> {
        if !self.has_table("selftests")? {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, record FROM selftests
                 WHERE host = ?1 AND record IS NOT NULL ORDER BY id DESC",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([host], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.sql(e))?;
        for row in rows {
            let (id, text) = row.map_err(|e| self.sql(e))?;
            if let Ok(report) = serde_json::from_str(&text) {
                return Ok(Some((id, report)));
            }
        }
        Ok(None)
    }

    /// The ids of every run a selftest made (none in a history older than
    /// version 4).
    pub fn selftest_runs(&self) -> Result<BTreeSet<RunId>, Error> {
        if !self.has_table("selftest_runs")? {
            return Ok(BTreeSet::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT run_id FROM selftest_runs")
            .map_err(|e| self.sql(e))?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selftest_marks_its_runs_keeps_its_record_and_goes_with_pruned_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let ids = crate::history::tests::saved_runs(&path, 3);
        let mut s = Store::open(&path).unwrap();
        let t = s.start_selftest("t0", "h").unwrap();
        s.mark_selftest_run(t, ids[0], 1, 'a').unwrap();
        s.mark_selftest_run(t, ids[1], 1, 'b').unwrap();
        let record = |s: &Store| -> Option<String> {
            s.conn
                .query_row("SELECT record FROM selftests WHERE id = ?1", [t], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        assert_eq!(record(&s), None, "not finished yet");
        s.finish_selftest(t, "{}", true).unwrap();
        assert_eq!(record(&s).as_deref(), Some("{}"));
        assert_eq!(
            s.selftest_runs().unwrap(),
            [ids[0], ids[1]].into_iter().collect()
        );
        s.prune(&crate::history::Prune {
            keep: Some(0),
            ..Default::default()
        })
        .unwrap();
        assert!(s.selftest_runs().unwrap().is_empty());
    }
}
