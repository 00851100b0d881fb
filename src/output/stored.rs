//! A report read back (`ipcmark show`): a run kept in the history, or a
//! report file. A run's page is the page the run printed ([`run_page`]:
//! `page.rs` draws both from the report's records), so `show` prints what
//! the run did; a workload's report is summarised per configuration.

use crate::output::page::{self, Options};
use crate::record::RunRecord;
use crate::record::workload::WorkloadRecord;

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
    let state = if report.header.complete {
        "complete"
    } else {
        "incomplete"
    };
    let mut about = format!(
        "{label}: started {}, {state}: {}\n",
        report.header.started_at,
        command(&report.header.command_line)
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

/// A workload's page, as `ipcmark workload` printed it
/// (`output::workload::page`), and which run it is, headed by `label`
/// (e.g. "run 12"), for stderr.
pub fn workload_page(label: &str, report: &WorkloadRecord) -> Shown {
    let h = &report.header;
    let state = if h.complete { "complete" } else { "incomplete" };
    Shown {
        page: crate::output::workload::page(report),
        about: format!(
            "{label}: started {}, {state}: {}\n",
            h.started_at,
            h.command()
        ),
    }
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
    fn a_stored_workload_shows_the_page_its_run_printed_and_which_run_it_is() {
        for (name, text) in crate::record::workload::tests::FIXTURES {
            let report = crate::record::workload::tests::parse(text).unwrap();
            let shown = workload_page("run 3", &report);
            assert_eq!(shown.page, crate::output::workload::page(&report), "{name}");
            assert!(shown.page.starts_with("ipcmark "), "{name}: {}", shown.page);
            assert!(
                shown.page.contains(&format!("{}: ", report.workload)),
                "{name}: {}",
                shown.page
            );
            assert!(
                shown.about.starts_with("run 3: started "),
                "{}",
                shown.about
            );
        }
    }
}
