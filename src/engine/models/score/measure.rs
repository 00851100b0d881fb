//! Measuring one test: the threads started on one CPU at their priorities,
//! the reporter run on the calling thread, and every thread stopped, woken
//! and joined, and the interrupt routine removed, on every path.
//!
//! The engine creates the threads on one CPU, gives them strict priorities
//! (SCHED_FIFO) when the system permits, starts them together, wakes up at
//! each report as the highest-priority thread (Thread-Metric's reporting
//! thread), reads every counter, runs the check, and at the deadline stops
//! and joins every thread before the next figure.

use super::board::{Board, End, interrupt_signal};
use super::contract::{Body, ScoreInfo, ScoreSettings, ScoreTest, ThreadSpec};
use super::facts::{ScoreFacts, ScoreFailure, ThreadRecord, facts};
use super::reporter::{PROGRESS_CHECK, Reports, report};
use crate::engine::measure::Measurement;
use crate::sys::{sched, signal as sig};
use std::sync::Arc;

/// Runs one test for the period on the calling thread's CPU, the caller
/// being the reporter (placed by the runner at [`REPORTER_FIFO`] when
/// `s.fifo`). Every thread is joined before this returns, on every path.
///
/// [`REPORTER_FIFO`]: super::contract::REPORTER_FIFO
pub fn measure(
    info: &ScoreInfo,
    test: ScoreTest,
    s: &ScoreSettings,
) -> Result<(Measurement, ScoreFacts), ScoreFailure> {
    let ScoreTest {
        threads,
        counters,
        score,
        routine,
        check,
    } = test;
    if threads.is_empty() || score.iter().any(|&c| c >= counters.len()) {
        return Err("the test has no threads or scores an unknown counter"
            .to_string()
            .into());
    }
    let board = Arc::new(Board::new(threads.len(), counters.len(), routine.is_some()));
    let thread_records: Vec<ThreadRecord> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| ThreadRecord {
            name: t.name,
            priority: t.priority,
            fifo_priority: s
                .fifo
                .then(|| (info.fifo_priority)(t.priority) + i32::from(s.unfair && i == 0)),
        })
        .collect();
    // Installed before any thread starts, removed after all are joined.
    let isr = match routine {
        Some(r) => {
            let b = Arc::clone(&board);
            Some(
                sig::Isr::install(interrupt_signal(), Box::new(move || r(&b)))
                    .map_err(|e| format!("install the interrupt routine: {e}"))?,
            )
        }
        None => None,
    };
    // Test threads take only the interrupt signal: stop requests, the
    // watchdog and child exits go to the reporter, whose sleep they end.
    let mut mask = sig::SigSet::full();
    mask.remove(interrupt_signal());
    let mut handles = Vec::with_capacity(threads.len());
    let mut spawn_error = None;
    for (i, t) in threads.into_iter().enumerate() {
        let b = Arc::clone(&board);
        let fifo = thread_records[i].fifo_priority;
        let ThreadSpec {
            name, ready, body, ..
        } = t;
        let spawned = std::thread::Builder::new()
            .name(format!("tm {name}"))
            .spawn(move || run_thread(&b, i, name, fifo, ready, mask, body));
        match spawned {
            Ok(h) => handles.push((name, h)),
            Err(e) => {
                spawn_error = Some(format!("spawn {name}: {e}"));
                break;
            }
        }
    }
    let outcome = match spawn_error {
        Some(e) => Err((e, None)),
        None => report(&board, handles.len(), counters, score, check, s),
    };
    board.stop_all();
    let mut join_error = None;
    for (name, h) in handles {
        if h.join().is_err() {
            join_error.get_or_insert(format!("{name} panicked"));
        }
    }
    drop(isr);
    let failure = board.failure().or(join_error);
    let checks: Vec<&'static str> = check
        .iter()
        .map(|c| c.description)
        .chain(std::iter::once(PROGRESS_CHECK))
        .collect();
    let record = |r: &Reports| facts(info, s, r, counters, score, &thread_records, &checks);
    match (outcome, failure) {
        (Ok(r), None) => match r.measurement(score) {
            Some(m) => Ok((m, record(&r))),
            // The reporter's checks fail such a period first; kept so that
            // no interval without an operation ever becomes a time.
            None => Err(ScoreFailure {
                message: "no operation completed in any interval".into(),
                facts: Some(Box::new(record(&r))),
            }),
        },
        (Ok(r), Some(f)) => Err(ScoreFailure {
            message: f,
            facts: Some(Box::new(record(&r))),
        }),
        (Err((why, r)), thread_failure) => Err(ScoreFailure {
            // A thread's own error says more than the reporter's symptom.
            message: thread_failure.unwrap_or(why),
            facts: r.as_ref().map(|r| Box::new(record(r))),
        }),
    }
}

