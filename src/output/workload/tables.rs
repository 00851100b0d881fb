//! The tables of `ipcmark workload`, in the shape of the study's: for a
//! counted workload a table per configuration (a row per run, a mean row)
//! then a comparison; for a timed one a single table; a factor against the
//! best configuration in both. Drawn from the report's records alone
//! (`record::workload`), so the page `ipcmark workload` prints at the end
//! and the one `ipcmark show` prints of the stored report are one page
//! ([`super::page`]).

use crate::output::table::{align_right, new_table, us, whole_column};
use crate::record::environment::EnvironmentRecord;
use crate::record::workload::{
    ConfigurationRecord, FigureInfo, MigrationPlan, MigrationRecord, ProcessRecord, RankRecord,
    WorkloadRunRecord as RunRecord,
};

/// What the tables are drawn from: the parts of a workload's report.
pub struct Tables<'a> {
    /// The workload's title, the first line.
    pub title: &'a str,
    /// What the headline figure is (a count or a time, of what operation).
    pub figure: &'a FigureInfo,
    /// Role of each process, in process order.
    pub roles: &'a [String],
    /// The migrations applied in every configuration.
    pub migrations: &'a [MigrationRecord],
    /// Each configuration with its runs and summary.
    pub configs: &'a [ConfigurationRecord],
}

/// The successful runs of a configuration.
fn ok_runs(c: &ConfigurationRecord) -> Vec<&RunRecord> {
    c.runs.iter().filter(|r| r.status == "ok").collect()
}

/// A run's processes (none for a failed run).
fn processes(r: &RunRecord) -> &[ProcessRecord] {
    r.processes.as_deref().unwrap_or(&[])
}

/// Process `p`'s operations in run `r`.
fn ops(r: &RunRecord, p: usize) -> u64 {
    processes(r).get(p).map_or(0, |x| x.ops)
}

/// A run's headline figure.
fn figure(r: &RunRecord) -> f64 {
    r.figure.unwrap_or(f64::NAN)
}

/// Every MPI rank of a run, with its place (none for a local run).
fn ranks(r: &RunRecord) -> &[RankRecord] {
    r.ranks.as_deref().unwrap_or(&[])
}

/// Why run `r` failed; `None` when it succeeded.
fn failed(r: &RunRecord) -> Option<&str> {
    (r.status != "ok").then(|| r.error.as_deref().unwrap_or(""))
}

/// Whether the figure is a time (else a count of operations).
fn timed(figure: &FigureInfo) -> bool {
    figure.kind == "time"
}

/// Per-philosopher columns are shown up to this many processes; beyond, the
/// table keeps the totals and the JSON has every count.
const MAX_PROCESS_COLUMNS: usize = 10;

