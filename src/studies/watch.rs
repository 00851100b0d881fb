//! The change points of the history's series (`ipcmark watch`; the charts
//! of `report --watch`): the series found from the history's columns (one
//! figure of `ipcmark run` on one host; workloads are not series of
//! figures), each computed by `analysis::watch` from its figures unless the
//! history keeps it computed for the same runs and settings
//! (`watch_series`), the changes grouped, and what changed read from the
//! runs around each group, each opened as its record. Series computed anew
//! are kept in the history when this user may write it, so the next watch
//! after a run computes only the series that run touched.

use crate::analysis::watch;
use crate::history::{Cached, Error, OpenError, Opened, Store, StoredRun};
use crate::output::export::otava;
use crate::record::build::BuildRecord;
use crate::record::watch::{RunRef, SeriesRecord, WatchReport};
use crate::record::{FigureRecord, RunRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// What to watch (by default: every series, as `ipcmark watch` does).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Mechanisms or benchmarks (empty: every figure with a latency).
    pub names: Vec<String>,
    /// Only runs started on or after this time.
    pub since: Option<jiff::Timestamp>,
    /// Only runs of this host (none: every host, each its own series).
    pub host: Option<String>,
    /// Also the runs `ipcmark selftest` made.
    pub selftest_runs: bool,
    /// How a change is judged.
    pub options: watch::Options,
}

/// A series with its values, for a chart.
#[derive(Debug, Clone)]
pub struct Charted {
    /// The series as `watch` computes it.
    pub series: SeriesRecord,
    /// Its figure in each run, oldest first: (run id, ns).
    pub values: Vec<(i64, f64)>,
}

/// A series of the index: its host, key, and its runs (id, start, the
/// figure's place in the report), oldest first.
struct Indexed {
    host: String,
    key: String,
    runs: Vec<(i64, String, i64)>,
}

/// The series the index holds, after `since`, `host` and the names; and
/// every run id considered, ascending. A run's figure is taken once (a
/// load sweep's first level).
fn index(store: &Store, req: &Request) -> Result<(Vec<Indexed>, Vec<i64>), Error> {
    let mut series: BTreeMap<(String, String), Indexed> = BTreeMap::new();
    let mut order: Vec<i64> = Vec::new();
    let selftests = match req.selftest_runs {
        true => Default::default(),
        false => store.selftest_runs()?,
    };
    for row in store.watch_index()? {
        let started = row.started_at.parse::<jiff::Timestamp>().ok();
        if req.since.is_some_and(|s| started.is_none_or(|t| t < s))
            || req.host.as_ref().is_some_and(|h| *h != row.host)
            || selftests.contains(&row.run_id)
        {
            continue;
        }
        if order.last() != Some(&row.run_id) {
            order.push(row.run_id);
        }
        let benchmark = row.key.split('/').next().unwrap_or("");
        if !req.names.is_empty() && !req.names.iter().any(|n| n == benchmark) {
            continue;
        }
        let s = series
            .entry((row.host.clone(), row.key.clone()))
            .or_insert_with(|| Indexed {
                host: row.host.clone(),
                key: row.key.clone(),
                runs: Vec::new(),
            });
        if s.runs.last().map(|r| r.0) != Some(row.run_id) {
            s.runs.push((row.run_id, row.started_at, row.ordinal));
        }
    }
    Ok((series.into_values().collect(), order))
}

/// One series computed from its figures in the history, with its values
/// (run id, ns).
fn compute(
    store: &Store,
    s: &Indexed,
    opts: &watch::Options,
) -> Result<(SeriesRecord, Vec<(i64, f64)>), Error> {
    let (mut refs, mut values, mut first) = (Vec::new(), Vec::new(), None);
    for (id, started_at, ordinal) in &s.runs {
        let f = store.figure(*id, *ordinal)?;
        if let Some(v) = watch::centre(&f) {
            refs.push(RunRef {
                id: *id,
                started_at: started_at.clone(),
            });
            values.push(v);
            first.get_or_insert(f);
        }
    }
    let figure =
        first.ok_or_else(|| Error::Store(format!("{}: no figure of its series reads", s.key)))?;
    let record = watch::series(&figure, &s.host, &refs, &values, opts);
    let ids = refs.iter().map(|r| r.id);
    Ok((record, ids.zip(values).collect()))
}

