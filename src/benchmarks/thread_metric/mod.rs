//! The `thread-metric` group: the eight tests of Thread-Metric (Express
//! Logic, now Eclipse ThreadX `utility/benchmarks/thread_metric/`), each a
//! set of threads whose operations are counted over a period by the engine's
//! score model (`crate::engine::models::score`). Each file here only describes its
//! test: threads with Thread-Metric's priorities, the loop each runs (the
//! operation and its check), the counters, and the reporter's check.
//!
//! Linux stands in for the RTOS calls as follows (docs/method.md):
//! `tm_thread_suspend` / `tm_thread_resume` = a futex wait / wake on a
//! per-thread word, `tm_thread_relinquish` = `sched_yield`,
//! `TM_CAUSE_INTERRUPT` = a real-time signal raised on the thread itself whose
//! handler is the interrupt routine, queues = a POSIX message queue,
//! semaphores = an unnamed POSIX semaphore, memory pool = the global
//! allocator (`malloc` / `free`).

pub mod basic;
pub mod cooperative;
pub mod interrupt;
pub mod interrupt_preemption;
pub mod memory;
pub mod message;
pub mod preemptive;
pub mod synchronization;

/// Name of the group.
pub const GROUP: &str = super::THREAD_METRIC;
