//! The page of a workload: the machine line, the workload's tables and
//! what its load did, drawn from its report alone ([`page`]). `ipcmark
//! workload` prints it once its runs are over and `ipcmark show` prints it
//! of the stored report, so the two are the same bytes.

use super::tables::{self, Tables};
use crate::record::workload::WorkloadRecord;
#[cfg(feature = "mpi")]
use {
    super::ConfigResult, crate::engine::os::group::Migration,
    crate::machine::environment::Environment, crate::record::environment::EnvironmentRecord,
    crate::record::workload::MigrationRecord, crate::workloads::WorkloadInfo,
};

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

#[cfg(feature = "mpi")]
/// The tables of runs as they ended (`workload --engine mpi`, which prints
/// them before any report is read back): the same tables, through the
/// records the report is made of.
pub fn render(
    info: &WorkloadInfo,
    title: &str,
    roles: &[String],
    migrations: &[Option<Migration>],
    configs: &[ConfigResult],
) -> String {
    let migrations: Vec<MigrationRecord> = migrations
        .iter()
        .enumerate()
        .filter_map(|(p, m)| {
            m.as_ref().map(|m| MigrationRecord {
                process: p + 1,
                role: roles.get(p).cloned().unwrap_or_default(),
                plan: super::migration_plan(m),
            })
        })
        .collect();
    tables::render(&Tables {
        title,
        figure: &super::figure_info(info),
        roles,
        migrations: &migrations,
        configs: &super::configurations(info.headline, configs),
    })
}

#[cfg(feature = "mpi")]
/// The machine line of this ipcmark on `env` (`workload --engine mpi`).
pub fn machine_line(env: &Environment) -> String {
    tables::machine_line(env!("CARGO_PKG_VERSION"), &EnvironmentRecord::from(env))
}