/// Run `id`'s record, opened once; `None` when it is not a run of
/// `ipcmark run` that reads (nothing is said of what changed then).
fn run_record<'a>(
    store: &Store,
    cache: &'a mut BTreeMap<i64, Option<RunRecord>>,
    id: i64,
) -> Result<Option<&'a RunRecord>, Error> {
    let record = match cache.entry(id) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => {
            let run = match store.open_run_id(id) {
                Ok(Opened {
                    run: StoredRun::Run(r),
                    ..
                }) => Some(*r),
                Err(OpenError::History(e)) => return Err(e),
                Ok(_) | Err(_) => None,
            };
            e.insert(run)
        }
    };
    Ok(record.as_ref())
}

/// `ipcmark watch`: every series of the history at `path` that `req`
/// picks, its changes grouped by run with what changed, as the report
/// `build` writes.
pub fn watch(path: &Path, req: &Request, build: BuildRecord) -> Result<WatchReport, Error> {
    let store = Store::open_reader(path)?;
    let opts = &req.options;
    let settings = crate::record::compact_json(&watch::settings(opts)).map_err(Error::Store)?;
    let (indexed, order) = index(&store, req)?;
    // A series computed before for the same runs and settings is taken as
    // it was; only the others (a new run touched them) are computed. With
    // `since` a series is a part of one, never kept.
    let keep = req.since.is_none();
    let (mut series, mut fresh) = (Vec::new(), Vec::new());
    for s in &indexed {
        let ids: Vec<i64> = s.runs.iter().map(|r| r.0).collect();
        let cached = match keep {
            true => store.cached_series(&s.host, &s.key)?,
            false => None,
        };
        match cached {
            Some(c) if c.run_ids == ids && c.settings == settings => series.push(c.series),
            _ => {
                let (computed, _) = compute(&store, s, opts)?;
                if keep {
                    fresh.push(Cached {
                        run_ids: ids,
                        settings: settings.clone(),
                        series: computed.clone(),
                    });
                }
                series.push(computed);
            }
        }
    }
    let mut groups = watch::group(&mut series, &order);
    let mut runs = BTreeMap::new();
    for g in &mut groups {
        let before = run_record(&store, &mut runs, g.run_before.id)?.cloned();
        if let (Some(a), Some(b)) = (before, run_record(&store, &mut runs, g.run_after.id)?) {
            g.changed = watch::what_changed(&a, b);
        }
    }
    drop(store);
    if !fresh.is_empty() {
        // Kept for the next watch when this user may write the history; a
        // history only readable is watched all the same, from scratch.
        if let Ok(mut writer) = Store::open_existing(path) {
            let _ = writer.save_series(&fresh);
        }
    }
    Ok(watch::report(series, groups, order.len(), opts, build))
}

/// Refuses series of several hosts: a dashboard's series and Otava's rows
/// are one machine's, so the exports of a history of several hosts need
/// `--host`.
fn one_host(indexed: &[Indexed]) -> Result<(), Error> {
    let hosts: std::collections::BTreeSet<&str> = indexed.iter().map(|s| s.host.as_str()).collect();
    if hosts.len() > 1 {
        let names: Vec<String> = hosts
            .iter()
            .map(|h| crate::output::sanitise::text(h).into_owned())
            .collect();
        return Err(Error::Usage(format!(
            "the runs watched are of {} hosts ({}): give --host HOST for the exports, \
             which are one host's figures",
            hosts.len(),
            names.join(", ")
        )));
    }
    Ok(())
}

/// The newest figure of every series of the history at `path` that `req`
/// picks, all of one host: what `watch --export-bmf` and `--export-gab`
/// write.
pub fn newest(path: &Path, req: &Request) -> Result<Vec<FigureRecord>, Error> {
    let store = Store::open_reader(path)?;
    let (indexed, _) = index(&store, req)?;
    one_host(&indexed)?;
    indexed
        .iter()
        .filter_map(|s| s.runs.last())
        .map(|(id, _, ordinal)| store.figure(*id, *ordinal))
        .collect()
}

