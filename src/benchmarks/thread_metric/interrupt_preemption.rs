//! `thread-metric-interrupt-preemption`: thread 1 (priority 10) raises the
//! software interrupt on itself; the interrupt routine counts and resumes
//! thread 0 (priority 3), which preempts thread 1, counts and suspends
//! itself; then thread 1 counts. The score is the interrupts handled; at
//! every report the three counters must be within 1 of their average
//! (Thread-Metric's check) and never ahead of the step before them
//! (handler, then thread 0, then thread 1).

use super::checks::{descending_by_at_most_one, within_one_of_average};
use crate::engine::models::score::{
    Check, ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body, routine,
};

/// The interrupt preemption processing test.
pub struct InterruptPreemption;

const THREAD_0: usize = 0;
const THREAD_1: usize = 1;
const HANDLER: usize = 2;

fn check(c: &[u64]) -> Result<(), String> {
    within_one_of_average(c)?;
    descending_by_at_most_one(&[c[HANDLER], c[THREAD_0], c[THREAD_1]])
}

impl Scored for InterruptPreemption {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-interrupt-preemption",
            summary: "a signal handler resumes a more urgent thread, which preempts the raising one (Thread-Metric interrupt preemption processing)",
            group: super::GROUP,
            operation: "one interrupt: raise, handler resumes the urgent thread, it runs and suspends",
            is_baseline: false,
            needs_fifo: true,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        Ok(ScoreTest {
            threads: vec![
                ThreadSpec {
                    name: "thread 0",
                    priority: 3,
                    // Suspended until the first interrupt resumes it.
                    ready: false,
                    body: body(|b| {
                        loop {
                            b.running()?;
                            b.count(THREAD_0);
                            b.suspend(THREAD_0)?;
                        }
                    }),
                },
                ThreadSpec {
                    name: "thread 1",
                    priority: 10,
                    ready: true,
                    body: body(|b| {
                        loop {
                            b.running()?;
                            // Returns once the handler and thread 0 have run.
                            b.interrupt()?;
                            b.count(THREAD_1);
                        }
                    }),
                },
            ],
            counters: &["thread 0", "thread 1", "interrupt handler"],
            score: &[HANDLER],
            routine: Some(routine(|b| {
                b.count(HANDLER);
                // A failed resume shows in the counters' check.
                let _ = b.resume(THREAD_0);
            })),
            check: Some(Check {
                description: "the three counters within 1 of their average, in the order handler, thread 0, thread 1",
                test: check,
            }),
        })
    }
}
