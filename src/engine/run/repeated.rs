//! A command whose unit is a whole run of something the engine does not
//! name (a workload's processes, locally or across MPI ranks), repeated:
//! every configuration `runs` times, in order, with a stated load held and
//! checked around each run, a stop request obeyed between runs, and
//! observers told of each run as it ends (progress, the report saved after
//! every run). The workload's own checks stay in its `run`.
//!
//! ```text
//! start the load (if any)
//! for each configuration, for each run 1..=runs:
//!     stop requested? → stop
//!     observers: started(configuration, run)
//!     load alive? → run once → load alive?
//!     observers: done(configuration, run, its record or why it failed)
//! what the load did over the whole command; observers: finished
//! ```

use crate::engine::os::interrupt;
use crate::engine::os::load::{Load, LoadPlan};
use crate::engine::run::load::FigureLoad;

/// How one run ended without a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// The run failed: recorded as its configuration's failed run; the
    /// command goes on.
    Failed(String),
    /// A stop was requested during the run: it is dropped, and the command
    /// stops with what finished.
    Interrupted,
    /// Nothing more can run (a peer rank is gone): the command ends with
    /// this error.
    #[cfg_attr(
        not(feature = "mpi"),
        allow(dead_code, reason = "only runs across MPI ranks end this way")
    )]
    Fatal(String),
}

/// What a command repeats: one run of one of its configurations.
pub trait Repeated {
    /// What a run that finished gives.
    type Record;
    /// Runs configuration `config` (an index of the plan's) once.
    fn run(&mut self, config: usize) -> Result<Self::Record, RunEnd>;
}

/// What to repeat, how often, and under what load.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Each configuration's name, for progress and errors.
    pub configurations: Vec<String>,
    /// Runs of each configuration.
    pub runs: u32,
    /// The load held over the whole command (`--load`), if one is stated.
    pub load: Option<LoadPlan>,
}

