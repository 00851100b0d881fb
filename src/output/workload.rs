//! The report of `ipcmark workload`: its JSON (schema `ipcmark.workload/1`,
//! documented in docs/workloads.md and docs/schema/workload.schema.json) and
//! its tables, in the shape of the study's (a row per run, a mean row, and a
//! factor against the best configuration).

use crate::engine::os::environment::Environment;
use crate::engine::os::group::Migration;
use crate::stats::Summary;
use crate::workloads::{Headline, RunRecord, WorkloadInfo};
use comfy_table::{CellAlignment, Table};
use serde::Serialize;
use std::collections::BTreeMap;

/// Identifies the layout of the report; bumped on any incompatible change.
pub const SCHEMA: &str = "ipcmark.workload/1";

/// Per-philosopher columns are shown up to this many processes; beyond, the
/// table keeps the totals and the JSON has every count.
const MAX_PROCESS_COLUMNS: usize = 10;

/// The runs of one configuration (one placement), as they ended.
#[derive(Debug, Clone)]
pub struct ConfigResult {
    /// "packed", "spread", "free" or the explicit CPU list.
    pub name: String,
    /// The CPU each process was placed on.
    pub cpus: Vec<Option<usize>>,
    /// Every run in order: its record or why it failed.
    pub runs: Vec<Result<RunRecord, String>>,
}

/// Whole command.
#[derive(Debug, Serialize)]
pub struct WorkloadReport {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Version of ipcmark that wrote it.
    pub ipcmark_version: &'static str,
    /// RFC 3339 start time.
    pub started_at: String,
    /// RFC 3339 end time; null while running.
    pub finished_at: Option<String>,
    /// Whether every planned run was attempted.
    pub complete: bool,
    /// The arguments, program name first.
    pub command_line: Vec<String>,
    /// The machine.
    pub environment: Environment,
    /// Workload id.
    pub workload: &'static str,
    /// What the headline figure is.
    pub figure: FigureInfo,
    /// What applied to every run.
    pub settings: WorkloadSettings,
    /// One entry per placement, in command-line order.
    pub configurations: Vec<ConfigurationRecord>,
}

/// Meaning of the headline figure.
#[derive(Debug, Serialize)]
pub struct FigureInfo {
    /// "count" (operations in a fixed time) or "time" (ns for a fixed amount of work).
    pub kind: &'static str,
    /// "operations" or "ns".
    pub unit: &'static str,
    /// "higher" or "lower".
    pub better: &'static str,
    /// What one operation is ("meal", "vector", "pass").
    pub operation: &'static str,
}

/// Settings of the command.
#[derive(Debug, Serialize)]
pub struct WorkloadSettings {
    /// Runs per configuration.
    pub runs: u32,
    /// Length of a timed run, ms; null for workloads that run to completion.
    pub duration_ms: Option<f64>,
    /// Time-out for start-up, silence and finishing, ms.
    pub timeout_ms: f64,
    /// Role of each process, in process order (process 1 first).
    pub processes: Vec<String>,
    /// The workload's own resolved settings.
    pub parameters: serde_json::Value,
    /// Migrations applied in every configuration.
    pub migrations: Vec<MigrationRecord>,
}

/// One `--migrate`.
#[derive(Debug, Serialize)]
pub struct MigrationRecord {
    /// Process number (from 1).
    pub process: usize,
    /// Its role.
    pub role: String,
    /// The plan.
    #[serde(flatten)]
    pub plan: Migration,
}

/// One placement and its runs.
#[derive(Debug, Serialize)]
pub struct ConfigurationRecord {
    /// "packed", "spread", "free" or the CPU list.
    pub name: String,
    /// CPU per process (null: not pinned).
    pub placement: Vec<Option<usize>>,
    /// Every run.
    pub runs: Vec<RunJson>,
    /// Over the successful runs; null if none succeeded.
    pub summary: Option<ConfigSummary>,
}

/// One run.
#[derive(Debug, Serialize)]
pub struct RunJson {
    /// Run number (from 1).
    pub run: usize,
    /// "ok" or "failed".
    pub status: &'static str,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The headline figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    /// Start barrier to the last process finishing, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    /// Start barrier to the stop (timed runs), ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_after_ns: Option<u64>,
    /// Run-level figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<BTreeMap<&'static str, f64>>,
    /// Every process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<ProcessJson>>,
}

