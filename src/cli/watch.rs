//! `ipcmark watch [NAME…] [--since DATE] [--host H]`: the history's series
//! (one figure of `ipcmark run` on one host; workloads are not series of
//! figures) from its columns, each computed by `analysis::watch` from its
//! figures unless the history keeps it computed for the same runs and
//! settings (`watch_series`); the changes grouped, with what changed read
//! from the runs around each group; then `output::watch`'s table and the
//! JSON if asked. Series computed anew are kept in the history when this
//! user may write it, so the next watch after a run computes only the
//! series that run touched.

use super::{Failure, flags, parse, print_stdout};
use crate::analysis::watch;
use crate::history::{self, Cached, Store};
use crate::record::RunRecord;
use crate::record::watch::{RunRef, SeriesRecord};
use clap::Args;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// Arguments of `ipcmark watch`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::WATCH_HELP)))]
pub struct WatchArgs {
    /// Mechanisms or benchmarks to watch (default: every figure with a latency).
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Only runs started on or after this date (2026-11-01) or time
    /// (2026-11-01T12:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = super::history::parse_date)]
    since: Option<jiff::Timestamp>,
    /// Only runs of this host (default: every host, each its own series).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Smallest change that is a regression or an improvement (a percentage
    /// or a fraction); a significant change below it, or within the series'
    /// own run-to-run noise, is reported as unstable.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = parse::relative_change)]
    min_magnitude: f64,
    #[command(flatten)]
    selftest_runs: flags::SelftestRuns,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    json: flags::Json,
}

/// A series of the index: its host, key, and its runs (id, start, the
/// figure's place in the report), oldest first.
struct Indexed {
    host: String,
    key: String,
    runs: Vec<(i64, String, i64)>,
}

/// The series the index holds, after `--since`, `--host` and the names;
/// and every run id considered, ascending. A run's figure is taken once
/// (a load sweep's first level).
fn index(store: &Store, args: &WatchArgs) -> Result<(Vec<Indexed>, Vec<i64>), Failure> {
    let mut series: BTreeMap<(String, String), Indexed> = BTreeMap::new();
    let mut order: Vec<i64> = Vec::new();
    let selftests = match args.selftest_runs.include {
        true => Default::default(),
        false => store.selftest_runs().map_err(crate::run::save::failure)?,
    };
    for row in store.watch_index().map_err(crate::run::save::failure)? {
        let started = row.started_at.parse::<jiff::Timestamp>().ok();
        if args.since.is_some_and(|s| started.is_none_or(|t| t < s))
            || args.host.as_ref().is_some_and(|h| *h != row.host)
            || selftests.contains(&row.run_id)
        {
            continue;
        }
        if order.last() != Some(&row.run_id) {
            order.push(row.run_id);
        }
        let benchmark = row.key.split('/').next().unwrap_or("");
        if !args.names.is_empty() && !args.names.iter().any(|n| n == benchmark) {
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

/// Every series of the history at `db` (of `names`, or all), computed
/// afresh with watch's default settings and with its values, for the HTML
/// report's charts (`report --watch`); and how many series it read.
pub(super) fn charted(
    db: Option<&std::path::Path>,
    names: &[String],
) -> Result<Vec<crate::output::report::history::Charted>, Failure> {
    let path = history::path_or_default(db).map_err(crate::run::save::failure)?;
    let store = Store::open_reader(&path).map_err(crate::run::save::failure)?;
    let args = WatchArgs {
        names: names.to_vec(),
        since: None,
        host: None,
        min_magnitude: watch::Options::default().min_magnitude,
        selftest_runs: flags::SelftestRuns::default(),
        db: flags::Db::default(),
        json: flags::Json::default(),
    };
    let opts = watch::Options::default();
    let (indexed, order) = index(&store, &args)?;
    let mut series = Vec::new();
    let mut values = Vec::new();
    for s in &indexed {
        let (record, v) = compute_values(&store, s, &opts)?;
        series.push(record);
        values.push(v);
    }
    // Grouping numbers each change's group, as `watch` shows it.
    watch::group(&mut series, &order);
    Ok(series
        .into_iter()
        .zip(values)
        .map(|(series, values)| crate::output::report::history::Charted { series, values })
        .collect())
}

/// One series computed from its figures in the history.
fn compute(store: &Store, s: &Indexed, opts: &watch::Options) -> Result<SeriesRecord, Failure> {
    compute_values(store, s, opts).map(|(r, _)| r)
}

/// [`compute`], with the series' values (run id, ns).
fn compute_values(
    store: &Store,
    s: &Indexed,
    opts: &watch::Options,
) -> Result<(SeriesRecord, Vec<(i64, f64)>), Failure> {
    let (mut refs, mut values, mut first) = (Vec::new(), Vec::new(), None);
    for (id, started_at, ordinal) in &s.runs {
        let f = store
            .figure(*id, *ordinal)
            .map_err(crate::run::save::failure)?;
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
        first.ok_or_else(|| Failure::run(format!("{}: no figure of its series reads", s.key)))?;
    let record = watch::series(&figure, &s.host, &refs, &values, opts);
    let ids = refs.iter().map(|r| r.id);
    Ok((record, ids.zip(values).collect()))
}

/// The run `id`'s record, read once.
fn run_record<'a>(
    store: &Store,
    cache: &'a mut BTreeMap<i64, Option<RunRecord>>,
    id: i64,
) -> Result<Option<&'a RunRecord>, Failure> {
    let record = match cache.entry(id) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => {
            let report = store.load_report(id).map_err(crate::run::save::failure)?;
            e.insert(RunRecord::from_value(report).ok())
        }
    };
    Ok(record.as_ref())
}

pub fn watch(args: WatchArgs) -> Result<ExitCode, Failure> {
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    let path = history::path_or_default(args.db.as_deref()).map_err(crate::run::save::failure)?;
    let store = Store::open_reader(&path).map_err(crate::run::save::failure)?;
    let opts = watch::Options {
        min_magnitude: args.min_magnitude,
        ..watch::Options::default()
    };
    let settings = crate::record::compact_json(&watch::settings(&opts)).map_err(Failure::run)?;
    let (indexed, order) = index(&store, &args)?;
    // A series computed before for the same runs and settings is taken as
    // it was; only the others (a new run touched them) are computed. With
    // --since a series is a part of one, never kept.
    let keep = args.since.is_none();
    let (mut series, mut fresh) = (Vec::new(), Vec::new());
    for s in &indexed {
        let ids: Vec<i64> = s.runs.iter().map(|r| r.0).collect();
        let cached = match keep {
            true => store
                .cached_series(&s.host, &s.key)
                .map_err(crate::run::save::failure)?,
            false => None,
        };
        match cached {
            Some(c) if c.run_ids == ids && c.settings == settings => series.push(c.series),
            _ => {
                let computed = compute(&store, s, &opts)?;
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
        if let Ok(mut writer) = Store::open_existing(&path) {
            let _ = writer.save_series(&fresh);
        }
    }
    let report = watch::report(
        series,
        groups,
        order.len(),
        &opts,
        crate::output::json::build::current(),
    );
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&crate::output::watch::render(&report))?;
    Ok(ExitCode::SUCCESS)
}
