//! `thread-metric-basic`: the baseline. One thread (priority 10) passes over
//! a 1024-word array, each word becoming `(word + counter) ^ word`, and
//! counts the passes; every other score of the run is normalised by this one
//! (R = S / H). The words are atomics read and written one at a time, as
//! Thread-Metric's `volatile` array is, so the compiler can neither skip nor
//! vectorise the work.

use crate::engine::models::score::{ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body};
use std::sync::atomic::{AtomicU64, Ordering};

/// The basic processing test.
pub struct Basic;

/// Words in the array, as in Thread-Metric.
const WORDS: usize = 1024;

impl Scored for Basic {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-basic",
            summary: "baseline: passes of arithmetic over a 1024-word array by one thread (Thread-Metric basic processing)",
            group: super::GROUP,
            operation: "one pass over the 1024-word array",
            is_baseline: true,
            needs_fifo: false,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        Ok(ScoreTest {
            threads: vec![ThreadSpec {
                name: "thread 0",
                priority: 10,
                ready: true,
                body: body(|b| {
                    let array: Vec<AtomicU64> = (0..WORDS).map(|_| AtomicU64::new(0)).collect();
                    let mut counter = 0u64;
                    loop {
                        b.running()?;
                        for w in &array {
                            let v = w.load(Ordering::Relaxed);
                            w.store(v.wrapping_add(counter) ^ v, Ordering::Relaxed);
                        }
                        counter += 1;
                        b.count(0);
                    }
                }),
            }],
            counters: &["thread 0"],
            score: &[0],
            routine: None,
            check: None,
        })
    }
}