/// One process of one run.
#[derive(Debug, Serialize)]
pub struct ProcessJson {
    /// Process number (from 1).
    pub process: usize,
    /// Its role.
    pub role: String,
    /// CPU it was placed on (null: not pinned).
    pub cpu_placed: Option<usize>,
    /// CPU it ran on once placed, before the start (sched_getcpu).
    pub cpu_start: Option<usize>,
    /// CPU it ran on when it finished.
    pub cpu_end: Option<usize>,
    /// Every CPU it was seen on.
    pub cpus_seen: Vec<usize>,
    /// Migrations carried out.
    pub migrations: u64,
    /// Migrations after which it was not on the target CPU.
    pub migration_misses: u64,
    /// Operations completed.
    pub ops: u64,
    /// Its own time from the start barrier to finishing, ns.
    pub time_ns: u64,
    /// The workload's counters.
    pub counters: BTreeMap<&'static str, u64>,
}

/// Over the successful runs of a configuration.
#[derive(Debug, Serialize)]
pub struct ConfigSummary {
    /// Runs that produced a figure.
    pub runs_ok: usize,
    /// Mean of the runs' figures.
    pub figure_mean: f64,
    /// Smallest figure.
    pub figure_min: f64,
    /// Largest figure.
    pub figure_max: f64,
    /// Sample standard deviation of the figures.
    pub figure_stddev: f64,
    /// Against the best configuration of the command (1 = best, ≥ 1 otherwise).
    pub factor: Option<f64>,
    /// Mean operations per process.
    pub ops_mean: Vec<f64>,
    /// Mean of each run-level metric.
    pub metrics_mean: BTreeMap<&'static str, f64>,
}

/// Describes the headline figure of `info`.
pub fn figure_info(info: &WorkloadInfo) -> FigureInfo {
    match info.headline {
        Headline::Count => FigureInfo {
            kind: "count",
            unit: "operations",
            better: "higher",
            operation: info.operation,
        },
        Headline::Time => FigureInfo {
            kind: "time",
            unit: "ns",
            better: "lower",
            operation: info.operation,
        },
    }
}

fn ok_runs(c: &ConfigResult) -> Vec<&RunRecord> {
    c.runs.iter().filter_map(|r| r.as_ref().ok()).collect()
}

fn mean_figure(c: &ConfigResult) -> Option<f64> {
    let figures: Vec<f64> = ok_runs(c).iter().map(|r| r.figure).collect();
    Summary::of(&figures).map(|s| s.mean)
}

/// Each configuration's factor against the best: best/mean for counts,
/// mean/best for times, so 1 is the best and larger is worse.
pub fn factors(headline: Headline, configs: &[ConfigResult]) -> Vec<Option<f64>> {
    let means: Vec<Option<f64>> = configs.iter().map(mean_figure).collect();
    let valid = means.iter().flatten().copied().filter(|m| *m > 0.0);
    let best = match headline {
        Headline::Count => valid.fold(None, |b: Option<f64>, m| Some(b.map_or(m, |b| b.max(m)))),
        Headline::Time => valid.fold(None, |b: Option<f64>, m| Some(b.map_or(m, |b| b.min(m)))),
    };
    means
        .iter()
        .map(|m| match (m, best) {
            (Some(m), Some(b)) if *m > 0.0 => Some(match headline {
                Headline::Count => b / m,
                Headline::Time => m / b,
            }),
            _ => None,
        })
        .collect()
}

fn summary(c: &ConfigResult, factor: Option<f64>) -> Option<ConfigSummary> {
    let runs = ok_runs(c);
    let figures: Vec<f64> = runs.iter().map(|r| r.figure).collect();
    let s = Summary::of(&figures)?;
    let n = runs.len() as f64;
    let processes = runs[0].processes.len();
    let ops_mean = (0..processes)
        .map(|p| {
            runs.iter()
                .map(|r| r.processes[p].report.ops as f64)
                .sum::<f64>()
                / n
        })
        .collect();
    let mut metrics_mean = BTreeMap::new();
    for r in &runs {
        for &(k, v) in &r.metrics {
            *metrics_mean.entry(k).or_insert(0.0) += v / n;
        }
    }
    Some(ConfigSummary {
        runs_ok: runs.len(),
        figure_mean: s.mean,
        figure_min: s.min,
        figure_max: s.max,
        figure_stddev: s.stddev,
        factor,
        ops_mean,
        metrics_mean,
    })
}

