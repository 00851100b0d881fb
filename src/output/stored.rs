//! A report read back (`ipcmark show`): a run kept in the history, or a
//! report file. A run's page is the page the run printed ([`run_page`]:
//! `page.rs` draws both from the report's records), so `show` prints what
//! the run did; a workload's report is summarised per configuration.

use crate::output::page::{self, Options};
use crate::output::table::cells::{fit_width, new_table};
use crate::record::RunRecord;
use crate::record::workload::{ConfigurationRecord, WorkloadRecord};

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
    let state = if report.complete {
        "complete"
    } else {
        "incomplete"
    };
    let mut about = format!(
        "{label}: started {}, {state}: {}\n",
        report.started_at,
        command(&report.command_line)
    );
    // As the run printed them: not the machine's conditions the user
    // cannot change, which the record keeps.
    for w in report
        .warnings
        .iter()
        .filter(|w| crate::analysis::warnings::printed_kind(&w.kind))
    {
        about.push_str(&format!("warning: {}\n", w.message));
    }
    let mut page = page::render(report, options);
    // A run of `ipcmark explain` printed each figure's anatomy after the
    // page: so does its stored run.
    for f in &report.results {
        if let Some(ex) = &f.explain {
            page.push_str(&crate::output::explain::render(
                &f.benchmark,
                f.size_bytes,
                ex,
                options.long,
            ));
        }
    }
    Shown { page, about }
}

/// The command's line of a report: the program's own path says nothing
/// (`ipcmark run …`).
fn command(argv: &[String]) -> String {
    let mut argv = argv.to_vec();
    if let Some(first) = argv.first_mut() {
        *first = "ipcmark".into();
    }
    argv.join(" ")
}

/// The workload's run on one line: when, where, how it ended, the command.
fn header(label: &str, report: &WorkloadRecord) -> String {
    let e = &report.environment;
    format!(
        "{label} | ipcmark {} | Linux {} | {} | {} | started {} | {}\n{}\n",
        report.ipcmark_version,
        e.kernel,
        e.hostname,
        e.cpu_model,
        report.started_at,
        if report.complete {
            "complete"
        } else {
            "incomplete"
        },
        command(&report.command_line)
    )
}

/// One row per configuration of a workload: its placement and runs.
fn configurations_table(configs: &[ConfigurationRecord]) -> String {
    let mut t = new_table(vec!["configuration", "placement", "runs", "failed"]);
    for c in configs {
        let failed = c.runs.iter().filter(|r| r.error.is_some()).count();
        t.add_row(vec![
            c.name.clone(),
            serde_json::to_string(&c.placement).unwrap_or_default(),
            c.runs.len().to_string(),
            failed.to_string(),
        ]);
    }
    fit_width(&mut t);
    format!("{t}\n")
}

/// The page of a workload's report, headed by `label` (e.g. "run 12"): the
/// run, the MPI job's ranks, each configuration's runs.
pub fn workload_page(label: &str, report: &WorkloadRecord) -> String {
    let mut out = header(label, report);
    if let Some(job) = &report.environment.mpi {
        // The live page's lines start with a line break of their own.
        out.push_str(page::mpi_ranks(job).trim_start());
        out.push('\n');
    }
    out.push_str(&format!("workload {}\n", report.workload));
    out.push_str(&configurations_table(&report.configurations));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_explained_run_shows_each_figures_waterfall() {
        let report = RunRecord::parse(include_str!("../../tests/reports/explain-a.json")).unwrap();
        let ex = report.results[0].explain.clone().unwrap();
        let shown = run_page("run 7", &report, Options::for_stdout(false));
        assert!(
            shown
                .page
                .contains("pipe 64 — anatomy of a round trip (2000 traced round trips, full)"),
            "{}",
            shown.page
        );
        for p in &ex.parts {
            assert!(shown.page.contains(&p.name), "{}: {}", p.name, shown.page);
        }
        // A run without an anatomy shows none.
        let mut plain = report.clone();
        plain.results[0].explain = None;
        assert!(
            !run_page("run 7", &plain, Options::for_stdout(false))
                .page
                .contains("anatomy")
        );
    }

    #[test]
    fn a_stored_workload_names_its_configurations_and_every_mpi_rank() {
        let text = include_str!("../../tests/reports/workload-failed.json");
        let mut report = WorkloadRecord::from_value(serde_json::from_str(text).unwrap()).unwrap();
        let page = workload_page("run 3", &report);
        assert!(page.starts_with("run 3 | ipcmark "), "{page}");
        assert!(page.contains("workload generator-calculator"), "{page}");
        assert!(!page.contains("MPI:"), "{page}");
        let rank = |rank: i32, host: &str, node: usize, cpu: usize| {
            crate::record::environment::RankRecord {
                rank,
                host: host.into(),
                node,
                pid: 40 + rank as u32,
                allowed_cpus: vec![0, 1],
                cpu: Some(cpu),
            }
        };
        report.environment.mpi = Some(crate::record::environment::MpiRecord {
            library: "Open MPI v4.1.4, package: Debian OpenMPI".into(),
            standard: "3.1".into(),
            size: 2,
            nodes: vec!["a".into(), "b".into()],
            ranks: vec![rank(0, "a", 0, 1), rank(1, "b", 1, 0)],
        });
        let page = workload_page("run 3", &report);
        assert!(
            page.contains("MPI: Open MPI v4.1.4 (standard 3.1), 2 ranks on 2 nodes"),
            "{page}"
        );
        assert!(page.contains("rank 1   node 1 b  pid 41"), "{page}");
    }
}