/// Every run of the series of the history at `path` that `req` picks, all
/// of one host, oldest first: its start, the commit of the build that
/// measured it, the names given to it, and each figure's centre (in key
/// order): what `watch --export-otava` writes.
pub fn otava_runs(path: &Path, req: &Request) -> Result<Vec<otava::Run>, Error> {
    let store = Store::open_reader(path)?;
    let (indexed, _) = index(&store, req)?;
    one_host(&indexed)?;
    let tags = store.tags()?;
    let mut runs: BTreeMap<i64, otava::Run> = BTreeMap::new();
    for s in &indexed {
        for (id, started_at, ordinal) in &s.runs {
            let Some(v) = watch::centre(&store.figure(*id, *ordinal)?) else {
                continue;
            };
            runs.entry(*id)
                .or_insert_with(|| otava::Run {
                    id: *id,
                    started_at: started_at.clone(),
                    commit: None,
                    tags: tags
                        .iter()
                        .filter(|(_, run)| run == id)
                        .map(|(name, _)| name.clone())
                        .collect(),
                    values: Vec::new(),
                })
                .values
                .push((s.key.clone(), v));
        }
    }
    for run in runs.values_mut() {
        if let Ok(Opened {
            run: StoredRun::Run(r),
            ..
        }) = store.open_run_id(run.id)
        {
            let commit = &r.header.build.commit;
            run.commit = (commit != "unknown").then(|| commit.clone());
        }
    }
    Ok(runs.into_values().collect())
}

/// Every series of the history at `path` that `req` picks, computed
/// afresh, with its values: the charts of `report --watch`.
pub fn charted(path: &Path, req: &Request) -> Result<Vec<Charted>, Error> {
    let store = Store::open_reader(path)?;
    let (indexed, order) = index(&store, req)?;
    let mut series = Vec::new();
    let mut values = Vec::new();
    for s in &indexed {
        let (record, v) = compute(&store, s, &req.options)?;
        series.push(record);
        values.push(v);
    }
    // Grouping numbers each change's group, as `watch` shows it.
    watch::group(&mut series, &order);
    Ok(series
        .into_iter()
        .zip(values)
        .map(|(series, values)| Charted { series, values })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::history;
    use crate::record::watch::Verdict;

    /// A history of 40 runs of ipc-quick whose every figure is 12% slower
    /// from run 21, on a new kernel.
    fn stepped(path: &Path) {
        let runs: Vec<RunRecord> = history(
            3,
            |run, _| if run >= 21 { 1.12 } else { 1.0 },
            |run, r| {
                if run >= 21 {
                    r.header.environment.kernel = "6.6.0-test".into();
                }
            },
        )
        .into_iter()
        .map(|h| h.record)
        .collect();
        super::super::tests::store(path, &runs);
    }

    #[test]
    fn a_step_at_a_kernel_change_is_found_in_a_stored_history_and_kept_for_next_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        stepped(&path);
        let build = crate::analysis::watch::tests::fixture("ipc-quick")
            .header
            .build;
        let w = watch(&path, &Request::default(), build.clone()).unwrap();
        assert_eq!(w.runs, 40);
        assert_eq!(w.groups.len(), 1, "{:?}", w.groups);
        let g = &w.groups[0];
        assert_eq!(g.verdict, Verdict::Regression);
        assert!(g.changed.iter().any(|c| c.field == "kernel"), "{g:?}");
        // The series were kept: the next watch reads them and says the same.
        let again = watch(&path, &Request::default(), build).unwrap();
        assert_eq!(again.groups, w.groups);
        // The charts hold one value per run of every series.
        let charts = charted(&path, &Request::default()).unwrap();
        assert_eq!(charts.len(), w.series.len());
        assert!(charts.iter().all(|c| c.values.len() == 40));
        // A name that picks no figure watches nothing.
        let none = Request {
            names: vec!["no-such-mechanism".into()],
            ..Request::default()
        };
        assert!(charted(&path, &none).unwrap().is_empty());
    }

    #[test]
    fn a_missing_history_is_the_users_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.sqlite");
        let build = crate::analysis::watch::tests::fixture("ipc-quick")
            .header
            .build;
        assert!(matches!(
            watch(&missing, &Request::default(), build),
            Err(Error::Usage(_))
        ));
    }
}
