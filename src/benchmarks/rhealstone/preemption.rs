//! `rhealstone-preemption`: Rhealstone's task preemption time. The measuring
//! thread (SCHED_FIFO base) wakes a helper one priority above it, blocked on
//! a futex; the helper preempts it at once, acknowledges and blocks again,
//! which switches back. One operation is two switches: the preemption and
//! the return. The baseline is the same two futex calls with no thread to
//! wake (a wake on a word nobody waits on, a wait that returns at once
//! because the word already changed), so what remains is the wake-up, the
//! preemption and the block.

use super::{GROUP, Helpers, realtime, until};
use crate::benchmarks::sched::{SWITCH_SOURCE, shared_cpu, switches};
use crate::engine::channel::ChannelError;
use crate::engine::op::{
    Counter, Events, KernelCall, Op, OpContext, OpInfo, Operation, Prepared, RealTime,
};
use crate::sys::seccomp::calls;
use crate::sys::sync;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

const FUTEX: KernelCall = KernelCall {
    name: "futex",
    nrs: calls::FUTEX,
};

/// A wake-up of a higher-priority thread, which preempts the waker.
pub struct Preemption;

#[derive(Default)]
struct Shared {
    /// Raised by the measuring thread for each wake-up.
    seq: AtomicU32,
    /// The last `seq` the helper saw.
    ack: AtomicU32,
}

impl Operation for Preemption {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "rhealstone-preemption",
            summary: "futex wake of a higher-priority SCHED_FIFO thread that preempts the waker (per switch, the calls without a switch subtracted)",
            group: GROUP,
            bytes: 0,
            enters: &[FUTEX],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(switches(2))
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "the woken thread does not preempt the waker: the figure is a wake-up and a later switch, not a preemption",
        ))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let shared = Arc::new(Shared::default());
        let mut helpers = Helpers::new();
        let stop = helpers.stop_flag();
        let s = shared.clone();
        helpers.spawn("preempt", cpu, ctx.rt_priority.map(|p| p + 1), move || {
            let mut seen = 0;
            while !stop.load(Ordering::Relaxed) {
                let now = s.seq.load(Ordering::Acquire);
                if now == seen {
                    let _ = sync::futex_wait(&s.seq, seen);
                    continue;
                }
                seen = now;
                s.ack.store(seen, Ordering::Release);
            }
        })?;
        let s = shared.clone();
        helpers.on_stop(move || {
            s.seq.fetch_add(1, Ordering::AcqRel);
            let _ = sync::futex_wake(&s.seq, 1);
        });
        Ok(Prepared {
            op: Box::new(PreemptOp {
                shared,
                baseline: NoWaiter {
                    idle: AtomicU32::new(0),
                    seq: AtomicU32::new(0),
                },
                fifo: ctx.rt_priority.is_some(),
                helpers,
            }),
            note: Some(format!(
                "helper on CPU {cpu}{}",
                ctx.rt_priority.map_or(String::new(), |p| format!(
                    " at SCHED_FIFO {}, waker at {p}",
                    p + 1
                ))
            )),
        })
    }
}

struct PreemptOp {
    shared: Arc<Shared>,
    baseline: NoWaiter,
    fifo: bool,
    helpers: Helpers,
}

impl Op for PreemptOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        // The helper acknowledges the word's value, whatever raised it
        // before (the probe child's copy raised only its own).
        let s = &self.shared;
        let now = s.seq.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        sync::futex_wake(&s.seq, 1).map_err(ChannelError::io("futex wake"))?;
        until("preempting thread", || s.ack.load(Ordering::Acquire) == now)
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Under SCHED_FIFO the helper blocks once per wake-up.
        if !self.fifo {
            return Ok(None);
        }
        Ok(Some(Counter {
            source: SWITCH_SOURCE,
            value: self.helpers.switches(0)?,
            per_op: 1,
        }))
    }

    fn baseline(&mut self) -> Option<&mut dyn Op> {
        Some(&mut self.baseline)
    }
}

/// The same calls with nobody to wake: a wake on a word no thread waits on,
/// and a wait on a word that has already changed (returns at once).
struct NoWaiter {
    idle: AtomicU32,
    seq: AtomicU32,
}

impl Op for NoWaiter {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let now = self.seq.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        sync::futex_wake(&self.idle, 1).map_err(ChannelError::io("futex wake"))?;
        sync::futex_wait(&self.idle, 1).map_err(ChannelError::io("futex wait"))?;
        if self.seq.load(Ordering::Acquire) != now {
            return Err(ChannelError::Check("baseline counter moved".into()));
        }
        Ok(())
    }
}