fn run_json(i: usize, r: &Result<RunRecord, String>) -> RunJson {
    match r {
        Err(e) => RunJson {
            run: i + 1,
            status: "failed",
            error: Some(e.clone()),
            figure: None,
            elapsed_ns: None,
            stopped_after_ns: None,
            metrics: None,
            processes: None,
        },
        Ok(r) => RunJson {
            run: i + 1,
            status: "ok",
            error: None,
            figure: Some(r.figure),
            elapsed_ns: Some(r.elapsed_ns),
            stopped_after_ns: r.stopped_after_ns,
            metrics: Some(r.metrics.iter().copied().collect()),
            processes: Some(
                r.processes
                    .iter()
                    .enumerate()
                    .map(|(p, pr)| ProcessJson {
                        process: p + 1,
                        role: pr.role.clone(),
                        cpu_placed: pr.report.cpu_placed,
                        cpu_start: pr.report.cpu_start,
                        cpu_end: pr.report.cpu_end,
                        cpus_seen: pr.report.cpus_seen.clone(),
                        migrations: pr.report.migrations,
                        migration_misses: pr.report.migration_misses,
                        ops: pr.report.ops,
                        time_ns: pr.report.time_ns,
                        counters: pr.counters.iter().copied().collect(),
                    })
                    .collect(),
            ),
        },
    }
}

/// The `configurations` array of the report, with summaries and factors.
pub fn configurations(headline: Headline, configs: &[ConfigResult]) -> Vec<ConfigurationRecord> {
    let factors = factors(headline, configs);
    configs
        .iter()
        .zip(factors)
        .map(|(c, f)| ConfigurationRecord {
            name: c.name.clone(),
            placement: c.cpus.clone(),
            runs: c
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| run_json(i, r))
                .collect(),
            summary: summary(c, f),
        })
        .collect()
}

