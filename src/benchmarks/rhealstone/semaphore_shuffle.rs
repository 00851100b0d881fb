//! `rhealstone-semaphore-shuffle`: Rhealstone's semaphore shuffle time, as
//! RTEMS's `semshuffle` runs it. Two threads of equal SCHED_FIFO priority on
//! one CPU each loop: take the semaphore, yield, give it back, yield. While
//! one holds it and yields, the other blocks on it; the give-back wakes it.
//! The baseline is the same two-thread loop without the semaphore (only the
//! yields). One operation (a turn of the measuring thread's loop, with the
//! helper's turn) is two shuffles, as RTEMS counts them.
//!
//! The semaphore is an unnamed POSIX semaphore (`sem_init`), nothing to
//! clean up. Each thread marks itself the holder while it holds it; finding
//! the other's mark fails the figure (the semaphore did not exclude).

use super::{GROUP, Helpers, realtime, wait_or_stop};
use crate::benchmarks::sched::{SWITCH_SOURCE, shared_cpu, switches_in};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::op::{Counter, Events, Op, OpContext, OpInfo, Operation, Prepared, RealTime};
use crate::sys::sched;
use crate::sys::sync::Semaphore;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// A semaphore passed back and forth between two equal-priority threads.
pub struct SemaphoreShuffle;

const SHUFFLE: u32 = 0;
const YIELDS_ONLY: u32 = 1;
const NOBODY: u32 = 0;
const MEASURING: u32 = 1;
const HELPER: u32 = 2;

struct Shared {
    sem: Semaphore,
    /// What the helper's loop does: [`SHUFFLE`] or [`YIELDS_ONLY`].
    mode: AtomicU32,
    /// Who holds the semaphore.
    holder: AtomicU32,
    /// Set when the helper found the semaphore held by the measuring thread.
    violated: AtomicBool,
    /// Stands in for `holder` in the baseline, so that both loops do the same atomics.
    dummy: AtomicU32,
}

impl Operation for SemaphoreShuffle {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "rhealstone-semaphore-shuffle",
            summary: "a POSIX semaphore taken in turn by two SCHED_FIFO threads of equal priority that yield holding it (per shuffle, the loop without it subtracted)",
            group: GROUP,
            bytes: 0,
            // The first call may block on a semaphore the helper holds, which
            // the probe's forked child (without the helper) would wait on forever.
            enters: &[],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(Events {
            name: "semaphore shuffle",
            per_op: 2,
        })
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "other tasks may run between the two threads: the figure is an upper bound",
        ))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let shared = Arc::new(Shared {
            sem: Semaphore::new(1).map_err(ChannelError::io("sem_init"))?,
            mode: AtomicU32::new(SHUFFLE),
            holder: AtomicU32::new(NOBODY),
            violated: AtomicBool::new(false),
            dummy: AtomicU32::new(NOBODY),
        });
        let mut helpers = Helpers::new();
        let stop = helpers.stop_flag();
        let s = shared.clone();
        helpers.spawn("shuffle", cpu, ctx.rt_priority, move || {
            while !stop.load(Ordering::Relaxed) {
                if s.mode.load(Ordering::Acquire) == SHUFFLE {
                    if !wait_or_stop(&s.sem, &stop) {
                        return;
                    }
                    if s.holder.swap(HELPER, Ordering::AcqRel) != NOBODY {
                        s.violated.store(true, Ordering::Release);
                    }
                    let _ = sched::yield_cpu();
                    s.holder.store(NOBODY, Ordering::Release);
                    let _ = s.sem.post();
                } else {
                    s.dummy.swap(HELPER, Ordering::AcqRel);
                    let _ = sched::yield_cpu();
                    s.dummy.store(NOBODY, Ordering::Release);
                }
                let _ = sched::yield_cpu();
            }
        })?;
        Ok(Prepared {
            op: Box::new(ShuffleOp {
                shared: shared.clone(),
                baseline: YieldsOnly { shared },
                fifo: ctx.rt_priority.is_some(),
                _helpers: helpers,
            }),
            note: Some(format!(
                "helper on CPU {cpu}{}",
                ctx.rt_priority
                    .map_or(String::new(), |p| format!(", both at SCHED_FIFO {p}"))
            )),
        })
    }
}

struct ShuffleOp {
    shared: Arc<Shared>,
    baseline: YieldsOnly,
    fifo: bool,
    /// Stopped and joined on drop.
    _helpers: Helpers,
}

impl Op for ShuffleOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let s = &*self.shared;
        if s.mode.load(Ordering::Relaxed) != SHUFFLE {
            s.mode.store(SHUFFLE, Ordering::Release);
        }
        retry("sem_wait", || s.sem.wait())?;
        if s.holder.swap(MEASURING, Ordering::AcqRel) != NOBODY {
            return Err(ChannelError::Check(
                "the semaphore let both threads hold it at once".into(),
            ));
        }
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))?;
        s.holder.store(NOBODY, Ordering::Release);
        s.sem.post().map_err(ChannelError::io("sem_post"))?;
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        if self.shared.violated.load(Ordering::Acquire) {
            return Err(ChannelError::Check(
                "the helper found the semaphore held by the measuring thread".into(),
            ));
        }
        // Under SCHED_FIFO the measuring thread is switched out at least
        // once per turn (its yield with the helper ready).
        if !self.fifo {
            return Ok(None);
        }
        Ok(Some(Counter {
            source: SWITCH_SOURCE,
            value: switches_in("/proc/thread-self/status")?,
            per_op: 1,
        }))
    }

    fn baseline(&mut self) -> Option<&mut dyn Op> {
        Some(&mut self.baseline)
    }
}

/// The same two-thread loop without the semaphore: the yields only.
struct YieldsOnly {
    shared: Arc<Shared>,
}

impl Op for YieldsOnly {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let s = &*self.shared;
        if s.mode.load(Ordering::Relaxed) != YIELDS_ONLY {
            s.mode.store(YIELDS_ONLY, Ordering::Release);
        }
        s.dummy.swap(MEASURING, Ordering::AcqRel);
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))?;
        s.dummy.store(NOBODY, Ordering::Release);
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))
    }
}
