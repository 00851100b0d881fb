//! The report of `ipcmark watch`: the history's runs as series, one per
//! figure ([`FigureRecord::key`]) and host, each point a run's centre of
//! that figure (its drift-corrected median where it was sampled in a sweep,
//! else its median: the value `compare` and the cost models read); the
//! change points of each series (`stats::change_points`), each judged
//! against a minimum magnitude and the series' own noise; and the changes
//! of several series at one run (±1) grouped, with the fields of the
//! machine and the settings that differ between the run before and after.
//!
//! Only figures with a latency are watched (modes pingpong, op, event,
//! periodic, oneway): for them a larger value is a regression. Stream and
//! score figures, where larger is better, are left out.

use crate::record::build::BuildRecord;
use crate::record::compare::IntervalRecord;
use crate::record::environment::EnvironmentRecord;
use crate::record::watch::{
    ChangeGroup, ChangeRecord, FieldChange, RunRef, SeriesRecord, Verdict, WATCH_SCHEMA,
    WatchReport, WatchSettings,
};
use crate::record::{FigureRecord, RunRecord, Settings, Status};
use crate::stats::change_points::{self, ChangePoint};
use crate::stats::median;
use std::collections::BTreeMap;

/// A run of the history with its id (the order runs were saved in), for
/// [`watch`], the whole computation in memory (the command reads the
/// history's series one by one instead, see `cli::watch`).
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct HistoryRun {
    /// Its id.
    pub id: i64,
    /// Its report.
    pub record: RunRecord,
}

/// What `watch` looks at and how it judges.
#[derive(Debug, Clone)]
pub struct Options {
    /// The change-point method's settings.
    pub method: change_points::Options,
    /// Smallest relative change that is a regression or an improvement
    /// (ClickHouse's 5%); below it, a significant change is unstable.
    pub min_magnitude: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            method: change_points::Options::default(),
            min_magnitude: 0.05,
        }
    }
}

/// The value of a figure a series holds: its drift-corrected median where
/// it was sampled in rounds with others, else its median; none unless it
/// was measured and has a latency.
pub fn centre(f: &FigureRecord) -> Option<f64> {
    if f.status != Status::Ok {
        return None;
    }
    let l = f.latency_ns.as_ref()?;
    Some(
        f.sweep
            .as_ref()
            .and_then(|s| s.drift_corrected_median_ns)
            .unwrap_or(l.median),
    )
}

#[cfg(test)]
fn run_ref(r: &HistoryRun) -> RunRef {
    RunRef {
        id: r.id,
        started_at: r.record.header.started_at.clone(),
    }
}

/// One series: which runs (positions in the history's list) and values.
#[cfg(test)]
struct Series<'a> {
    figure: &'a FigureRecord,
    host: String,
    runs: Vec<usize>,
    values: Vec<f64>,
}

#[cfg(test)]
fn collect(runs: &[HistoryRun]) -> Vec<Series<'_>> {
    let mut series: BTreeMap<(String, crate::record::key::FigureKey), Series<'_>> = BTreeMap::new();
    for (pos, run) in runs.iter().enumerate() {
        let host = &run.record.header.environment.hostname;
        for f in &run.record.results {
            // A load sweep measures a figure once per level: the levels
            // are other conditions, not other runs, so the first is kept.
            let Some(v) = centre(f) else { continue };
            let s = series
                .entry((host.clone(), f.key()))
                .or_insert_with(|| Series {
                    figure: f,
                    host: host.clone(),
                    runs: Vec::new(),
                    values: Vec::new(),
                });
            if s.runs.last() != Some(&pos) {
                s.runs.push(pos);
                s.values.push(v);
            }
        }
    }
    series.into_values().collect()
}

