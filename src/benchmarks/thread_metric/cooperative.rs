//! `thread-metric-cooperative`: five threads of equal priority (3), each
//! relinquishing the CPU (`sched_yield`) and then counting. The score is the
//! total of the five counters; at every report each counter must be within 1
//! of their average, as Thread-Metric's reporter checks: under SCHED_FIFO a
//! yield hands the CPU to the next thread of the same priority in strict turn.

use super::checks::within_one_of_average;
use crate::engine::models::score::{
    Check, ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body,
};

/// The cooperative scheduling test.
pub struct Cooperative;

const NAMES: [&str; 5] = ["thread 0", "thread 1", "thread 2", "thread 3", "thread 4"];

impl Scored for Cooperative {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-cooperative",
            summary: "five equal-priority threads relinquishing the CPU in turn (Thread-Metric cooperative scheduling)",
            group: super::GROUP,
            operation: "one relinquish (sched_yield) and count by one of the five threads",
            is_baseline: false,
            needs_fifo: true,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        let threads = (0..NAMES.len())
            .map(|i| ThreadSpec {
                name: NAMES[i],
                priority: 3,
                ready: true,
                body: body(move |b| {
                    loop {
                        b.running()?;
                        b.relinquish()?;
                        b.count(i);
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
                description: "every counter within 1 of the average (strict turns)",
                test: within_one_of_average,
            }),
        })
    }
}
