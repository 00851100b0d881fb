//! Studies: questions asked of the history in code, each a typed request
//! and a typed answer, with the command line as one caller among others
//! (the `Criterion` builder's idea: a study is called, not typed in).
//! A study opens the history, reads its runs through the one door
//! (`history::open`, `Store::open_run_id`), hands them to `analysis`, and
//! returns records; it prints nothing and decides no exit code, so each
//! is unit-tested on a history made in a temporary directory.
//!
//! - [`watch`]: the change points of every series of the history
//!   (`ipcmark watch`, and `report --watch`'s charts).
//! - [`check`]: a run judged against a baseline (`ipcmark check`).

pub mod check;
pub mod watch;

#[cfg(test)]
pub(crate) mod tests {
    use crate::history::{Report, RunWriter, Store};
    use crate::record::RunRecord;
    use std::path::Path;

    /// Stores `runs` in the history at `path`, in order; their ids.
    pub(crate) fn store(path: &Path, runs: &[RunRecord]) -> Vec<i64> {
        runs.iter()
            .map(|r| {
                let mut w = RunWriter::start(Store::open(path).unwrap(), Report::Run(r)).unwrap();
                w.save(Report::Run(r)).unwrap();
                w.id()
            })
            .collect()
    }
}
