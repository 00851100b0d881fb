//! The fleet from the history (`ipcmark fleet --db DB [--since DATE]`):
//! the newest run of `ipcmark run` of each host (after `since`; the runs
//! `ipcmark selftest` made left out unless asked for), opened through the
//! history's one door, then `analysis::fleet`. Only the runs taken are
//! read whole: which run of a host is newest is decided from the history's
//! columns, by the analysis's own rule (`newest_per_host`). And how such a
//! history is filled under MPI ([`turns`], `ipcmark fleet run`).

#[cfg(feature = "mpi")]
pub mod turns;

use crate::analysis::fleet::{self, Input, newest_per_host};
use crate::history::{Error, Kind, OpenError, Opened, Store, StoredRun};
use crate::record::build::BuildRecord;
use crate::record::fleet::{FleetReport, SupersededRecord};
use std::path::Path;

/// Which runs of the history make the fleet.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Only runs started on or after this time.
    pub since: Option<jiff::Timestamp>,
    /// Also the runs `ipcmark selftest` made.
    pub selftest_runs: bool,
}

/// The fleet of the history at `path`, as the report `build` writes.
pub fn fleet(path: &Path, req: &Request, build: BuildRecord) -> Result<FleetReport, Error> {
    let store = Store::open_reader(path)?;
    let selftests = match req.selftest_runs {
        true => Default::default(),
        false => store.selftest_runs()?,
    };
    let runs: Vec<_> = store
        .runs()?
        .into_iter()
        .filter(|r| r.kind == Kind::Run && !selftests.contains(&r.id))
        .filter(|r| {
            req.since.is_none_or(|s| {
                r.started_at
                    .parse::<jiff::Timestamp>()
                    .is_ok_and(|t| t >= s)
            })
        })
        .collect();
    if runs.is_empty() {
        return Err(Error::Usage(format!(
            "the history {} holds no run of ipcmark run{}: gather the hosts' reports \
             (docs/fleet.md) and `ipcmark import` them, or name the files",
            store.path().display(),
            if req.since.is_some() {
                " since then"
            } else {
                ""
            }
        )));
    }
    let pairs: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (r.host.as_str(), r.started_at.as_str()))
        .collect();
    let (kept, left) = newest_per_host(&pairs);
    let mut inputs = Vec::new();
    for &i in &kept {
        match store.open_run_id(runs[i].id) {
            Ok(Opened {
                label,
                id,
                run: StoredRun::Run(record),
            }) => inputs.push(Input {
                source: label,
                run_id: id,
                record: *record,
            }),
            Err(OpenError::History(e)) => return Err(e),
            // A stored report that no longer reads: its host is left out.
            Ok(_) | Err(_) => {}
        }
    }
    let mut report = fleet::fleet(inputs, None, build);
    report.runs_read = runs.len();
    report.superseded = left
        .iter()
        .map(|&(i, by)| SupersededRecord {
            host: crate::output::sanitise::text(&runs[i].host).into_owned(),
            source: format!("run {}", runs[i].id),
            started_at: runs[i].started_at.clone(),
            by: format!("run {}", runs[by].id),
        })
        .collect();
    Ok(report)
}

#[cfg(test)]
mod tests;
