//! The page of a workload: the machine line, the workload's tables and
//! what its load did, drawn from its report alone ([`page`]). `ipcmark
//! workload` prints it once its runs are over and `ipcmark show` prints it
//! of the stored report, so the two are the same bytes.

use super::tables::{self, Tables};
use crate::record::workload::WorkloadRecord;

/// The workload's page, from its report: what the run printed on stdout.
pub fn page(report: &WorkloadRecord) -> String {
    let settings = &report.settings;
    // The title from the workload's own parameters, as the run made it;
    // a report of parameters this ipcmark does not read is named by its id.
    let title =
        crate::workloads::title::of(&report.workload, &settings.parameters, settings.duration_ms)
            .unwrap_or_else(|| report.workload.clone());
    let mut out = format!(
        "{}\n{}",
        tables::machine_line(&report.header.ipcmark_version, &report.header.environment),
        tables::render(&Tables {
            title: &title,
            figure: &report.figure,
            roles: &settings.processes,
            migrations: &settings.migrations,
            configs: &report.configurations,
        })
    );
    if let Some(load) = &report.load {
        out.push_str(&crate::output::table::load::summary_line(load));
    }
    out
}
