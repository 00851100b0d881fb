//! A report read back (`ipcmark show`): a run kept in the history, or a
//! report file. A run's page is the page the run printed ([`run_page`]:
//! `page.rs` draws both from the report's records), so `show` prints what
//! the run did; a workload's report is summarised per configuration.

use crate::output::page::{self, Options};
use crate::output::table::cells::{duration, fit_width, new_table, size_cell};
use crate::record::RunRecord;
use crate::record::environment::MpiRecord;
use serde::Deserialize;
use serde_json::Value;

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("?")
}

/// What `show` prints: the page on stdout, and on stderr what the page
/// leaves out (which run it is, what it warned of).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The page, as the run printed it.
    pub page: String,
    /// Which run, and its warnings, one line each.
    pub about: String,
}

/// A run's own page, and which run it is with its warnings, as the run
/// printed them (`warning: …` on stderr).
pub fn run_page(label: &str, report: &RunRecord, options: Options) -> Shown {
    let mut argv = report.command_line.clone();
    // The program's own path says nothing: `ipcmark run …`.
    if let Some(first) = argv.first_mut() {
        *first = "ipcmark".into();
    }
    let state = if report.complete {
        "complete"
    } else {
        "incomplete"
    };
    let mut about = format!(
        "{label}: started {}, {state}: {}\n",
        report.started_at,
        argv.join(" ")
    );
    for w in &report.warnings {
        about.push_str(&format!("warning: {}\n", w.message));
    }
    Shown {
        page: page::render(report, options),
        about,
    }
}

/// The run on one line: when, where, how it ended, the command.
fn header(label: &str, report: &Value) -> String {
    let mut argv: Vec<&str> = report
        .get("command_line")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The program's own path says nothing: `ipcmark run …`.
    if let Some(first) = argv.first_mut() {
        *first = "ipcmark";
    }
    let state = if report.get("complete").and_then(Value::as_bool) == Some(true) {
        "complete"
    } else {
        "incomplete"
    };
    format!(
        "{label} | ipcmark {} | Linux {} | {} | {} | started {} | {state}\n{}\n",
        text(report, "/ipcmark_version"),
        text(report, "/environment/kernel"),
        text(report, "/environment/hostname"),
        text(report, "/environment/cpu_model"),
        text(report, "/started_at"),
        argv.join(" ")
    )
}

/// The MPI job of a report's `environment.mpi`, read back so that its
/// lines are the live page's; `None` without one (or if it is malformed).
fn mpi_job(report: &Value) -> Option<MpiRecord> {
    let m = report.pointer("/environment/mpi")?;
    MpiRecord::deserialize(m).ok()
}

/// One row per figure: what, status, median, its 95% interval, p99.
fn results_table(results: &[Value]) -> String {
    let mut t = new_table(vec![
        "benchmark",
        "mode",
        "size",
        "status",
        "median",
        "95% interval",
        "p99",
    ]);
    let ns = |r: &Value, p: &str| r.pointer(p).and_then(Value::as_f64).map(duration);
    for r in results {
        let interval = match (
            ns(r, "/precision/interval_ns/low"),
            ns(r, "/precision/interval_ns/high"),
        ) {
            (Some(lo), Some(hi)) => format!("{lo} … {hi}"),
            _ => String::new(),
        };
        let status = text(r, "/status");
        let detail = r
            .get("reason")
            .or_else(|| r.get("error"))
            .and_then(Value::as_str)
            .map_or(String::new(), |d| format!(": {d}"));
        t.add_row(vec![
            text(r, "/benchmark").to_string(),
            text(r, "/mode").to_string(),
            r.get("size_bytes")
                .and_then(Value::as_u64)
                .map_or(String::new(), |b| size_cell(b as usize)),
            format!("{status}{detail}"),
            ns(r, "/latency_ns/median").unwrap_or_default(),
            interval,
            ns(r, "/latency_ns/p99").unwrap_or_default(),
        ]);
    }
    fit_width(&mut t);
    format!("{t}\n")
}

/// One row per configuration of a workload: its placement and runs.
fn configurations_table(configs: &[Value]) -> String {
    let mut t = new_table(vec!["configuration", "placement", "runs", "failed"]);
    for c in configs {
        let runs = c.get("runs").and_then(Value::as_array);
        let failed = runs.map_or(0, |rs| {
            rs.iter()
                .filter(|r| r.get("error").is_some_and(|e| !e.is_null()))
                .count()
        });
        t.add_row(vec![
            text(c, "/name").to_string(),
            c.get("placement").map_or(String::new(), Value::to_string),
            runs.map_or(0, Vec::len).to_string(),
            failed.to_string(),
        ]);
    }
    fit_width(&mut t);
    format!("{t}\n")
}

/// The page of `report`, headed by `label` (e.g. "run 12").
pub fn render(label: &str, report: &Value) -> String {
    let mut out = header(label, report);
    if let Some(job) = mpi_job(report) {
        // The live page's lines start with a line break of their own.
        out.push_str(crate::output::page::mpi_ranks(&job).trim_start());
        out.push('\n');
    }
    if let Some(results) = report.get("results").and_then(Value::as_array) {
        out.push_str(&results_table(results));
    }
    if let Some(configs) = report.get("configurations").and_then(Value::as_array) {
        out.push_str(&format!("workload {}\n", text(report, "/workload")));
        out.push_str(&configurations_table(configs));
    }
    if let Some(ws) = report.get("warnings").and_then(Value::as_array) {
        for w in ws {
            if let Some(m) = w.get("message").and_then(Value::as_str) {
                out.push_str(&format!("warning: {m}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_mpi_run_names_every_rank_as_the_live_page_did() {
        let rank = |rank: u32, host: &str, cpu: u32| {
            json!({"rank": rank, "host": host, "node": rank, "pid": 40 + rank,
                   "allowed_cpus": [0, 1], "cpu": cpu})
        };
        let report = json!({
            "command_line": ["/x/ipcmark", "mpi", "pingpong"],
            "environment": {"mpi": {
                "library": "Open MPI v4.1.4, package: Debian OpenMPI",
                "standard": "3.1", "size": 2, "nodes": ["a", "b"],
                "ranks": [rank(0, "a", 1), rank(1, "b", 0)]
            }},
            "results": []
        });
        let page = render("run 3", &report);
        assert!(
            page.contains("MPI: Open MPI v4.1.4 (standard 3.1), 2 ranks on 2 nodes"),
            "{page}"
        );
        assert!(page.contains("rank 1   node 1 b  pid 41"), "{page}");
        // A report without a job (or a malformed one) has no such lines.
        let mut broken = report.clone();
        broken["environment"]["mpi"]["standard"] = json!(3);
        assert!(!render("run 3", &broken).contains("MPI:"));
    }
}
