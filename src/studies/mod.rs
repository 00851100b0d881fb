//! Studies: questions answered by asking for runs (`run::RunRequest`) and
//! analysing what they gave (`run::Outcome`, the history's records), each
//! callable from code and tested without the command line. `explain`
//! traces passes beside a run's figures; `map` places them on every pair of
//! CPUs; `selftest` runs A/A pairs; `advise` measures what it ranks.

pub mod advise;
pub mod explain;
pub mod map;
pub mod selftest;

use crate::run::{Failure, Outcome};

/// What the caller does with each run a study asks for, once it is over:
/// the command line prints its page (or only its closing lines) as `run`
/// would. What the run's own exit code would have been is the caller's to
/// drop; a failure to print or save is the study's.
pub type Finish<'a> = &'a mut dyn FnMut(Outcome) -> Result<(), Failure>;
