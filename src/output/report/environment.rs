//! The environment of every run, side by side: the machine, the settings
//! that applied to every figure, the build. A row whose value differs
//! between runs is marked, since a comparison across it compares more than
//! the software.

use super::figures::timestamp;
use super::{RunInput, esc, letter};
use serde_json::Value;

/// The rows: a label and the path of the value in a run report.
const ROWS: &[(&str, &[&str])] = &[
    ("host", &["environment", "hostname"]),
    ("kernel", &["environment", "kernel"]),
    ("kernel version", &["environment", "kernel_version"]),
    ("preemption", &["environment", "preemption"]),
    ("architecture", &["environment", "arch"]),
    ("CPU", &["environment", "cpu_model"]),
    ("CPUs online", &["environment", "logical_cpus"]),
    ("CPUs allowed", &["environment", "allowed_cpus"]),
    ("CPU MHz", &["environment", "cpu_mhz"]),
    ("frequency governor", &["environment", "frequency_governor"]),
    ("SMT", &["environment", "smt"]),
    ("virtualization", &["environment", "virtualization"]),
    ("clock source", &["environment", "clocksource"]),
    ("timer slack ns", &["environment", "timer_slack_ns"]),
    ("isolated CPUs", &["environment", "isolated_cpus"]),
    ("nohz_full CPUs", &["environment", "nohz_full_cpus"]),
    ("load average", &["environment", "load_average"]),
    (
        "CPUs busy at start %",
        &["environment", "cpu_busy_percent_at_start"],
    ),
    ("cpuidle driver", &["environment", "cpu_idle", "driver"]),
    ("cpuidle governor", &["environment", "cpu_idle", "governor"]),
    (
        "CPU latency limit held",
        &["environment", "cpu_latency", "held"],
    ),
    (
        "… if not, why",
        &["environment", "cpu_latency", "not_held_reason"],
    ),
    (
        "wake-up cost ns",
        &["environment", "cpu_latency", "wakeup_cost_ns"],
    ),
    ("client, server CPU", &["settings", "client_cpu"]),
    ("", &["settings", "server_cpu"]),
    ("peer", &["settings", "peer"]),
    ("SCHED_FIFO priority", &["settings", "rt_priority"]),
    ("passes", &["settings", "passes"]),
    (
        "precision target",
        &["settings", "budget", "precision", "target"],
    ),
    (
        "max time per figure ms",
        &["settings", "budget", "precision", "max_time"],
    ),
    ("quick", &["settings", "quick"]),
    ("ipcmark", &["build", "version"]),
    ("commit", &["build", "commit"]),
    ("uncommitted changes", &["build", "dirty"]),
    ("started", &["started_at"]),
    ("finished", &["finished_at"]),
    ("complete", &["complete"]),
];

fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| &v[*k])
}

/// A value as a cell shows it.
fn text(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{}", (f * 100.0).round() / 100.0),
            _ => n.to_string(),
        },
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
        Value::Object(_) => v.to_string(),
    }
}

/// The MPI job's rows (library, ranks, nodes, where each rank ran, as the
/// page's rank lines), when any run spans one; none otherwise, so that
/// local runs carry no empty rows.
fn mpi_rows(runs: &[RunInput]) -> Vec<(String, Vec<String>)> {
    fn job(r: &RunInput) -> &Value {
        &r.report["environment"]["mpi"]
    }
    if runs.iter().all(|r| job(r).is_null()) {
        return Vec::new();
    }
    let places = |r: &RunInput| {
        let ranks = job(r)["ranks"].as_array().cloned().unwrap_or_default();
        if ranks.is_empty() {
            return "—".to_string();
        }
        ranks
            .iter()
            .map(|p| {
                format!(
                    "rank {}: node {} {}, bound to {}, on CPU {}",
                    text(&p["rank"]),
                    text(&p["node"]),
                    text(&p["host"]),
                    text(&p["allowed_cpus"]),
                    text(&p["cpu"])
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let field = |key: &'static str| move |r: &RunInput| text(&job(r)[key]);
    [
        ("MPI library", runs.iter().map(field("library")).collect()),
        ("MPI standard", runs.iter().map(field("standard")).collect()),
        ("MPI ranks", runs.iter().map(field("size")).collect()),
        ("MPI nodes", runs.iter().map(field("nodes")).collect()),
        ("MPI rank places", runs.iter().map(places).collect()),
    ]
    .into_iter()
    .map(|(l, c)| (l.to_string(), c))
    .collect()
}

/// The environment section.
pub fn section(runs: &[RunInput]) -> String {
    let mut s = String::from(
        "<section class=\"environment\" id=\"environment\"><h2>Environment</h2>\
         <table class=\"data env\"><thead><tr><th></th>",
    );
    for i in 0..runs.len() {
        s.push_str(&format!("<th>run {}</th>", letter(i)));
    }
    s.push_str("</tr></thead><tbody>");
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for (label, path) in ROWS {
        let cells: Vec<String> = runs
            .iter()
            .map(|r| {
                let v = at(&r.report, path);
                match (*label, v.as_f64()) {
                    ("started" | "finished", _) => v.as_str().map_or_else(|| text(v), timestamp),
                    ("precision target", Some(f)) => format!("±{}%", f * 100.0),
                    _ => text(v),
                }
            })
            .collect();
        // The server CPU joins the client's row.
        if label.is_empty()
            && let Some(last) = rows.last_mut()
        {
            for (c, extra) in last.1.iter_mut().zip(cells) {
                c.push_str(&format!(", {extra}"));
            }
            continue;
        }
        rows.push((label.to_string(), cells));
    }
    let command = |r: &RunInput| {
        r.report["command_line"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    rows.extend(mpi_rows(runs));
    rows.push(("command".into(), runs.iter().map(command).collect()));
    for (label, cells) in rows {
        // When and how each run was started always differ: not worth a mark.
        let differs = cells.iter().any(|c| *c != cells[0])
            && !matches!(label.as_str(), "started" | "finished" | "command");
        s.push_str(&format!(
            "<tr{}><th>{}</th>",
            if differs && runs.len() > 1 {
                " class=\"differs\""
            } else {
                ""
            },
            esc(&label)
        ));
        for c in cells {
            s.push_str(&format!("<td>{}</td>", esc(&c)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    // The CPU vulnerabilities: long, and rarely the point, so folded.
    let mut keys: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.report["environment"]["mitigations"]
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        s.push_str(
            "<details><summary>CPU vulnerabilities and their mitigations</summary>\
             <table class=\"data env\"><tbody>",
        );
        for k in keys {
            s.push_str(&format!("<tr><th>{}</th>", esc(&k)));
            for r in runs {
                s.push_str(&format!(
                    "<td>{}</td>",
                    esc(&text(&r.report["environment"]["mitigations"][&k]))
                ));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table></details>");
    }
    if runs.len() > 1 {
        s.push_str("<p class=\"note\">Marked rows differ between the runs.</p>");
    }
    s.push_str("</section>\n");
    s
}