fn cpu_list(cpus: &[Option<usize>]) -> String {
    cpus.iter()
        .map(|c| c.map_or("-".to_string(), |c| c.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The CPUs the processes reported once placed: one list if every run agrees.
fn read_back(c: &ConfigurationRecord) -> String {
    let mut lists: Vec<String> = ok_runs(c)
        .iter()
        .map(|r| cpu_list(&processes(r).iter().map(|p| p.cpu_start).collect::<Vec<_>>()))
        .collect();
    lists.dedup();
    match lists.len() {
        0 => "-".into(),
        1 => lists.remove(0),
        _ => format!("{} (varied between runs)", lists.join(" / ")),
    }
}

/// Remarks on a configuration: a placement not honoured, migrations done.
fn config_notes(c: &ConfigurationRecord, t: &Tables) -> Vec<String> {
    let runs = ok_runs(c);
    let mut notes = Vec::new();
    let Some(first) = runs.first() else {
        return notes;
    };
    let operation = &t.figure.operation;
    for (p, pr) in processes(first).iter().enumerate() {
        let off: Vec<usize> = runs
            .iter()
            .filter_map(|r| {
                let rep = processes(r).get(p)?;
                (rep.cpu_placed.is_some() && rep.cpu_start != rep.cpu_placed)
                    .then_some(rep.cpu_start.unwrap_or(usize::MAX))
            })
            .collect();
        if !off.is_empty() {
            notes.push(format!(
                "warning: {} was placed on CPU {} but ran on {} in {} run(s)",
                pr.role,
                cpu_list(&[pr.cpu_placed]),
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
        if let Some(plan) = t.migrations.iter().find(|m| m.process == p + 1) {
            let of: Vec<&ProcessRecord> = runs.iter().filter_map(|r| processes(r).get(p)).collect();
            let moves: u64 = of.iter().map(|x| x.migrations).sum();
            let misses: u64 = of.iter().map(|x| x.migration_misses).sum();
            let mut seen: Vec<usize> = of
                .iter()
                .flat_map(|x| x.cpus_seen.iter().copied())
                .collect();
            seen.sort_unstable();
            seen.dedup();
            let what = match &plan.plan {
                MigrationPlan::Every { ops, cpus } => format!(
                    "moved between CPUs {} and {} every {ops} {operation}(s)",
                    cpus[0], cpus[1]
                ),
                MigrationPlan::At { op, cpu } => {
                    format!("moved to CPU {cpu} before {operation} {op}")
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

fn fmt_mean(v: f64) -> String {
    format!("{v:.1}")
}

fn fmt_factor(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{f:.2}"))
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
/// common word and a number ("philosopher 1"), "#1 s1" for that role's first
/// spare rank under `--handoff` ("philosopher 1 spare 1"), else the roles
/// themselves. The word comes back for the legend, with whether spares exist.
fn process_headers(roles: &[String]) -> (Vec<String>, Option<(String, bool)>) {
    fn number(s: &str) -> Option<&str> {
        (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())).then_some(s)
    }
    // (word, number, spare number) of "WORD N" or "WORD N spare S".
    let parse = |r: &str| -> Option<(String, String, Option<String>)> {
        let parts: Vec<&str> = r.split(' ').collect();
        match parts.as_slice() {
            [w, n] => Some((w.to_string(), number(n)?.to_string(), None)),
            [w, n, "spare", s] => Some((
                w.to_string(),
                number(n)?.to_string(),
                Some(number(s)?.to_string()),
            )),
            _ => None,
        }
    };
    let parsed: Option<Vec<_>> = roles.iter().map(|r| parse(r)).collect();
    match parsed {
        Some(p) if !p.is_empty() && p.iter().all(|(w, _, _)| *w == p[0].0) => {
            let headers = p
                .iter()
                .map(|(_, n, s)| match s {
                    Some(s) => format!("#{n} s{s}"),
                    None => format!("#{n}"),
                })
                .collect();
            let spares = p.iter().any(|(_, _, s)| s.is_some());
            (headers, Some((p[0].0.clone(), spares)))
        }
        _ => (roles.to_vec(), None),
    }
}

fn metric(r: &RunRecord, name: &str) -> f64 {
    recorded(r, name).unwrap_or(f64::NAN)
}

/// Everything printed after the machine line: a table per configuration for
/// counted workloads (then a comparison), one table for timed workloads.
pub fn render(t: &Tables) -> String {
    let mut out = format!("{}\n", t.title);
    // Each configuration's factor against the best, as the report keeps it.
    let factors: Vec<Option<f64>> = t
        .configs
        .iter()
        .map(|c| c.summary.as_ref().and_then(|s| s.factor))
        .collect();
    match timed(t.figure) {
        false => render_counts(&mut out, t, &factors),
        true => render_times(&mut out, t, &factors),
    }
    render_places(&mut out, t.configs);
    out
}

/// Across MPI ranks: where every rank ran, a row per rank grouped by node,
/// as the study's tables named each process's node. The first successful
/// run's; a note says when a later run was placed otherwise.
fn render_places(out: &mut String, configs: &[ConfigurationRecord]) {
    let runs: Vec<&RunRecord> = configs
        .iter()
        .flat_map(ok_runs)
        .filter(|r| !ranks(r).is_empty())
        .collect();
    let Some(first) = runs.first().map(|r| ranks(r)) else {
        return;
    };
    // With several casts a rank's role changes between configurations:
    // each configuration's, in order, from its first successful run.
    let casts: Vec<&RunRecord> = configs
        .iter()
        .filter_map(|c| ok_runs(c).into_iter().find(|r| !ranks(r).is_empty()))
        .collect();
    let role_of = |rank: usize| {
        let mut roles: Vec<&str> = casts
            .iter()
            .filter_map(|r| ranks(r).iter().find(|p| p.rank == rank))
            .map(|p| p.role.as_str())
            .collect();
        if roles.windows(2).all(|w| w[0] == w[1]) {
            roles.truncate(1);
        }
        roles.join(" / ")
    };
    let mut places = first.to_vec();
    places.sort_by_key(|p| (p.node, p.rank));
    let mut t = new_table(
        ["node", "host", "rank", "role", "pid", "bound CPUs", "CPU"]
            .map(String::from)
            .to_vec(),
    );
    for p in &places {
        let bound: Vec<Option<usize>> = p.allowed_cpus.iter().map(|&c| Some(c)).collect();
        t.add_row(vec![
            p.node.to_string(),
            p.host.clone(),
            p.rank.to_string(),
            role_of(p.rank),
            p.pid.to_string(),
            cpu_list(&bound),
            cpu_list(&[p.cpu]),
        ]);
    }
    align_right(&mut t, 2..3);
    let nodes = places.iter().map(|p| p.node).max().map_or(0, |n| n + 1);
    let per = if casts.len() > 1 {
        "; roles per configuration, in order"
    } else {
        ""
    };
    out.push_str(&format!(
        "\nwhere each rank ran ({nodes} node(s); placed by the MPI launcher, ipcmark pins nothing{per})\n{t}\n"
    ));
    let moved = runs.iter().skip(1).any(|r| {
        ranks(r)
            .iter()
            .zip(first)
            .any(|(a, b)| a.host != b.host || a.cpu != b.cpu)
    });
    if moved {
        out.push_str("note: later runs had ranks on other nodes or CPUs; every run's places are in the JSON (ranks)\n");
    }
}

fn render_counts(out: &mut String, tables: &Tables, factors: &[Option<f64>]) {
    let (roles, configs) = (tables.roles, tables.configs);
    let per_process = roles.len() <= MAX_PROCESS_COLUMNS;
    let unit = format!("{}s", tables.figure.operation);
    for c in configs {
        out.push_str(&format!(
            "\nconfiguration {}: CPUs {} (read back {})\n",
            c.name,
            cpu_list(&c.placement),
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
            match failed(r) {
                None => {
                    if per_process {
                        row.extend(processes(r).iter().map(|p| p.ops.to_string()));
                    }
                    row.push(format!("{}", figure(r)));
                    row.push(format!("{}", metric_min(r)));
                    row.push(format!("{}", metric_max(r)));
                    row.push(format!("{:.4}", fairness(r)));
                }
                Some(e) => {
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
                    row.push(fmt_mean(mean(&|r| ops(r, p) as f64)));
                }
            }
            row.push(fmt_mean(mean(&figure)));
            row.push(fmt_mean(mean(&metric_min)));
            row.push(fmt_mean(mean(&metric_max)));
            row.push(format!("{:.4}", mean(&fairness)));
            t.add_row(row);
        }
        let cols = t.column_count();
        align_right(&mut t, 1..cols);
        // Counts are never wrapped mid-number: with many processes (spares
        // under --handoff) the table may be wider than the page instead.
        for col in 0..cols {
            whole_column(&mut t, col);
        }
        out.push_str(&format!("{t}\n"));
        for f in failures {
            out.push_str(&format!("{f}\n"));
        }
        for n in config_notes(c, tables) {
            out.push_str(&format!("{n}\n"));
        }
        if let Some(n) = handoff_note(&runs) {
            out.push_str(&format!("{n}\n"));
        }
    }
    let legend = match process_headers(roles).1 {
        Some((who, false)) => {
            format!("#n = {unit} of {who} n in each run; total, min, max over the {who}s")
        }
        Some((who, true)) => format!(
            "#n = {unit} of {who} n on its own rank in each run, #n sK on its K-th spare rank; total, min, max over the {who}s (each on all its ranks)"
        ),
        None => "one column per process; total, min, max over the processes".to_string(),
    };
    out.push_str(&format!(
        "{legend}; fairness = Jain's index (Σx)²/(n·Σx²), 1 = all equal\n"
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
                    fmt_mean(runs.iter().map(|r| figure(r)).sum::<f64>() / n),
                    format!("{:.4}", runs.iter().map(|r| fairness(r)).sum::<f64>() / n),
                )
            };
            t.add_row(vec![
                c.name.clone(),
                cpu_list(&c.placement),
                total,
                fair,
                fmt_factor(*f),
            ]);
        }
        let cols = t.column_count();
        align_right(&mut t, 2..cols);
        out.push_str(&format!(
            "\n{t}\nfactor = best mean total / this mean total (1 = most {unit})\n"
        ));
    }
}

/// The workload's own figure `name` if it recorded one: with `--handoff`
/// a role's count spans several processes, so the workload, not the
/// processes, knows each role's.
fn recorded(r: &RunRecord, name: &str) -> Option<f64> {
    r.metrics.as_ref()?.get(name).copied()
}

fn metric_min(r: &RunRecord) -> f64 {
    recorded(r, "min_meals")
        .unwrap_or_else(|| processes(r).iter().map(|p| p.ops).min().unwrap_or(0) as f64)
}

fn metric_max(r: &RunRecord) -> f64 {
    recorded(r, "max_meals")
        .unwrap_or_else(|| processes(r).iter().map(|p| p.ops).max().unwrap_or(0) as f64)
}

fn fairness(r: &RunRecord) -> f64 {
    recorded(r, "jain_fairness").unwrap_or_else(|| {
        let ops: Vec<u64> = processes(r).iter().map(|p| p.ops).collect();
        crate::stats::jain_index(&ops)
    })
}

fn render_times(out: &mut String, tables: &Tables, factors: &[Option<f64>]) {
    let configs = tables.configs;
    let per_op = format!("µs per {}", tables.figure.operation);
    let mut t = new_table(
        ["configuration", "run", "time s", per_op.as_str(), "factor"]
            .map(String::from)
            .to_vec(),
    );
    let mut notes = Vec::new();
    for (c, f) in configs.iter().zip(factors) {
        let mut label = vec![c.name.clone(), where_label(c)];
        let mut next_label = || {
            if label.is_empty() {
                String::new()
            } else {
                label.remove(0)
            }
        };
        for (i, r) in c.runs.iter().enumerate() {
            match failed(r) {
                None => t.add_row(vec![
                    next_label(),
                    (i + 1).to_string(),
                    fmt_s(figure(r)),
                    us(metric(r, "per_op_ns")),
                    String::new(),
                ]),
                Some(e) => {
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
                fmt_s(runs.iter().map(|r| figure(r)).sum::<f64>() / n),
                us(runs.iter().map(|r| metric(r, "per_op_ns")).sum::<f64>() / n),
                fmt_factor(*f),
            ]);
        }
        notes.push(format!("{}: CPUs read back {}", c.name, read_back(c)));
        notes.extend(config_notes(c, tables));
        if let Some(n) = handoff_note(&runs) {
            notes.push(n);
        }
    }
    let cols = t.column_count();
    align_right(&mut t, 2..cols);
    out.push_str(&format!("{t}\n"));
    for n in notes {
        out.push_str(&format!("{n}\n"));
    }
    out.push_str("time = start of all processes (across MPI ranks: the barrier every rank leaves together) to the last one finishing; factor = mean time / best mean time (1 = fastest configuration)\n");
}

/// A configuration's second line in the table: its CPUs locally; across
/// MPI ranks whether its roles share a node, as the study's tables read
/// ("same node", "other node").
fn where_label(c: &ConfigurationRecord) -> String {
    let roles = c.roles.as_deref().unwrap_or(&[]);
    if roles.is_empty() {
        return format!("CPUs {}", cpu_list(&c.placement));
    }
    let mut nodes: Vec<usize> = roles.iter().map(|r| r.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    match nodes.len() {
        1 => "same node".to_string(),
        n => format!("across {n} nodes"),
    }
}

/// Across MPI ranks with `--handoff`: how many hand-offs a run made and
/// what one cost, never called a migration (MPI has none).
fn handoff_note(runs: &[&RunRecord]) -> Option<String> {
    let with: Vec<&&RunRecord> = runs
        .iter()
        .filter(|r| metric(r, "handoffs") > 0.0)
        .collect();
    if with.is_empty() {
        return None;
    }
    let n = with.len() as f64;
    let mean = |k: &str| with.iter().map(|r| metric(r, k)).sum::<f64>() / n;
    let max = with
        .iter()
        .map(|r| metric(r, "handoff_max_ns"))
        .fold(0.0, f64::max);
    Some(format!(
        "hand-off (application-level): {:.1} per run, mean {} µs, longest {} µs (the role's state sent to a spare rank and acknowledged; MPI has no process migration)",
        mean("handoffs"),
        us(mean("handoff_mean_ns")),
        us(max)
    ))
}

/// The machine, on one line where it fits 120 columns: the version that
/// ran the workload and its machine, as the report keeps them.
pub fn machine_line(version: &str, env: &EnvironmentRecord) -> String {
    use crate::output::table::cells::{PAGE_WIDTH, fit_fields, short_cpu_name};
    let fields = [
        format!("ipcmark {version}"),
        format!("Linux {}", env.kernel),
        short_cpu_name(&env.cpu_model),
        format!("{} CPUs", env.logical_cpus),
        format!("virt: {}", env.virtualization),
        format!("clock: {}", env.clocksource),
    ];
    fit_fields(&fields, PAGE_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_roles_get_short_headers() {
        let roles: Vec<String> = (1..=3).map(|i| format!("philosopher {i}")).collect();
        let (h, word) = process_headers(&roles);
        assert_eq!(h, vec!["#1", "#2", "#3"]);
        assert_eq!(word, Some(("philosopher".to_string(), false)));
        let roles = ["philosopher 1", "philosopher 2", "philosopher 1 spare 1"].map(String::from);
        let (h, word) = process_headers(&roles);
        assert_eq!(h, vec!["#1", "#2", "#1 s1"]);
        assert_eq!(word, Some(("philosopher".to_string(), true)));
        let roles = ["counter 1 (holds the array)", "counter 2"].map(String::from);
        assert_eq!(process_headers(&roles), (roles.to_vec(), None));
        let roles = vec!["generator".to_string(), "calculator".to_string()];
        assert_eq!(process_headers(&roles), (roles.clone(), None));
        assert_eq!(fmt_s(1.2345e9), "1.234");
        assert_eq!(fmt_s(9.2e5), "0.000920");
    }

    #[test]
    fn a_run_across_ranks_names_every_node_and_its_hand_offs_are_not_migrations() {
        use crate::workloads::Place;
        let mut c = super::super::tests::config("mpi", &[1e6]);
        let place = |rank: usize, host: &str, node: usize, role: &str| Place {
            rank,
            role: role.into(),
            host: host.into(),
            node,
            pid: 100 + rank as u32,
            allowed_cpus: vec![0, 1],
            cpu: Some(rank % 2),
        };
        if let Ok(r) = &mut c.runs[0] {
            r.places = vec![
                place(0, "node-a", 0, "generator"),
                place(1, "node-b", 1, "calculator"),
                place(2, "node-a", 0, "spare calculator 1"),
            ];
            r.metrics.extend([
                ("handoffs", 3.0),
                ("handoff_mean_ns", 2e5),
                ("handoff_max_ns", 3e5),
            ]);
        }
        let c = &crate::output::workload::configurations(
            crate::workloads::Headline::Time,
            std::slice::from_ref(&c),
        )[0];
        let mut out = String::new();
        render_places(&mut out, std::slice::from_ref(c));
        assert!(out.contains("2 node(s)"), "{out}");
        assert!(
            out.contains("node-b") && out.contains("spare calculator 1"),
            "{out}"
        );
        let runs = ok_runs(c);
        let note = handoff_note(&runs).unwrap();
        assert!(
            note.starts_with("hand-off (application-level): 3.0 per run"),
            "{note}"
        );
        assert!(
            note.contains("mean 200 µs") && !note.contains("migrated"),
            "{note}"
        );
        // A local run has no places and no hand-offs: nothing is added.
        let local = crate::output::workload::configurations(
            crate::workloads::Headline::Time,
            &[super::super::tests::config("packed", &[1e6])],
        )
        .remove(0);
        let mut out = String::new();
        render_places(&mut out, std::slice::from_ref(&local));
        assert!(out.is_empty());
        assert!(handoff_note(&ok_runs(&local)).is_none());
    }
}
