//! `rhealstone-interrupt-latency` (mode `event`): Rhealstone's interrupt
//! latency as Linux offers it to a program: from a timer's expiry to the
//! thread that handles it running. A handler thread at the top priority
//! (base + 1) blocks reading a `timerfd`; the measuring thread arms it to
//! expire at an absolute time D ahead and stays busy (as the RTEMS task that
//! raises the interrupt is running when it comes), polling for the answer.
//! The expiry's interrupt wakes the handler, which preempts the measuring
//! thread and reads the clock as it returns to user space: its latency is
//! that reading minus the expiry time.
//!
//! The baseline is the same deadline found by polling the clock, with no
//! timer, interrupt or wake-up: the first clock reading at or after it,
//! minus it (what a clock read adds to any such measurement). The engine
//! subtracts its median from every event.

use super::{GROUP, Helpers, realtime, until};
use crate::benchmarks::sched::shared_cpu;
use crate::engine::channel::ChannelError;
use crate::engine::op::{
    Counter, Events, KernelCall, Op, OpContext, OpInfo, Operation, Prepared, RealTime,
};
use crate::sys::clock::monotonic_ns;
use crate::sys::seccomp::calls;
use crate::sys::timer::TimerFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const TIMERFD_SETTIME: KernelCall = KernelCall {
    name: "timerfd_settime",
    nrs: calls::TIMERFD_SETTIME,
};

/// How far ahead each expiry is set: long enough for the measuring thread to
/// be back in its loop, short enough for many events per sample.
const AHEAD_NS: u64 = 50_000;

/// How far ahead the baseline's polled deadline is.
const BASE_AHEAD_NS: u64 = 2_000;

/// Timer expiry to a blocked handler thread running.
pub struct InterruptLatency;

struct Shared {
    timer: TimerFd,
    /// The expiry time of the current event (monotonic ns).
    deadline: AtomicU64,
    /// The handler's clock reading minus `deadline`, per event.
    latency: AtomicU64,
    /// Events the handler has finished.
    handled: AtomicU64,
    /// Expirations a read reported beyond the one expected (must stay 0).
    extra: AtomicU64,
}

impl Operation for InterruptLatency {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "rhealstone-interrupt-latency",
            summary: "timerfd expiry to the highest-priority SCHED_FIFO thread, blocked on it, running (clock read at a polled deadline subtracted)",
            group: GROUP,
            bytes: 0,
            enters: &[TIMERFD_SETTIME],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(Events {
            name: "interrupt",
            per_op: 1,
        })
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "the woken handler waits for the scheduler to preempt the busy thread: the figure includes that wait",
        ))
    }

    fn self_timed(&self) -> bool {
        true
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let shared = Arc::new(Shared {
            timer: TimerFd::new().map_err(ChannelError::io("timerfd_create"))?,
            deadline: AtomicU64::new(0),
            latency: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            extra: AtomicU64::new(0),
        });
        let mut helpers = Helpers::new();
        let stop = helpers.stop_flag();
        let s = shared.clone();
        helpers.spawn(
            "irq-handler",
            cpu,
            ctx.rt_priority.map(|p| p + 1),
            move || {
                while !stop.load(Ordering::Relaxed) {
                    let n = match s.timer.wait() {
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => return,
                    };
                    let t = monotonic_ns();
                    let d = s.deadline.load(Ordering::Acquire);
                    s.latency.store(t.saturating_sub(d), Ordering::Relaxed);
                    if n != 1 {
                        s.extra.fetch_add(n.saturating_sub(1), Ordering::Relaxed);
                    }
                    s.handled.fetch_add(1, Ordering::Release);
                }
            },
        )?;
        let s = shared.clone();
        helpers.on_stop(move || {
            let _ = s.timer.expire_at(1);
        });
        Ok(Prepared {
            op: Box::new(IrqOp {
                shared,
                events: 0,
                last: 0,
                baseline: PolledDeadline { last: 0 },
                fifo: ctx.rt_priority.is_some(),
                helpers,
            }),
            note: Some(format!(
                "timerfd expiring {} µs ahead, handler on CPU {cpu}{}",
                AHEAD_NS / 1000,
                ctx.rt_priority.map_or(String::new(), |p| format!(
                    " at SCHED_FIFO {}, busy thread at {p}",
                    p + 1
                ))
            )),
        })
    }
}

struct IrqOp {
    shared: Arc<Shared>,
    events: u64,
    last: u64,
    baseline: PolledDeadline,
    fifo: bool,
    helpers: Helpers,
}

impl Op for IrqOp {
    fn run(&mut self) -> Result<(), ChannelError> {
        let s = &*self.shared;
        self.events += 1;
        let deadline = monotonic_ns() + AHEAD_NS;
        s.deadline.store(deadline, Ordering::Release);
        s.timer
            .expire_at(deadline)
            .map_err(ChannelError::io("timerfd_settime"))?;
        // Busy until the handler has run; `until` yields only while it
        // waits, which under SCHED_FIFO keeps the CPU (no other thread of
        // this priority) and under SCHED_OTHER lets the handler in.
        let want = self.events;
        until("timer's handler thread", || {
            s.handled.load(Ordering::Acquire) >= want
        })?;
        if s.handled.load(Ordering::Acquire) != want {
            return Err(ChannelError::Sequence {
                expected: want,
                got: s.handled.load(Ordering::Acquire),
            });
        }
        let extra = s.extra.load(Ordering::Relaxed);
        if extra != 0 {
            return Err(ChannelError::Check(format!(
                "the timer reported {extra} more expirations than it was armed for"
            )));
        }
        self.last = s.latency.load(Ordering::Relaxed);
        Ok(())
    }

    fn event_ns(&self) -> Option<u64> {
        Some(self.last)
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Under SCHED_FIFO the handler blocks on the timer once per event.
        if !self.fifo {
            return Ok(None);
        }
        Ok(Some(Counter {
            source: crate::benchmarks::sched::SWITCH_SOURCE,
            value: self.helpers.switches(0)?,
            per_op: 1,
        }))
    }

    fn baseline(&mut self) -> Option<&mut dyn Op> {
        Some(&mut self.baseline)
    }
}

/// A deadline found by polling the clock: no timer, interrupt or wake-up.
struct PolledDeadline {
    last: u64,
}

impl Op for PolledDeadline {
    fn run(&mut self) -> Result<(), ChannelError> {
        let deadline = monotonic_ns() + BASE_AHEAD_NS;
        let mut t = monotonic_ns();
        while t < deadline {
            t = monotonic_ns();
        }
        self.last = t - deadline;
        Ok(())
    }

    fn event_ns(&self) -> Option<u64> {
        Some(self.last)
    }
}