/// Something that follows the runs; every hook defaults to nothing. A hook
/// that returns an error ends the command (the error is the command's).
pub trait Observer<R> {
    /// Run `run` of configuration `config` starts.
    fn started(&mut self, _config: usize, _name: &str, _run: u32, _runs: u32) {}
    /// Run `run` of configuration `config` ended: its record, or why it failed.
    fn done(
        &mut self,
        _config: usize,
        _run: u32,
        _result: &Result<R, String>,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Every run has ended (or the command was stopped: the signal), and
    /// what the load did over them, when one was held.
    fn finished(
        &mut self,
        _stopped: Option<i32>,
        _load: Option<&FigureLoad>,
    ) -> Result<(), String> {
        Ok(())
    }
}

/// Calls `f` on every observer, stopping at the first error.
fn each<R>(
    observers: &mut [&mut dyn Observer<R>],
    mut f: impl FnMut(&mut dyn Observer<R>) -> Result<(), String>,
) -> Result<(), String> {
    observers.iter_mut().try_for_each(|o| f(&mut **o))
}

/// Runs `plan` with `source`: every configuration `plan.runs` times; the
/// runs' records go to the observers as they end (`done`). Gives the
/// signal that stopped the command early, if one did. An observer's error,
/// a load that died, or a fatal run end the command with that error; the
/// load is killed and reaped on every way out.
pub fn run<R>(
    plan: &Plan,
    source: &mut dyn Repeated<Record = R>,
    observers: &mut [&mut dyn Observer<R>],
) -> Result<Option<i32>, String> {
    // Forked before any run; killed and reaped when dropped, on every path.
    let mut load = match &plan.load {
        Some(p) => Some(Load::start(p)?),
        None => None,
    };
    let load_start = load.as_ref().map(Load::snapshot);
    'configs: for (config, name) in plan.configurations.iter().enumerate() {
        for run in 1..=plan.runs {
            if interrupt::stop_requested().is_some() {
                break 'configs;
            }
            observers
                .iter_mut()
                .for_each(|o| o.started(config, name, run, plan.runs));
            if let Some(l) = load.as_mut() {
                l.check()?;
            }
            let outcome = source.run(config);
            if let Some(l) = load.as_mut() {
                l.check()?;
            }
            let result = match outcome {
                Ok(r) => Ok(r),
                Err(RunEnd::Failed(e)) => Err(e),
                // The interrupted run is dropped; what finished is kept.
                Err(RunEnd::Interrupted) => break 'configs,
                Err(RunEnd::Fatal(e)) => return Err(e),
            };
            each(observers, |o| o.done(config, run, &result))?;
        }
    }
    let held = match (&load, &load_start) {
        (Some(l), Some(start)) => Some(FigureLoad::between(l.plan(), start, &l.snapshot())),
        _ => None,
    };
    drop(load);
    let stopped = interrupt::stop_requested();
    each(observers, |o| o.finished(stopped, held.as_ref()))?;
    Ok(stopped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source whose runs give their (configuration, run) until the
    /// `fail_at`-th run, which fails, or ends as `end` says.
    struct Counting {
        runs: u32,
        fail_at: u32,
        end: RunEnd,
    }

    impl Repeated for Counting {
        type Record = (usize, u32);
        fn run(&mut self, config: usize) -> Result<(usize, u32), RunEnd> {
            self.runs += 1;
            if self.runs == self.fail_at {
                return Err(self.end.clone());
            }
            Ok((config, self.runs))
        }
    }

    /// Counts what it was told.
    #[derive(Default)]
    struct Log {
        started: Vec<(usize, u32)>,
        results: Vec<Vec<Result<(usize, u32), String>>>,
        finished: bool,
    }

    impl Observer<(usize, u32)> for Log {
        fn started(&mut self, config: usize, _: &str, run: u32, _: u32) {
            self.started.push((config, run));
        }
        fn done(
            &mut self,
            config: usize,
            _: u32,
            result: &Result<(usize, u32), String>,
        ) -> Result<(), String> {
            self.results
                .resize(self.results.len().max(config + 1), Vec::new());
            self.results[config].push(result.clone());
            Ok(())
        }
        fn finished(&mut self, _: Option<i32>, _: Option<&FigureLoad>) -> Result<(), String> {
            self.finished = true;
            Ok(())
        }
    }

    fn plan() -> Plan {
        Plan {
            configurations: vec!["packed".into(), "spread".into()],
            runs: 3,
            load: None,
        }
    }

    #[test]
    fn every_configuration_runs_its_runs_in_order_and_a_failure_is_kept() {
        let mut source = Counting {
            runs: 0,
            fail_at: 2,
            end: RunEnd::Failed("check failed".into()),
        };
        let mut log = Log::default();
        let stopped = run(&plan(), &mut source, &mut [&mut log]).unwrap();
        assert_eq!(log.results.len(), 2);
        assert_eq!(
            log.results[0],
            vec![Ok((0, 1)), Err("check failed".into()), Ok((0, 3))]
        );
        assert_eq!(log.results[1], vec![Ok((1, 4)), Ok((1, 5)), Ok((1, 6))]);
        assert_eq!(
            log.started,
            [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
        );
        assert!(log.finished && stopped.is_none());
    }

    #[test]
    fn an_interrupted_run_is_dropped_and_a_fatal_one_ends_the_command() {
        let mut source = Counting {
            runs: 0,
            fail_at: 4,
            end: RunEnd::Interrupted,
        };
        let mut log = Log::default();
        run(&plan(), &mut source, &mut [&mut log]).unwrap();
        assert_eq!(log.results.len(), 1, "stopped in the second's first run");
        assert_eq!(log.results[0].len(), 3);
        assert!(log.finished);

        let mut source = Counting {
            runs: 0,
            fail_at: 2,
            end: RunEnd::Fatal("rank 1 is gone".into()),
        };
        let mut log = Log::default();
        let e = run(&plan(), &mut source, &mut [&mut log]).unwrap_err();
        assert_eq!(e, "rank 1 is gone");
        assert!(!log.finished);
    }

    /// An observer that cannot keep the report ends the command.
    #[test]
    fn an_observers_error_ends_the_command() {
        struct Refusing;
        impl Observer<(usize, u32)> for Refusing {
            fn done(
                &mut self,
                _: usize,
                _: u32,
                _: &Result<(usize, u32), String>,
            ) -> Result<(), String> {
                Err("disk full".into())
            }
        }
        let mut source = Counting {
            runs: 0,
            fail_at: 0,
            end: RunEnd::Interrupted,
        };
        let e = run(&plan(), &mut source, &mut [&mut Refusing]).unwrap_err();
        assert_eq!(e, "disk full");
        assert_eq!(source.runs, 1);
    }
}
