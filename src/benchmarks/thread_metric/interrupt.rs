//! `thread-metric-interrupt`: one thread (priority 10) raises the software
//! interrupt on itself; the interrupt routine counts and puts a semaphore,
//! which the thread then gets and counts. The score is the interrupts
//! handled; at every report the thread's and the handler's counters must be
//! within 1 of their average (Thread-Metric's check), the handler's never
//! behind. A get that finds the semaphore empty means the handler did not
//! run before the raise returned: the figure fails.

use super::checks::{descending_by_at_most_one, within_one_of_average};
use crate::engine::models::score::{
    Check, ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body, routine,
};
use crate::sys::sync::Semaphore;
use std::sync::Arc;

/// The interrupt processing test.
pub struct Interrupt;

const THREAD: usize = 0;
const HANDLER: usize = 1;

fn check(c: &[u64]) -> Result<(), String> {
    within_one_of_average(c)?;
    descending_by_at_most_one(&[c[HANDLER], c[THREAD]])
}

impl Scored for Interrupt {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-interrupt",
            summary: "a thread raises a signal whose handler puts a semaphore the thread then gets (Thread-Metric interrupt processing)",
            group: super::GROUP,
            operation: "one interrupt: raise, handler puts the semaphore, thread gets it",
            is_baseline: false,
            needs_fifo: false,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        // Thread-Metric's semaphores start at 1; the thread takes that one first.
        let sem = Arc::new(Semaphore::new(1).map_err(|e| format!("sem_init: {e}"))?);
        let in_handler = Arc::clone(&sem);
        Ok(ScoreTest {
            threads: vec![ThreadSpec {
                name: "thread 0",
                priority: 10,
                ready: true,
                body: body(move |b| {
                    if !sem.try_wait().map_err(|e| format!("sem_trywait: {e}"))? {
                        return Err("the semaphore did not start at 1".to_string().into());
                    }
                    loop {
                        b.running()?;
                        b.interrupt()?;
                        // The handler has run: its put must be there.
                        if !sem.try_wait().map_err(|e| format!("sem_trywait: {e}"))? {
                            return Err("the interrupt handler's semaphore put is missing"
                                .to_string()
                                .into());
                        }
                        b.count(THREAD);
                    }
                }),
            }],
            counters: &["thread 0", "interrupt handler"],
            score: &[HANDLER],
            routine: Some(routine(move |b| {
                b.count(HANDLER);
                // A failed put shows as the thread's failed get.
                let _ = in_handler.post();
            })),
            check: Some(Check {
                description: "thread and handler counters within 1 of their average, the handler's never behind",
                test: check,
            }),
        })
    }
}
