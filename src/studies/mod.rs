//! Studies: questions answered by asking for runs (`run::RunRequest`) and
//! analysing what they gave (`run::Outcome`), or by reading the history's
//! runs through its one door (`history::open`, `Store::open_run_id`); each
//! a typed request and a typed answer, callable from code and tested
//! without the command line (the `Criterion` builder's idea: a study is
//! called, not typed in). A study prints no page or table and decides no
//! exit code.
//!
//! - [`explain`]: traced passes beside a run's figures, cut into parts.
//! - [`map`]: a run's figures placed on every pair of CPUs in turn.
//! - [`selftest`]: A/A pairs of a short suite, compared.
//! - [`advise`]: the host's runs ranked for a need, what is missing
//!   measured first, the top two verified one way.
//! - [`watch`]: the change points of every series of the history
//!   (`ipcmark watch`, and `report --watch`'s charts).
//! - [`check`]: a run judged against a baseline (`ipcmark check`).
//! - [`fleet`]: the newest run of each host of the history, hosts grouped
//!   by class, the outliers and what they differ in (`ipcmark fleet`);
//!   and, under MPI, every rank's run in turn kept in one history
//!   (`ipcmark fleet run`).
//! - [`tax`]: the same figures bare and under isolation layers, each
//!   layer's difference per figure (`ipcmark tax`).

pub mod advise;
pub mod check;
pub mod explain;
pub mod fleet;
pub mod map;
pub mod selftest;
pub mod tax;
pub mod watch;

use crate::run::{Failure, Outcome};

/// What the caller does with each run a study asks for, once it is over:
/// the command line prints its page (or only its closing lines) as `run`
/// would. What the run's own exit code would have been is the caller's to
/// drop; a failure to print or save is the study's.
pub type Finish<'a> = &'a mut dyn FnMut(Outcome) -> Result<(), Failure>;

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
