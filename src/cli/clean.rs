//! `ipcmark clean`: removes what killed runs left behind.

use super::{Failure, print_stdout};
use crate::engine::os::objects::{CleanReport, clean_stale};
use std::process::ExitCode;

pub fn clean() -> Result<ExitCode, Failure> {
    let mut report = clean_stale();
    crate::testbed::clean_stale(&mut report);
    // A killed `ipcmark explain`'s tracefs instance, its events on.
    crate::machine::tracefs::clean_stale(&mut report);
    let mut out = String::new();
    for r in &report.removed {
        out.push_str(&format!("removed {r}\n"));
    }
    for l in &report.live {
        out.push_str(&format!("kept {l} (its run is still going)\n"));
    }
    for k in &report.kept {
        out.push_str(&format!("kept {k}\n"));
    }
    out.push_str(&summary(&report));
    print_stdout(&out)?;
    if report.failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::run(format!(
            "could not remove: {}",
            report.failed.join("; ")
        )))
    }
}

/// The last line of `ipcmark clean`: what was removed (cgroups among it,
/// counted apart: removing one also killed what a killed run left in it),
/// and what was kept.
fn summary(report: &CleanReport) -> String {
    format!(
        "{} object(s) removed ({} of them cgroup(s)), {} kept for live runs, \
         {} kept whose run cannot be proven gone\n",
        report.removed.len(),
        report.cgroups_removed,
        report.live.len(),
        report.kept.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_the_cgroups_removed() {
        let report = CleanReport {
            removed: vec!["/dev/shm/a".into(), "cgroup /sys/fs/cgroup/cpu/b".into()],
            cgroups_removed: 1,
            ..CleanReport::default()
        };
        assert_eq!(
            summary(&report),
            "2 object(s) removed (1 of them cgroup(s)), 0 kept for live runs, \
             0 kept whose run cannot be proven gone\n"
        );
    }
}