fn verdict(c: &ChangePoint, noise: Option<f64>, min_magnitude: f64) -> Verdict {
    let log_change = (1.0 + c.magnitude).ln().abs();
    let beyond_noise = noise.is_none_or(|n| log_change > n);
    if c.magnitude.abs() < min_magnitude || !beyond_noise {
        Verdict::Unstable
    } else if c.magnitude > 0.0 {
        Verdict::Regression
    } else {
        Verdict::Improvement
    }
}

/// A field's value as the report shows it: `none` for an absent one.
fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or("none".into(), ToString::to_string)
}

fn list(v: &[usize]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The fields of the machine that differ between `a` and `b`.
fn environment_changes(a: &EnvironmentRecord, b: &EnvironmentRecord, out: &mut Vec<FieldChange>) {
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            out.push(FieldChange {
                field: name.into(),
                before: x,
                after: y,
            });
        }
    };
    field("kernel", a.kernel.clone(), b.kernel.clone());
    field(
        "kernel_version",
        a.kernel_version.clone(),
        b.kernel_version.clone(),
    );
    field("cpu_model", a.cpu_model.clone(), b.cpu_model.clone());
    field(
        "logical_cpus",
        a.logical_cpus.to_string(),
        b.logical_cpus.to_string(),
    );
    field("allowed_cpus", list(&a.allowed_cpus), list(&b.allowed_cpus));
    field(
        "virtualization",
        a.virtualization.clone(),
        b.virtualization.clone(),
    );
    field("clocksource", a.clocksource.clone(), b.clocksource.clone());
    field("preemption", a.preemption.clone(), b.preemption.clone());
    field(
        "frequency_governor",
        opt(&a.frequency_governor),
        opt(&b.frequency_governor),
    );
    field("smt", opt(&a.smt), opt(&b.smt));
    field(
        "isolated_cpus",
        list(&a.isolated_cpus),
        list(&b.isolated_cpus),
    );
    field(
        "nohz_full_cpus",
        list(&a.nohz_full_cpus),
        list(&b.nohz_full_cpus),
    );
    field(
        "timer_slack_ns",
        opt(&a.timer_slack_ns),
        opt(&b.timer_slack_ns),
    );
    field(
        "cpu_idle.driver",
        opt(&a.cpu_idle.as_ref().map(|c| c.driver.clone())),
        opt(&b.cpu_idle.as_ref().map(|c| c.driver.clone())),
    );
    field(
        "cpu_idle.governor",
        opt(&a.cpu_idle.as_ref().and_then(|c| c.governor.clone())),
        opt(&b.cpu_idle.as_ref().and_then(|c| c.governor.clone())),
    );
    field(
        "cpu_latency.held",
        a.cpu_latency.held.to_string(),
        b.cpu_latency.held.to_string(),
    );
    field(
        "cpu_latency.requested_us",
        opt(&a.cpu_latency.requested_us),
        opt(&b.cpu_latency.requested_us),
    );
    let names: std::collections::BTreeSet<&String> =
        a.mitigations.keys().chain(b.mitigations.keys()).collect();
    for n in names {
        field(
            &format!("mitigations.{n}"),
            opt(&a.mitigations.get(n)),
            opt(&b.mitigations.get(n)),
        );
    }
    // Recorded since the fleet view: a run from before has none of these,
    // which is no change of the machine.
    let signature = |e: &EnvironmentRecord| {
        e.cpu_signature.as_ref().map(|s| {
            format!(
                "family {} model {} stepping {}",
                s.family,
                s.model,
                opt(&s.stepping)
            )
        })
    };
    let nodes = |e: &EnvironmentRecord| e.numa_nodes.as_deref().map(list);
    for (name, x, y) in [
        ("cpu_signature", signature(a), signature(b)),
        ("microcode", a.microcode.clone(), b.microcode.clone()),
        ("numa_nodes", nodes(a), nodes(b)),
        (
            "kernel_cmdline",
            a.kernel_cmdline.clone(),
            b.kernel_cmdline.clone(),
        ),
    ] {
        if let (Some(x), Some(y)) = (x, y) {
            field(name, x, y);
        }
    }
}

