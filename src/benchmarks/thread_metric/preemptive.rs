//! `thread-metric-preemptive`: five threads of priorities 10, 9, 8, 7, 6.
//! Thread 0 (the least urgent, the only one ready at the start) resumes
//! thread 1, which preempts it and resumes thread 2, and so on up to thread
//! 4; each counts and suspends itself, most urgent first, until thread 0
//! counts and starts the chain again. The score is the total of the five
//! counters; at every report they must be within 1 of their average
//! (Thread-Metric's check) and, most urgent first, never increase and span
//! at most 1 (the chain's order).

use super::checks::{descending_by_at_most_one, within_one_of_average};
use crate::engine::models::score::{
    Check, ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body,
};

/// The preemptive scheduling test.
pub struct Preemptive;

const NAMES: [&str; 5] = ["thread 0", "thread 1", "thread 2", "thread 3", "thread 4"];

fn check(c: &[u64]) -> Result<(), String> {
    within_one_of_average(c)?;
    let urgent_first: Vec<u64> = c.iter().rev().copied().collect();
    descending_by_at_most_one(&urgent_first)
}

impl Scored for Preemptive {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-preemptive",
            summary: "a chain of resumes through five priorities, each thread preempting the last (Thread-Metric preemptive scheduling)",
            group: super::GROUP,
            operation: "one thread's turn in the chain (resumed, counts, suspends)",
            is_baseline: false,
            needs_fifo: true,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        let last = NAMES.len() - 1;
        let threads = (0..NAMES.len())
            .map(|i| ThreadSpec {
                name: NAMES[i],
                // Thread-Metric: thread 0 at 10 down to thread 4 at 6.
                priority: 10 - i as u8,
                ready: i == 0,
                body: body(move |b| {
                    loop {
                        b.running()?;
                        if i < last {
                            // Returns only when every more urgent thread has
                            // counted and suspended itself.
                            b.resume(i + 1)?;
                        }
                        b.count(i);
                        if i > 0 {
                            b.suspend(i)?;
                        }
                    }
                }),
            })
            .collect();
        Ok(ScoreTest {
            threads,
            counters: &NAMES,
            score: &[0, 1, 2, 3, 4],
            routine: None,
            check: Some(Check {
                description: "every counter within 1 of the average; none ahead of a more urgent one",
                test: check,
            }),
        })
    }
}
