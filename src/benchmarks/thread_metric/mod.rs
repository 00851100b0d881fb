//! The `thread-metric` group: the eight tests of Thread-Metric (Express
//! Logic, now Eclipse ThreadX `utility/benchmarks/thread_metric/`), each a
//! set of threads whose operations are counted over a period by the engine's
//! score model (`crate::engine::models::score`). Each file here only describes its
//! test: threads with Thread-Metric's priorities, the loop each runs (the
//! operation and its check), the counters, and the reporter's check. What the
//! tests share is here too, being Thread-Metric's rather than the engine's:
//! the reporter's checks (`checks.rs`) and how a Thread-Metric priority maps
//! to SCHED_FIFO ([`fifo_priority`]).
//!
//! Linux stands in for the RTOS calls as follows (docs/method.md):
//! `tm_thread_suspend` / `tm_thread_resume` = a futex wait / wake on a
//! per-thread word, `tm_thread_relinquish` = `sched_yield`,
//! `TM_CAUSE_INTERRUPT` = a real-time signal raised on the thread itself whose
//! handler is the interrupt routine, queues = a POSIX message queue,
//! semaphores = an unnamed POSIX semaphore, memory pool = the global
//! allocator (`malloc` / `free`).

pub mod basic;
mod checks;
pub mod cooperative;
pub mod interrupt;
pub mod interrupt_preemption;
pub mod memory;
pub mod message;
pub mod preemptive;
pub mod synchronization;

/// Name of the group.
pub const GROUP: &str = super::THREAD_METRIC;

/// SCHED_FIFO priority of a Thread-Metric priority (lower number = more
/// urgent): 40 − p, so 1..31 map to 39..9, all below the engine's reporter
/// ([`REPORTER_FIFO`]). The scale is Thread-Metric's, not the engine's: every
/// test of the group names this as its [`ScoreInfo::fifo_priority`].
///
/// [`REPORTER_FIFO`]: crate::engine::models::score::REPORTER_FIFO
/// [`ScoreInfo::fifo_priority`]: crate::engine::models::score::ScoreInfo::fifo_priority
pub fn fifo_priority(tm_priority: u8) -> i32 {
    40 - i32::from(tm_priority.min(31))
}

/// [`fifo_priority`] in words, for the results page.
pub const PRIORITY_RULE: &str = "SCHED_FIFO 40 − priority";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::score::REPORTER_FIFO;

    #[test]
    fn priorities_keep_thread_metric_order_below_the_reporter() {
        assert!(fifo_priority(3) > fifo_priority(10));
        assert!(fifo_priority(1) < REPORTER_FIFO);
        assert!(fifo_priority(31) >= 1);
    }
}