/// The settings that differ between `a` and `b` (those that change what a
/// figure measures: placement, scheduling, peer, passes, the load held).
fn settings_changes(a: &Settings, b: &Settings, out: &mut Vec<FieldChange>) {
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            out.push(FieldChange {
                field: format!("settings.{name}"),
                before: x,
                after: y,
            });
        }
    };
    field("client_cpu", opt(&a.client_cpu), opt(&b.client_cpu));
    field("server_cpu", opt(&a.server_cpu), opt(&b.server_cpu));
    field("rt_priority", opt(&a.rt_priority), opt(&b.rt_priority));
    field("peer", format!("{:?}", a.peer), format!("{:?}", b.peer));
    field("quick", a.quick.to_string(), b.quick.to_string());
    field("passes", a.passes.to_string(), b.passes.to_string());
    field(
        "cpu_latency_us",
        opt(&a.cpu_latency_us),
        opt(&b.cpu_latency_us),
    );
    let load = |s: &Settings| {
        s.load
            .as_ref()
            .map_or("none".to_string(), |l| l.specs.join(" "))
    };
    field("load", load(a), load(b));
}

/// What differs between two runs: their build, machine and settings.
pub fn what_changed(a: &RunRecord, b: &RunRecord) -> Vec<FieldChange> {
    let mut out = Vec::new();
    if a.header.build.version != b.header.build.version
        || a.header.build.commit != b.header.build.commit
    {
        out.push(FieldChange {
            field: "build".into(),
            before: format!("{} {}", a.header.build.version, a.header.build.commit),
            after: format!("{} {}", b.header.build.version, b.header.build.commit),
        });
    }
    environment_changes(&a.header.environment, &b.header.environment, &mut out);
    // The host's placement of the measured CPUs, as a kernel is: what moved
    // every figure that crosses between them.
    if let Some(p) = super::placement::difference(a, b).filter(|p| p.differ) {
        out.push(FieldChange {
            field: "placement".into(),
            before: format!("{:.0} ns ({})", p.round_trip_a_ns, p.class_a),
            after: format!("{:.0} ns ({})", p.round_trip_b_ns, p.class_b),
        });
    }
    settings_changes(&a.settings, &b.settings, &mut out);
    out
}

/// The method's settings as the report states them.
pub fn settings(opts: &Options) -> WatchSettings {
    WatchSettings {
        window: opts.method.window,
        max_p: opts.method.max_p,
        min_magnitude: opts.min_magnitude,
        level: opts.method.level,
    }
}

/// One series computed: its change points, each judged (its `group` is set
/// by [`group`]). `figure` is any of its figures (for the key and labels),
/// `runs` and `values` its runs and centres, oldest first.
pub fn series(
    figure: &FigureRecord,
    host: &str,
    runs: &[RunRef],
    values: &[f64],
    opts: &Options,
) -> SeriesRecord {
    let cps = change_points::change_points(values, &opts.method);
    let noise = change_points::noise(values, &cps);
    let key = figure.key();
    SeriesRecord {
        key: key.to_string(),
        benchmark: key.benchmark.clone(),
        mode: key.mode_label(),
        size_bytes: key.size_bytes,
        host: host.to_string(),
        runs: values.len(),
        noise,
        changes: cps
            .iter()
            .map(|c| ChangeRecord {
                index: c.index,
                run_before: runs[c.index - 1].clone(),
                run_after: runs[c.index].clone(),
                runs_before: c.before.end - c.before.start,
                runs_after: c.after.end - c.after.start,
                mean_before_ns: c.before.mean,
                mean_after_ns: c.after.mean,
                magnitude: c.magnitude,
                interval: IntervalRecord {
                    low: c.interval.low,
                    high: c.interval.high,
                },
                p: c.p,
                verdict: verdict(c, noise, opts.min_magnitude),
                group: 0,
            })
            .collect(),
    }
}

