//! `ipcmark clean`: removes what killed runs left behind.

use super::{Failure, print_stdout};
use crate::engine::os::objects::clean_stale;
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
    out.push_str(&format!(
        "{} object(s) removed, {} kept for live runs, {} kept whose run cannot be proven gone\n",
        report.removed.len(),
        report.live.len(),
        report.kept.len()
    ));
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