/// A test thread: placed, masked, ready, then its loop after the start.
fn run_thread(
    board: &Board,
    me: usize,
    name: &'static str,
    fifo: Option<i32>,
    ready: bool,
    mask: sig::SigSet,
    body: Body,
) {
    let setup = (|| {
        sig::thread_mask(libc::SIG_SETMASK, &mask).map_err(|e| format!("signal mask: {e}"))?;
        if let Some(p) = fifo {
            sched::set_fifo(p).map_err(|e| format!("SCHED_FIFO {p}: {e}"))?;
        }
        Ok::<(), String>(())
    })();
    board.mark_ready();
    if let Err(e) = setup {
        board.fail(format!("{name}: {e}"));
        return;
    }
    board.wait_start();
    let ran = (|| {
        board.running()?;
        if !ready {
            board.suspend(me)?;
        }
        body(board)
    })();
    if let Err(End::Failed(why)) = ran {
        board.fail(format!("{name}: {why}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::score::{
        Check, INTERVALS, REPORTER_FIFO, ScoreContext, ScoreInfo, ScoreSettings, ScoreTest, Scored,
        ThreadSpec, body, routine,
    };
    use crate::engine::os::objects::ObjectNamer;
    use crate::engine::run::figure::Outcome;
    use crate::sys::sched;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A test of two threads handing a turn back and forth through
    /// suspend/resume, and an interrupt; `fail_after` makes thread 1 fail.
    struct PingPong {
        fail_after: Option<u64>,
    }

    impl Scored for PingPong {
        fn info(&self) -> ScoreInfo {
            ScoreInfo {
                id: "test-pingpong",
                summary: "two threads taking turns",
                group: "test",
                operation: "one turn",
                is_baseline: false,
                needs_fifo: false,
                fifo_priority: |p| 40 - i32::from(p),
            }
        }

        fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
            let fail_after = self.fail_after;
            Ok(ScoreTest {
                threads: vec![
                    ThreadSpec {
                        name: "thread 0",
                        priority: 10,
                        ready: true,
                        body: body(|b| {
                            loop {
                                b.running()?;
                                b.interrupt()?;
                                b.resume(1)?;
                                b.suspend(0)?;
                            }
                        }),
                    },
                    ThreadSpec {
                        name: "thread 1",
                        priority: 10,
                        ready: false,
                        body: body(move |b| {
                            let mut n = 0u64;
                            loop {
                                b.running()?;
                                b.count(0);
                                n += 1;
                                if fail_after.is_some_and(|f| n >= f) {
                                    return Err("deliberate failure".to_string().into());
                                }
                                b.resume(0)?;
                                b.suspend(1)?;
                            }
                        }),
                    },
                ],
                counters: &["turns", "interrupts"],
                score: &[0],
                routine: Some(routine(|b| b.count(1))),
                check: Some(Check {
                    description: "one interrupt per turn",
                    test: |c| {
                        if c[1] == c[0] || c[1] == c[0] + 1 {
                            Ok(())
                        } else {
                            Err(format!("{} interrupts for {} turns", c[1], c[0]))
                        }
                    },
                }),
            })
        }
    }

    /// Serialises the tests that install the interrupt routine.
    static ROUTINE: Mutex<()> = Mutex::new(());

    fn settings() -> ScoreSettings {
        ScoreSettings {
            period: Duration::from_millis(50),
            intervals: INTERVALS,
            cpu: sched::current_cpu(),
            fifo: crate::engine::os::placement::probe_rt(REPORTER_FIFO).is_ok(),
            timeout: Duration::from_secs(5),
            unfair: false,
        }
    }

    #[test]
    fn a_figure_counts_checks_joins_and_restores_the_thread() {
        let _g = ROUTINE.lock().unwrap_or_else(|p| p.into_inner());
        let cpus = sched::allowed_cpus().unwrap();
        let names = ObjectNamer::new();
        let r = crate::engine::run::runner::run_score_figure(
            &PingPong { fail_after: None },
            &settings(),
            None,
            &names,
        );
        assert!(matches!(r.outcome, Outcome::Ok(_)), "{:?}", r.outcome);
        let f = r.score().unwrap();
        assert_eq!(f.interval_operations.len(), INTERVALS);
        assert_eq!(f.operations, f.interval_operations.iter().sum::<u64>());
        assert_eq!(f.counters[0].value, f.operations);
        assert!(f.operations > 0);
        assert_eq!(sched::policy_name(), "SCHED_OTHER");
        assert_eq!(sched::allowed_cpus().unwrap(), cpus);
    }

    #[test]
    fn a_thread_error_fails_the_figure_and_still_joins_everything() {
        let _g = ROUTINE.lock().unwrap_or_else(|p| p.into_inner());
        let names = ObjectNamer::new();
        let r = crate::engine::run::runner::run_score_figure(
            &PingPong {
                fail_after: Some(100),
            },
            &settings(),
            None,
            &names,
        );
        match &r.outcome {
            Outcome::Failed(e) => assert!(e.contains("thread 1: deliberate failure"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(sched::policy_name(), "SCHED_OTHER");
        // The routine is gone: another can be installed.
        let isr = sig::Isr::install(interrupt_signal(), Box::new(|| {})).unwrap();
        drop(isr);
    }
}
