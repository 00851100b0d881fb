//! `thread-metric-synchronization`: one thread (priority 10) gets and puts
//! a semaphore (an unnamed POSIX semaphore, count 1) and counts. A get that
//! finds it empty means a put was lost: the figure fails.

use crate::engine::models::score::{ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body};
use crate::sys::sync::Semaphore;

/// The synchronisation processing test.
pub struct Synchronization;

impl Scored for Synchronization {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-synchronization",
            summary: "semaphore get and put by one thread (Thread-Metric synchronization processing)",
            group: super::GROUP,
            operation: "one semaphore get (sem_trywait) and put (sem_post)",
            is_baseline: false,
            needs_fifo: false,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        let sem = Semaphore::new(1).map_err(|e| format!("sem_init: {e}"))?;
        Ok(ScoreTest {
            threads: vec![ThreadSpec {
                name: "thread 0",
                priority: 10,
                ready: true,
                body: body(move |b| {
                    loop {
                        b.running()?;
                        if !sem.try_wait().map_err(|e| format!("sem_trywait: {e}"))? {
                            return Err("the semaphore was empty: a put was lost"
                                .to_string()
                                .into());
                        }
                        sem.post().map_err(|e| format!("sem_post: {e}"))?;
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