/// Groups the changes of `series` by host and run: a change joins the
/// group whose first change's run after is the same or the one before it
/// in `order` (every run id considered, ascending). Sets each change's
/// `group`; the groups' `changed` is left empty for [`what_changed`].
pub fn group(series: &mut [SeriesRecord], order: &[i64]) -> Vec<ChangeGroup> {
    let position = |id: i64| order.binary_search(&id).unwrap_or_else(|at| at);
    // (series, change) of every change, by host and position of its run after.
    let mut found: Vec<(usize, usize)> = series
        .iter()
        .enumerate()
        .flat_map(|(i, s)| (0..s.changes.len()).map(move |j| (i, j)))
        .collect();
    let at = |&(i, j): &(usize, usize)| {
        (
            series[i].host.clone(),
            position(series[i].changes[j].run_after.id),
        )
    };
    found.sort_by_key(|f| at(f));
    let mut members: Vec<Vec<(usize, usize)>> = Vec::new();
    for f in &found {
        let joins = members.last().is_some_and(|g| {
            let (host, first) = at(&g[0]);
            let (h, pos) = at(f);
            host == h && pos <= first + 1
        });
        match joins {
            true => members.last_mut().expect("checked").push(*f),
            false => members.push(vec![*f]),
        }
    }
    let mut groups = Vec::new();
    for (g, m) in members.iter().enumerate() {
        // The runs most of its changes name (the earliest on a tie).
        let mut counts: BTreeMap<(usize, i64), (usize, &RunRef, &RunRef)> = BTreeMap::new();
        for &(i, j) in m {
            let c = &series[i].changes[j];
            counts
                .entry((position(c.run_after.id), c.run_before.id))
                .or_insert((0, &c.run_before, &c.run_after))
                .0 += 1;
        }
        let most = counts.values().map(|c| c.0).max().unwrap_or(0);
        let (_, before, after) = counts
            .values()
            .find(|c| c.0 == most)
            .expect("a group has a change");
        let (before, after) = ((*before).clone(), (*after).clone());
        let changes: Vec<&ChangeRecord> = m.iter().map(|&(i, j)| &series[i].changes[j]).collect();
        let magnitudes: Vec<f64> = changes.iter().map(|c| c.magnitude).collect();
        let moved = |v: Verdict| changes.iter().any(|c| c.verdict == v);
        let verdict = match (moved(Verdict::Regression), moved(Verdict::Improvement)) {
            (true, true) => Verdict::Mixed,
            (true, false) => Verdict::Regression,
            (false, true) => Verdict::Improvement,
            (false, false) => Verdict::Unstable,
        };
        groups.push(ChangeGroup {
            host: series[m[0].0].host.clone(),
            run_before: before,
            run_after: after,
            figures: m.iter().map(|&(i, _)| series[i].key.clone()).collect(),
            median_magnitude: median(&magnitudes),
            verdict,
            changed: Vec::new(),
        });
        for &(i, j) in m {
            series[i].changes[j].group = g;
        }
    }
    groups
}

/// The report of series computed and grouped.
pub fn report(
    series: Vec<SeriesRecord>,
    groups: Vec<ChangeGroup>,
    runs: usize,
    opts: &Options,
    build: BuildRecord,
) -> WatchReport {
    WatchReport {
        schema: WATCH_SCHEMA.into(),
        build,
        settings: settings(opts),
        runs,
        series,
        groups,
    }
}

