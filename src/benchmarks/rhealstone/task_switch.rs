//! `rhealstone-task-switch`: Rhealstone's task switch time. Two threads of
//! equal SCHED_FIFO priority share one CPU; each yields in turn, so one
//! `sched_yield` of the measuring thread is two switches (to the helper and
//! back). The baseline, as in RTEMS, is the same loop without the switch:
//! the same `sched_yield` while the helper is parked (blocked on a futex),
//! which returns at once. The engine subtracts it and divides by two.
//!
//! The helper holds no lock while the engine's probe forks (it yields, reads
//! atomics or waits on a futex), so the probe child, which runs one
//! `sched_yield`, inherits nothing it could block on.

use super::{GROUP, Helpers, realtime};
use crate::benchmarks::sched::{SCHED_YIELD, SWITCH_SOURCE, shared_cpu, switches, switches_in};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Counter, Events, Op, OpContext, OpInfo, Operation, Prepared, RealTime};
use crate::sys::{sched, sync};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Two equal-priority threads yielding to each other on one CPU.
pub struct TaskSwitch;

/// The helper's state, shared with the operation.
#[derive(Default)]
struct Shared {
    /// 1: the helper must park (block on this word); 0: it yields.
    park: AtomicU32,
    /// 1 while the helper is parked.
    parked: AtomicU32,
}

impl Operation for TaskSwitch {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "rhealstone-task-switch",
            summary: "sched_yield between two SCHED_FIFO threads of equal priority on one CPU (per switch, yield without a switch subtracted)",
            group: GROUP,
            bytes: 0,
            enters: &[SCHED_YIELD],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(switches(2))
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "the two threads still alternate, but other tasks may run between them: the figure is an upper bound",
        ))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let shared = Arc::new(Shared::default());
        let mut helpers = Helpers::new();
        let stop = helpers.stop_flag();
        let s = shared.clone();
        helpers.spawn("yield", cpu, ctx.rt_priority, move || {
            while !stop.load(Ordering::Relaxed) {
                if s.park.load(Ordering::Acquire) == 1 {
                    s.parked.store(1, Ordering::Release);
                    let _ = sync::futex_wait(&s.park, 1);
                    s.parked.store(0, Ordering::Release);
                } else {
                    let _ = sched::yield_cpu();
                }
            }
        })?;
        let s = shared.clone();
        helpers.on_stop(move || {
            s.park.store(0, Ordering::Release);
            let _ = sync::futex_wake(&s.park, 1);
        });
        Ok(Prepared {
            op: Box::new(SwitchOp {
                shared: shared.clone(),
                baseline: ParkedYield { shared },
                fifo: ctx.rt_priority.is_some(),
                _helpers: helpers,
            }),
            note: Some(format!(
                "helper thread yielding on CPU {cpu}{}",
                ctx.rt_priority
                    .map_or(String::new(), |p| format!(", both at SCHED_FIFO {p}"))
            )),
        })
    }
}

struct SwitchOp {
    shared: Arc<Shared>,
    baseline: ParkedYield,
    fifo: bool,
    /// Last: stopped and joined after nothing else needs it.
    _helpers: Helpers,
}

impl Op for SwitchOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        if self.shared.park.load(Ordering::Relaxed) != 0 {
            // Back from the baseline: the helper yields again.
            self.shared.park.store(0, Ordering::Release);
            sync::futex_wake(&self.shared.park, 1).map_err(ChannelError::io("futex wake"))?;
        }
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Under SCHED_FIFO each yield with the helper ready switches the
        // measuring thread out; under SCHED_OTHER nothing guarantees it.
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

/// `sched_yield` with the helper parked: nothing else is ready at this
/// priority, so the call returns without a switch.
struct ParkedYield {
    shared: Arc<Shared>,
}

impl Op for ParkedYield {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        if self.shared.park.load(Ordering::Relaxed) == 0 {
            self.shared.park.store(1, Ordering::Release);
            let s = &self.shared;
            super::until("yielding thread (parking)", || {
                s.parked.load(Ordering::Acquire) == 1
            })?;
        }
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))
    }
}
