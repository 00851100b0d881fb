//! The history database's tables, as migrations applied in order: the
//! database's `user_version` is how many of them it has had. A database with
//! a higher version was written by a newer ipcmark and is never opened for
//! writing (see `Store::open`).

use rusqlite_migration::{M, Migrations};

/// Version 1: the runs and their figures.
///
/// `runs.report` is the run's whole JSON report with its list of figures
/// (`results` of a run, `configurations` of a workload) left empty; each
/// figure's JSON is a row of `figures`, in order. The report is those put
/// back together, key for key. The other columns repeat what `ipcmark
/// history` lists and what a query would select on.
const V1: &str = "
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('run', 'workload')),
    started_at    TEXT    NOT NULL,           -- RFC 3339, as in the report
    finished_at   TEXT,                       -- null while running, or killed
    complete      INTEGER NOT NULL DEFAULT 0, -- 1 once every figure was attempted
    host          TEXT    NOT NULL,
    kernel        TEXT    NOT NULL,
    command_line  TEXT    NOT NULL,           -- JSON array, program name first
    imported_from TEXT,                       -- the file `ipcmark import` read
    report        TEXT    NOT NULL            -- the JSON report, figures left out
);

CREATE TABLE figures (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,           -- position in the report, from 0
    key           TEXT    NOT NULL,           -- e.g. pipe/pingpong/64
    status        TEXT,                       -- ok, skipped, failed, …
    median        REAL,                       -- ns (latency_ns.median)
    interval_low  REAL,                       -- ns, 95% interval of the median
    interval_high REAL,
    figure        TEXT    NOT NULL,           -- the figure's JSON
    PRIMARY KEY (run_id, ordinal)
);
";

/// Version 2: names for runs (`ipcmark history --tag NAME RUN`), so that a
/// baseline is named once and `check`, `compare` and `show` take the name.
/// A name names one run; tagging another run moves it. Deleting the run
/// deletes its names.
const V2: &str = "
CREATE TABLE tags (
    name          TEXT    PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tagged_at     TEXT    NOT NULL            -- RFC 3339
) WITHOUT ROWID;                              -- one b-tree: the name is the key
";

/// Version 3: what `ipcmark watch` computed of each series (one figure on
/// one host), so that a new run recomputes only the series it touched. A
/// row holds for the runs it names (`run_ids`, the series' runs in order)
/// and the method's settings it was computed with: any other list (a run
/// added, or pruned) or setting and it is computed again and replaced.
const V3: &str = "
CREATE TABLE watch_series (
    host          TEXT    NOT NULL,
    key           TEXT    NOT NULL,           -- figures.key
    run_ids       TEXT    NOT NULL,           -- JSON array of the runs it covers, in order
    settings      TEXT    NOT NULL,           -- JSON: the method's settings
    series        TEXT    NOT NULL,           -- JSON: the series' record (ipcmark.watch/1's series[])
    PRIMARY KEY (host, key)
) WITHOUT ROWID;
";

/// Version 4: `ipcmark selftest`'s record (`ipcmark.selftest/1`, null
/// while it runs) and the mark on each of its runs, so that `watch` and
/// `advise` can leave them out (or, asked, take them). Deleting a run
/// deletes its mark; the selftest's record stays, naming the run's id.
const V4: &str = "
CREATE TABLE selftests (
    id            INTEGER PRIMARY KEY,
    started_at    TEXT    NOT NULL,           -- RFC 3339
    host          TEXT    NOT NULL,
    passed        INTEGER,                    -- 1 when its rate was within alpha + 2 points
    record        TEXT                        -- the JSON record; null until it ends
);

CREATE TABLE selftest_runs (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    selftest_id   INTEGER NOT NULL REFERENCES selftests (id) ON DELETE CASCADE,
    pair          INTEGER NOT NULL,           -- from 1
    side          TEXT    NOT NULL CHECK (side IN ('a', 'b'))
);
";

/// Every migration, oldest first. Append only: a released one never changes.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(vec![M::up(V1), M::up(V2), M::up(V3), M::up(V4)])
}

/// The schema version this binary writes.
pub fn latest() -> usize {
    4
}

/// The oldest schema a reader (which migrates nothing) reads: the later
/// versions only add tables, which a reader of an older history finds
/// empty (no tags yet).
pub fn oldest_readable() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid_and_latest_counts_them() {
        assert!(migrations().validate().is_ok());
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        migrations().to_latest(&mut conn).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v as usize, latest());
    }
}