/// The watch report of `runs` (oldest first), all in memory: every
/// series computed, grouped, and what changed read from the runs.
#[cfg(test)]
pub fn watch(runs: &[HistoryRun], opts: &Options, build: BuildRecord) -> WatchReport {
    let mut records: Vec<SeriesRecord> = collect(runs)
        .iter()
        .map(|s| {
            let refs: Vec<RunRef> = s.runs.iter().map(|&p| run_ref(&runs[p])).collect();
            series(s.figure, &s.host, &refs, &s.values, opts)
        })
        .collect();
    let order: Vec<i64> = {
        let mut ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids
    };
    let mut groups = group(&mut records, &order);
    let by_id: BTreeMap<i64, &RunRecord> = runs.iter().map(|r| (r.id, &r.record)).collect();
    for g in &mut groups {
        if let (Some(a), Some(b)) = (by_id.get(&g.run_before.id), by_id.get(&g.run_after.id)) {
            g.changed = what_changed(a, b);
        }
    }
    report(records, groups, runs.len(), opts, build)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::change_points::tests::normal;

    /// A run report of tests/reports/.
    pub(crate) fn fixture(name: &str) -> RunRecord {
        let (_, text) = crate::record::run::tests::FIXTURES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap();
        RunRecord::parse(text).unwrap()
    }

    /// The run-to-run noise of a figure here, from a real report: the
    /// spread of the pass medians of tests/reports/passes.json (the
    /// standard deviation of their logarithms, the largest of its figures),
    /// doubled, since whole runs differ by more than the passes of one run.
    pub(crate) fn measured_noise() -> f64 {
        let r = fixture("passes");
        let sd = r
            .results
            .iter()
            .filter_map(|f| f.passes.as_ref())
            .map(|p| {
                let logs: Vec<f64> = p.medians_ns.iter().map(|m| m.ln()).collect();
                let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64)
                    .sqrt()
            })
            .fold(0.0, f64::max);
        assert!(sd > 0.005 && sd < 0.05, "{sd}");
        2.0 * sd
    }

    /// `record` with every figure's centre (median, drift-corrected median,
    /// samples) times `factor(figure index)`.
    pub(crate) fn scaled(record: &RunRecord, factor: impl Fn(usize) -> f64) -> RunRecord {
        let mut r = record.clone();
        for (i, f) in r.results.iter_mut().enumerate() {
            let k = factor(i);
            if let Some(l) = f.latency_ns.as_mut() {
                l.median *= k;
                l.mean *= k;
            }
            if let Some(s) = f.sweep.as_mut() {
                s.drift_corrected_median_ns = s.drift_corrected_median_ns.map(|m| m * k);
            }
            if let Some(s) = f.samples_ns.as_mut() {
                s.iter_mut().for_each(|v| *v *= k);
            }
            if let Some(p) = f.passes.as_mut() {
                p.medians_ns.iter_mut().for_each(|v| *v *= k);
                p.drift_corrected_medians_ns
                    .iter_mut()
                    .for_each(|v| *v *= k);
            }
        }
        r
    }

    /// 40 runs of the ipc-quick report, each figure with its own noise, a
    /// step of `step(run, figure)` (1 for none), and `edit` applied to
    /// each run (run numbers from 1, as ids).
    pub(crate) fn history(
        seed: u64,
        step: impl Fn(usize, usize) -> f64,
        edit: impl Fn(usize, &mut RunRecord),
    ) -> Vec<HistoryRun> {
        let base = fixture("ipc-quick");
        let noise = measured_noise();
        let mut rng = fastrand::Rng::with_seed(seed);
        (1..=40)
            .map(|run| {
                let draws: Vec<f64> = (0..base.results.len())
                    .map(|_| (noise * normal(&mut rng)).exp())
                    .collect();
                let mut record = scaled(&base, |i| draws[i] * step(run, i));
                record.header.started_at = format!("2026-11-{:02}T00:00:00Z", run % 28 + 1);
                edit(run, &mut record);
                HistoryRun {
                    id: run as i64,
                    record,
                }
            })
            .collect()
    }

    fn build() -> BuildRecord {
        fixture("ipc-quick").header.build
    }

    #[test]
    fn a_step_in_one_figure_at_run_21_is_found_with_its_magnitude() {
        // With this noise a step of 10% is three standard deviations: a run
        // or two beside it can look like either level, so the place is
        // within one run most of the time, not always.
        let (seeds, mut within_one) = (0..40u64, 0);
        for seed in seeds.clone() {
            // Figure 1 slower by 10% from run 21 of 40 on.
            let runs = history(
                seed,
                |run, i| if i == 1 && run >= 21 { 1.10 } else { 1.0 },
                |_, _| {},
            );
            let w = watch(&runs, &Options::default(), build());
            let moved: Vec<&SeriesRecord> =
                w.series.iter().filter(|s| !s.changes.is_empty()).collect();
            assert_eq!(moved.len(), 1, "seed {seed}: {:?}", w.groups);
            let c = &moved[0].changes[0];
            assert_eq!(
                moved[0].key,
                fixture("ipc-quick").results[1].key().to_string()
            );
            within_one += usize::from(c.run_after.id.abs_diff(21) <= 1);
            assert!(c.run_after.id.abs_diff(21) <= 3, "seed {seed}: {c:?}");
            assert_eq!(c.run_before.id + 1, c.run_after.id);
            assert!((c.magnitude - 0.10).abs() < 0.03, "seed {seed}: {c:?}");
            assert!(c.interval.low <= c.magnitude && c.magnitude <= c.interval.high);
            assert_eq!(c.verdict, Verdict::Regression, "seed {seed}: {c:?}");
            assert_eq!(w.groups.len(), 1);
            assert_eq!(w.groups[0].verdict, Verdict::Regression);
            // Nothing changed on the machine: nothing is named.
            assert!(w.groups[0].changed.is_empty(), "{:?}", w.groups[0].changed);
            assert_eq!(w.series.len(), 4);
            assert!(w.series.iter().all(|s| s.runs == 40));
        }
        eprintln!(
            "within one run of run 21: {within_one} of {}",
            seeds.end as usize
        );
        assert!(within_one * 10 >= seeds.end as usize * 9, "{within_one}");
    }

    #[test]
    fn forty_a_a_runs_give_no_change_point() {
        for seed in 0..10 {
            let runs = history(seed, |_, _| 1.0, |_, _| {});
            let w = watch(&runs, &Options::default(), build());
            assert!(w.groups.is_empty(), "seed {seed}: {:?}", w.groups);
            assert!(w.series.iter().all(|s| s.changes.is_empty()));
        }
    }

    #[test]
    fn a_step_in_every_figure_at_a_kernel_change_is_one_group_naming_the_kernel() {
        for seed in 0..10 {
            let runs = history(
                seed,
                |run, _| if run >= 21 { 1.12 } else { 1.0 },
                |run, r| {
                    if run >= 21 {
                        r.header.environment.kernel = "6.6.0-test".into();
                    }
                },
            );
            let w = watch(&runs, &Options::default(), build());
            assert_eq!(w.groups.len(), 1, "seed {seed}: {:?}", w.groups);
            let g = &w.groups[0];
            assert_eq!(g.figures.len(), 4, "{g:?}");
            assert_eq!(g.verdict, Verdict::Regression);
            assert!((g.median_magnitude - 0.12).abs() < 0.03, "{g:?}");
            if g.run_after.id == 21 {
                let kernel = g.changed.iter().find(|c| c.field == "kernel").unwrap();
                assert_eq!(kernel.after, "6.6.0-test");
                assert_eq!(
                    kernel.before,
                    fixture("ipc-quick").header.environment.kernel
                );
                assert_eq!(g.changed.len(), 1, "{:?}", g.changed);
            }
        }
    }

    #[test]
    fn a_small_or_noisy_change_is_unstable() {
        let c = ChangePoint {
            index: 5,
            before: change_points::Segment {
                start: 0,
                end: 5,
                mean: 1.0,
            },
            after: change_points::Segment {
                start: 5,
                end: 10,
                mean: 1.03,
            },
            magnitude: 0.03,
            interval: crate::stats::compare::Interval {
                low: 0.02,
                high: 0.04,
            },
            p: 1e-5,
        };
        assert_eq!(verdict(&c, Some(0.01), 0.05), Verdict::Unstable);
        assert_eq!(verdict(&c, Some(0.01), 0.02), Verdict::Regression);
        assert_eq!(verdict(&c, Some(0.05), 0.02), Verdict::Unstable);
        let faster = ChangePoint {
            magnitude: -0.2,
            ..c
        };
        assert_eq!(verdict(&faster, Some(0.05), 0.05), Verdict::Improvement);
    }

    #[test]
    fn what_changed_names_mitigations_settings_and_the_build() {
        let a = fixture("ipc-quick");
        let mut b = a.clone();
        b.header
            .environment
            .mitigations
            .insert("spectre_v2".into(), "Vulnerable".into());
        b.settings.peer = crate::record::Peer::Thread;
        b.header.build.commit = "0".repeat(40);
        b.header.environment.frequency_governor = Some("powersave".into());
        let fields: Vec<String> = what_changed(&a, &b).into_iter().map(|c| c.field).collect();
        assert!(
            fields.contains(&"mitigations.spectre_v2".to_string()),
            "{fields:?}"
        );
        assert!(fields.contains(&"settings.peer".to_string()), "{fields:?}");
        assert!(fields.contains(&"build".to_string()), "{fields:?}");
        assert!(
            fields.contains(&"frequency_governor".to_string()),
            "{fields:?}"
        );
        assert!(what_changed(&a, &a).is_empty());
    }

    #[test]
    fn what_changed_names_a_microcode_update_but_not_a_field_an_older_run_lacks() {
        let mut a = fixture("ipc-quick");
        a.header.environment.microcode = None;
        a.header.environment.kernel_cmdline = None;
        let mut b = a.clone();
        b.header.environment.microcode = Some("0xd0003a5".into());
        b.header.environment.kernel_cmdline = Some("quiet isolcpus=1".into());
        assert!(what_changed(&a, &b).is_empty());
        let mut c = b.clone();
        c.header.environment.microcode = Some("0xd0003b9".into());
        c.header.environment.kernel_cmdline = Some("quiet".into());
        let changed = what_changed(&b, &c);
        let m = changed.iter().find(|c| c.field == "microcode").unwrap();
        assert_eq!(
            (m.before.as_str(), m.after.as_str()),
            ("0xd0003a5", "0xd0003b9")
        );
        assert!(
            changed.iter().any(|c| c.field == "kernel_cmdline"),
            "{changed:?}"
        );
    }

    #[test]
    fn what_changed_names_a_placement_the_probes_tell_apart() {
        use crate::record::placement::{PlacementProbeRecord, ProbeSampleRecord};
        let probe = |ns: f64| {
            let s = ProbeSampleRecord {
                median_ns: ns,
                p10_ns: ns * 0.97,
                p90_ns: ns * 1.03,
            };
            Some(PlacementProbeRecord {
                cpus: [0, 1],
                start: Some(s),
                passes: vec![Some(s)],
                end: Some(s),
                pairs: Vec::new(),
                clock_ns: 0.1,
                took_ns: 0,
                class: None,
                failed: None,
            })
        };
        let mut a = fixture("ipc-quick");
        a.placement_probe = probe(63.0);
        let mut b = a.clone();
        b.placement_probe = probe(327.0);
        let changed = what_changed(&a, &b);
        let p = changed.iter().find(|c| c.field == "placement").unwrap();
        assert_eq!(p.before, "63 ns (shared last-level cache)");
        assert_eq!(p.after, "327 ns (across caches)");
        b.placement_probe = probe(66.0);
        assert!(what_changed(&a, &b).is_empty());
    }
}