fn cpu_list(cpus: &[Option<usize>]) -> String {
    cpus.iter()
        .map(|c| c.map_or("-".to_string(), |c| c.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The CPUs the processes reported once placed: one list if every run agrees.
fn read_back(c: &ConfigResult) -> String {
    let mut lists: Vec<String> = ok_runs(c)
        .iter()
        .map(|r| {
            cpu_list(
                &r.processes
                    .iter()
                    .map(|p| p.report.cpu_start)
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    lists.dedup();
    match lists.len() {
        0 => "-".into(),
        1 => lists.remove(0),
        _ => format!("{} (varied between runs)", lists.join(" / ")),
    }
}

/// Remarks on a configuration: a placement not honoured, migrations done.
fn config_notes(
    c: &ConfigResult,
    info: &WorkloadInfo,
    migrations: &[Option<Migration>],
) -> Vec<String> {
    let runs = ok_runs(c);
    let mut notes = Vec::new();
    let Some(first) = runs.first() else {
        return notes;
    };
    for (p, pr) in first.processes.iter().enumerate() {
        let off: Vec<usize> = runs
            .iter()
            .filter_map(|r| {
                let rep = &r.processes[p].report;
                (rep.cpu_placed.is_some() && rep.cpu_start != rep.cpu_placed)
                    .then_some(rep.cpu_start.unwrap_or(usize::MAX))
            })
            .collect();
        if !off.is_empty() {
            notes.push(format!(
                "warning: {} was placed on CPU {} but ran on {} in {} run(s)",
                pr.role,
                cpu_list(&[pr.report.cpu_placed]),
                off.iter()
                    .map(|c| if *c == usize::MAX {
                        "?".into()
                    } else {
                        c.to_string()
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                off.len()
            ));
        }
        if let Some(Some(plan)) = migrations.get(p) {
            let moves: u64 = runs.iter().map(|r| r.processes[p].report.migrations).sum();
            let misses: u64 = runs
                .iter()
                .map(|r| r.processes[p].report.migration_misses)
                .sum();
            let mut seen: Vec<usize> = runs
                .iter()
                .flat_map(|r| r.processes[p].report.cpus_seen.iter().copied())
                .collect();
            seen.sort_unstable();
            seen.dedup();
            let what = match plan {
                Migration::Every { ops, cpus } => format!(
                    "moved between CPUs {} and {} every {ops} {}(s)",
                    cpus[0], cpus[1], info.operation
                ),
                Migration::At { op, cpu } => {
                    format!("moved to CPU {cpu} before {} {op}", info.operation)
                }
            };
            notes.push(format!(
                "{} {what}: {:.1} move(s) per run, seen on CPU(s) {}, {}",
                pr.role,
                moves as f64 / runs.len() as f64,
                seen.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                if misses == 0 {
                    "every move read back on its target".to_string()
                } else {
                    format!("{misses} move(s) NOT on their target")
                }
            ));
        }
    }
    notes
}

fn new_table(header: Vec<String>) -> Table {
    super::table::new_table(header)
}

fn align_right_from(t: &mut Table, first: usize) {
    let cols = t.column_count();
    for col in first..cols {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn fmt_mean(v: f64) -> String {
    format!("{v:.1}")
}

fn fmt_factor(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{f:.2}"))
}

fn fmt_us(ns: f64) -> String {
    let v = ns / 1e3;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Seconds with four significant digits, however short the run.
fn fmt_s(ns: f64) -> String {
    let s = ns / 1e9;
    let decimals = match s {
        s if s >= 100.0 => 1,
        s if s >= 10.0 => 2,
        s if s >= 1.0 => 3,
        s if s >= 0.1 => 4,
        s if s >= 0.01 => 5,
        _ => 6,
    };
    format!("{s:.decimals$}")
}

/// Column headers for per-process counts: "#1", "#2"… when every role is a
/// common word and a number ("philosopher 1"), else the roles themselves.
fn process_headers(roles: &[String]) -> (Vec<String>, Option<String>) {
    let split: Vec<Option<(&str, &str)>> = roles.iter().map(|r| r.rsplit_once(' ')).collect();
    let word = split.first().copied().flatten().map(|(w, _)| w);
    let numbered = word.is_some()
        && split.iter().all(|p| {
            p.is_some_and(|(w, n)| Some(w) == word && n.chars().all(|c| c.is_ascii_digit()))
        });
    if numbered {
        let headers = split
            .iter()
            .map(|p| format!("#{}", p.map_or("", |(_, n)| n)))
            .collect();
        (headers, word.map(str::to_string))
    } else {
        (roles.to_vec(), None)
    }
}

fn metric(r: &RunRecord, name: &str) -> f64 {
    r.metrics
        .iter()
        .find(|(k, _)| *k == name)
        .map_or(f64::NAN, |(_, v)| *v)
}

/// Everything printed after the machine line: a table per configuration for
/// counted workloads (then a comparison), one table for timed workloads.
pub fn render(
    info: &WorkloadInfo,
    title: &str,
    roles: &[String],
    migrations: &[Option<Migration>],
    configs: &[ConfigResult],
) -> String {
    let mut out = format!("{title}\n");
    let factors = factors(info.headline, configs);
    match info.headline {
        Headline::Count => render_counts(&mut out, info, roles, migrations, configs, &factors),
        Headline::Time => render_times(&mut out, info, migrations, configs, &factors),
    }
    out
}

fn render_counts(
    out: &mut String,
    info: &WorkloadInfo,
    roles: &[String],
    migrations: &[Option<Migration>],
    configs: &[ConfigResult],
    factors: &[Option<f64>],
) {
    let per_process = roles.len() <= MAX_PROCESS_COLUMNS;
    let unit = format!("{}s", info.operation);
    for c in configs {
        out.push_str(&format!(
            "\nconfiguration {}: CPUs {} (read back {})\n",
            c.name,
            cpu_list(&c.cpus),
            read_back(c)
        ));
        let mut header = vec!["run".to_string()];
        if per_process {
            header.extend(process_headers(roles).0);
        }
        header.extend(["total", "min", "max", "fairness"].map(String::from));
        let mut t = new_table(header);
        let mut failures = Vec::new();
        for (i, r) in c.runs.iter().enumerate() {
            let mut row = vec![(i + 1).to_string()];
            match r {
                Ok(r) => {
                    if per_process {
                        row.extend(r.processes.iter().map(|p| p.report.ops.to_string()));
                    }
                    row.push(format!("{}", r.figure));
                    row.push(format!("{}", metric_min(r)));
                    row.push(format!("{}", metric_max(r)));
                    row.push(format!("{:.4}", fairness(r)));
                }
                Err(e) => {
                    row.push("FAILED".into());
                    failures.push(format!("run {} FAILED: {e}", i + 1));
                }
            }
            t.add_row(row);
        }
        let runs = ok_runs(c);
        if !runs.is_empty() {
            let n = runs.len() as f64;
            let mean = |f: &dyn Fn(&RunRecord) -> f64| runs.iter().map(|r| f(r)).sum::<f64>() / n;
            let mut row = vec!["mean".to_string()];
            if per_process {
                for p in 0..roles.len() {
                    row.push(fmt_mean(mean(&|r| r.processes[p].report.ops as f64)));
                }
            }
            row.push(fmt_mean(mean(&|r| r.figure)));
            row.push(fmt_mean(mean(&metric_min)));
            row.push(fmt_mean(mean(&metric_max)));
            row.push(format!("{:.4}", mean(&fairness)));
            t.add_row(row);
        }
        align_right_from(&mut t, 1);
        out.push_str(&format!("{t}\n"));
        for f in failures {
            out.push_str(&format!("{f}\n"));
        }
        for n in config_notes(c, info, migrations) {
            out.push_str(&format!("{n}\n"));
        }
    }
    let who = process_headers(roles).1.unwrap_or_else(|| "process".into());
    out.push_str(&format!(
        "#n = {unit} of {who} n in each run; total, min, max over the {who}s; fairness = Jain's index (Σx)²/(n·Σx²), 1 = all equal\n"
    ));
    if configs.len() > 1 {
        let mut t = new_table(
            [
                "configuration",
                "CPUs",
                "mean total",
                "mean fairness",
                "factor",
            ]
            .map(String::from)
            .to_vec(),
        );
        for (c, f) in configs.iter().zip(factors) {
            let runs = ok_runs(c);
            let n = runs.len() as f64;
            let (total, fair) = if runs.is_empty() {
                ("-".to_string(), "-".to_string())
            } else {
                (
                    fmt_mean(runs.iter().map(|r| r.figure).sum::<f64>() / n),
                    format!("{:.4}", runs.iter().map(|r| fairness(r)).sum::<f64>() / n),
                )
            };
            t.add_row(vec![
                c.name.clone(),
                cpu_list(&c.cpus),
                total,
                fair,
                fmt_factor(*f),
            ]);
        }
        align_right_from(&mut t, 2);
        out.push_str(&format!(
            "\n{t}\nfactor = best mean total / this mean total (1 = most {unit})\n"
        ));
    }
}

fn metric_min(r: &RunRecord) -> f64 {
    r.processes.iter().map(|p| p.report.ops).min().unwrap_or(0) as f64
}

fn metric_max(r: &RunRecord) -> f64 {
    r.processes.iter().map(|p| p.report.ops).max().unwrap_or(0) as f64
}

fn fairness(r: &RunRecord) -> f64 {
    let ops: Vec<u64> = r.processes.iter().map(|p| p.report.ops).collect();
    crate::stats::jain_index(&ops)
}

fn render_times(
    out: &mut String,
    info: &WorkloadInfo,
    migrations: &[Option<Migration>],
    configs: &[ConfigResult],
    factors: &[Option<f64>],
) {
    let per_op = format!("µs per {}", info.operation);
    let mut t = new_table(
        ["configuration", "run", "time s", per_op.as_str(), "factor"]
            .map(String::from)
            .to_vec(),
    );
    let mut notes = Vec::new();
    for (c, f) in configs.iter().zip(factors) {
        let mut label = vec![c.name.clone(), format!("CPUs {}", cpu_list(&c.cpus))];
        let mut next_label = || {
            if label.is_empty() {
                String::new()
            } else {
                label.remove(0)
            }
        };
        for (i, r) in c.runs.iter().enumerate() {
            match r {
                Ok(r) => t.add_row(vec![
                    next_label(),
                    (i + 1).to_string(),
                    fmt_s(r.figure),
                    fmt_us(metric(r, "per_op_ns")),
                    String::new(),
                ]),
                Err(e) => {
                    notes.push(format!("{} run {} FAILED: {e}", c.name, i + 1));
                    t.add_row(vec![
                        next_label(),
                        (i + 1).to_string(),
                        "FAILED".into(),
                        "-".into(),
                        String::new(),
                    ])
                }
            };
        }
        let runs = ok_runs(c);
        if !runs.is_empty() {
            let n = runs.len() as f64;
            t.add_row(vec![
                next_label(),
                "mean".into(),
                fmt_s(runs.iter().map(|r| r.figure).sum::<f64>() / n),
                fmt_us(runs.iter().map(|r| metric(r, "per_op_ns")).sum::<f64>() / n),
                fmt_factor(*f),
            ]);
        }
        notes.push(format!("{}: CPUs read back {}", c.name, read_back(c)));
        notes.extend(config_notes(c, info, migrations));
    }
    align_right_from(&mut t, 2);
    out.push_str(&format!("{t}\n"));
    for n in notes {
        out.push_str(&format!("{n}\n"));
    }
    out.push_str("time = start of all processes to the last one finishing; factor = mean time / best mean time (1 = fastest configuration)\n");
}

/// The machine, one line.
pub fn machine_line(env: &Environment) -> String {
    format!(
        "ipcmark {} | Linux {} | {} | {} CPUs | virt: {} | clock: {}",
        env!("CARGO_PKG_VERSION"),
        env.kernel,
        env.cpu_model,
        env.logical_cpus,
        env.virtualization,
        env.clocksource
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::group::MemberReport;
    use crate::workloads::ProcessRecord;

    fn record(figure: f64, ops: &[u64]) -> RunRecord {
        RunRecord {
            elapsed_ns: 1,
            stopped_after_ns: None,
            figure,
            processes: ops
                .iter()
                .map(|&o| ProcessRecord {
                    role: "p".into(),
                    report: MemberReport {
                        cpu_placed: Some(0),
                        cpu_start: Some(0),
                        cpu_end: Some(0),
                        cpus_seen: vec![0],
                        migrations: 0,
                        migration_misses: 0,
                        ops: o,
                        time_ns: 1,
                        counters: vec![0; 8],
                    },
                    counters: vec![],
                })
                .collect(),
            metrics: vec![("per_op_ns", 10.0)],
        }
    }

    fn config(name: &str, figures: &[f64]) -> ConfigResult {
        ConfigResult {
            name: name.into(),
            cpus: vec![Some(0), Some(0)],
            runs: figures.iter().map(|&f| Ok(record(f, &[1, 2]))).collect(),
        }
    }

    #[test]
    fn factors_are_one_for_the_best_and_larger_for_the_rest() {
        let cs = [config("a", &[100.0, 100.0]), config("b", &[200.0])];
        assert_eq!(factors(Headline::Time, &cs), vec![Some(1.0), Some(2.0)]);
        assert_eq!(factors(Headline::Count, &cs), vec![Some(2.0), Some(1.0)]);
        let failed = ConfigResult {
            runs: vec![Err("x".into())],
            ..config("c", &[])
        };
        assert_eq!(factors(Headline::Time, &[failed]), vec![None]);
    }

    #[test]
    fn numbered_roles_get_short_headers() {
        let roles: Vec<String> = (1..=3).map(|i| format!("philosopher {i}")).collect();
        let (h, word) = process_headers(&roles);
        assert_eq!(h, vec!["#1", "#2", "#3"]);
        assert_eq!(word.as_deref(), Some("philosopher"));
        let roles = vec!["generator".to_string(), "calculator".to_string()];
        assert_eq!(process_headers(&roles), (roles.clone(), None));
        assert_eq!(fmt_s(1.2345e9), "1.234");
        assert_eq!(fmt_s(9.2e5), "0.000920");
    }

    #[test]
    fn summary_means_each_process() {
        let c = config("a", &[10.0, 20.0]);
        let s = summary(&c, Some(1.0)).unwrap();
        assert_eq!(s.runs_ok, 2);
        assert_eq!(s.figure_mean, 15.0);
        assert_eq!(s.ops_mean, vec![1.0, 2.0]);
        assert_eq!(s.metrics_mean["per_op_ns"], 10.0);
    }
}
