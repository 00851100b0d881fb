//! `rhealstone-deadlock-break` and `rhealstone-deadlock-break-no-pi` (mode
//! `event`): Rhealstone's deadlock break time, with a medium-priority thread
//! to show what priority inheritance prevents. Three helpers on the
//! measuring thread's CPU, above it: low (base + 1), medium (+ 2), high (+ 3).
//! Each round the measuring thread wakes low, which locks the mutex and
//! wakes high; high preempts it, wakes medium, reads the clock and asks for
//! the mutex, and blocks. Then:
//!
//! - with `PTHREAD_PRIO_INHERIT`, low runs at high's priority, above medium,
//!   releases the mutex, and high gets it before medium runs;
//! - without it, medium (above low) runs first and spins [`SPIN_NS`]; only
//!   then does low release the mutex: the inversion.
//!
//! The figure is high's wait, from its request to its acquisition (its own
//! clock readings), less the baseline: the same round with low not holding
//! the mutex (high takes it free). Each round records whether medium
//! finished its spin before high got the mutex; the result reports the
//! count (`observations`), which says whether the inversion happened, not
//! only how long high waited. RTEMS measures the inheriting case; the
//! run without inheritance is there to show the inversion it breaks.
//!
//! Medium spins at most [`SPIN_NS`] per round, by the clock, so that no
//! thread here spins long under SCHED_FIFO.

use super::{GROUP, Helpers, PEER_DEADLINE, realtime, wait_or_stop};
use crate::benchmarks::sched::{SWITCH_SOURCE, shared_cpu};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::op::{
    Counter, Events, Findings, Op, OpContext, OpInfo, Operation, Prepared, RealTime,
};
use crate::sys::clock::monotonic_ns;
use crate::sys::sync::{PthreadMutex, Semaphore};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How long medium spins each round (ns).
pub const SPIN_NS: u64 = 50_000;

/// A high-priority thread blocked on a mutex a low-priority thread holds,
/// with a medium-priority thread ready to run.
pub struct DeadlockBreak {
    /// `PTHREAD_PRIO_INHERIT` (true) or `PTHREAD_PRIO_NONE`.
    pub inherit: bool,
}

impl DeadlockBreak {
    /// With priority inheritance: Rhealstone's figure.
    pub const PI: DeadlockBreak = DeadlockBreak { inherit: true };
    /// Without: the inversion shows.
    pub const NO_PI: DeadlockBreak = DeadlockBreak { inherit: false };
}

struct Shared {
    mutex: PthreadMutex,
    go_low: Semaphore,
    go_high: Semaphore,
    go_medium: Semaphore,
    /// Posted once by each helper at the end of its part of a round.
    done: Semaphore,
    /// Whether low holds the mutex when high asks (false: the baseline).
    contended: AtomicBool,
    /// Ticket dispenser ordering the two events of a round.
    order: AtomicU64,
    /// Ticket high drew when it got the mutex.
    high_got: AtomicU64,
    /// Ticket medium drew when it finished its spin.
    medium_done: AtomicU64,
    /// High's wait for the mutex in the last round (ns).
    wait: AtomicU64,
    /// A helper's call failed (its first error is reported).
    failed: AtomicBool,
}

impl Operation for DeadlockBreak {
    fn info(&self) -> OpInfo {
        if self.inherit {
            OpInfo {
                id: "rhealstone-deadlock-break",
                summary: "high-priority wait for a PTHREAD_PRIO_INHERIT mutex held by a low-priority thread while a medium one spins (free mutex subtracted)",
                group: GROUP,
                bytes: 0,
                enters: &[],
                avoids: &[],
            }
        } else {
            OpInfo {
                id: "rhealstone-deadlock-break-no-pi",
                summary: "the same without priority inheritance: the medium thread's spin inverts the priorities",
                group: GROUP,
                bytes: 0,
                enters: &[],
                avoids: &[],
            }
        }
    }

    fn events(&self) -> Option<Events> {
        Some(Events {
            name: "blocked lock request",
            per_op: 1,
        })
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "priorities do not order the three threads: neither the inversion nor its prevention can show",
        ))
    }

    fn self_timed(&self) -> bool {
        true
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let sem = || Semaphore::new(0).map_err(ChannelError::io("sem_init"));
        let shared = Arc::new(Shared {
            mutex: PthreadMutex::new(self.inherit)
                .map_err(ChannelError::io("pthread_mutex_init"))?,
            go_low: sem()?,
            go_high: sem()?,
            go_medium: sem()?,
            done: sem()?,
            contended: AtomicBool::new(true),
            order: AtomicU64::new(1),
            high_got: AtomicU64::new(0),
            medium_done: AtomicU64::new(0),
            wait: AtomicU64::new(0),
            failed: AtomicBool::new(false),
        });
        let prio = |k: i32| ctx.rt_priority.map(|p| p + k);
        let mut helpers = Helpers::new();

        // Started highest first: each is blocked on its semaphore before
        // anything can wake it.
        let (s, stop) = (shared.clone(), helpers.stop_flag());
        helpers.spawn("dl-high", cpu, prio(3), move || {
            while wait_or_stop(&s.go_high, &stop) {
                let _ = s.go_medium.post();
                let t0 = monotonic_ns();
                if s.mutex.lock_for(PEER_DEADLINE).is_err() {
                    s.failed.store(true, Ordering::Release);
                } else {
                    let t1 = monotonic_ns();
                    s.high_got
                        .store(s.order.fetch_add(1, Ordering::AcqRel), Ordering::Release);
                    s.wait.store(t1 - t0, Ordering::Release);
                    if s.mutex.unlock().is_err() {
                        s.failed.store(true, Ordering::Release);
                    }
                }
                let _ = s.done.post();
            }
        })?;
        let (s, stop) = (shared.clone(), helpers.stop_flag());
        helpers.spawn("dl-medium", cpu, prio(2), move || {
            while wait_or_stop(&s.go_medium, &stop) {
                let until = monotonic_ns() + SPIN_NS;
                while monotonic_ns() < until {
                    std::hint::spin_loop();
                }
                s.medium_done
                    .store(s.order.fetch_add(1, Ordering::AcqRel), Ordering::Release);
                let _ = s.done.post();
            }
        })?;
        let (s, stop) = (shared.clone(), helpers.stop_flag());
        helpers.spawn("dl-low", cpu, prio(1), move || {
            while wait_or_stop(&s.go_low, &stop) {
                if s.contended.load(Ordering::Acquire) {
                    if s.mutex.lock_for(PEER_DEADLINE).is_err() {
                        s.failed.store(true, Ordering::Release);
                        let _ = s.go_high.post();
                    } else {
                        // High preempts here, asks for the mutex and blocks.
                        let _ = s.go_high.post();
                        if s.mutex.unlock().is_err() {
                            s.failed.store(true, Ordering::Release);
                        }
                    }
                } else {
                    let _ = s.go_high.post();
                }
                let _ = s.done.post();
            }
        })?;

        Ok(Prepared {
            op: Box::new(RoundOp {
                shared: shared.clone(),
                contended: true,
                rounds: 0,
                inverted: 0,
                inherit: self.inherit,
                baseline: RoundOp::free(shared),
                fifo: ctx.rt_priority.is_some(),
                helpers,
            }),
            note: Some(format!(
                "{} mutex; low, medium, high on CPU {cpu}{}",
                if self.inherit {
                    "PTHREAD_PRIO_INHERIT"
                } else {
                    "PTHREAD_PRIO_NONE"
                },
                ctx.rt_priority.map_or(String::new(), |p| format!(
                    " at SCHED_FIFO {}, {}, {}",
                    p + 1,
                    p + 2,
                    p + 3
                ))
            )),
        })
    }
}

/// One round; `contended` false: the baseline (the mutex free when high asks).
struct RoundOp {
    shared: Arc<Shared>,
    contended: bool,
    /// Contended rounds run, and those in which medium finished first.
    rounds: u64,
    inverted: u64,
    inherit: bool,
    baseline: Option<Box<RoundOp>>,
    fifo: bool,
    helpers: Helpers,
}

impl RoundOp {
    fn free(shared: Arc<Shared>) -> Option<Box<RoundOp>> {
        Some(Box::new(RoundOp {
            shared,
            contended: false,
            rounds: 0,
            inverted: 0,
            inherit: false,
            baseline: None,
            fifo: false,
            helpers: Helpers::new(),
        }))
    }
}

impl Op for RoundOp {
    fn run(&mut self) -> Result<(), ChannelError> {
        let s = &*self.shared;
        if s.contended.load(Ordering::Relaxed) != self.contended {
            s.contended.store(self.contended, Ordering::Release);
        }
        s.go_low.post().map_err(ChannelError::io("sem_post"))?;
        // Under SCHED_FIFO all three have finished before this thread (the
        // lowest) runs again; under SCHED_OTHER these waits are real. The
        // engine's watchdog ends them if a helper is stuck.
        for _ in 0..3 {
            retry("sem_wait", || s.done.wait())?;
        }
        if s.failed.load(Ordering::Acquire) {
            return Err(ChannelError::Check(format!(
                "a helper's lock or unlock failed or waited more than {} s",
                PEER_DEADLINE.as_secs()
            )));
        }
        if self.contended {
            self.rounds += 1;
            if s.medium_done.load(Ordering::Acquire) < s.high_got.load(Ordering::Acquire) {
                self.inverted += 1;
            }
        }
        Ok(())
    }

    fn event_ns(&self) -> Option<u64> {
        Some(self.shared.wait.load(Ordering::Acquire))
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Under SCHED_FIFO high blocks at least once per round (on its
        // semaphore, and on the mutex when it is held).
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
        self.baseline.as_deref_mut().map(|b| b as &mut dyn Op)
    }

    fn findings(&self) -> Option<Findings> {
        let (n, k) = (self.rounds, self.inverted);
        let observed = n > 0 && k * 2 > n;
        let mut counts = BTreeMap::new();
        counts.insert("rounds", n);
        counts.insert("inverted_rounds", k);
        counts.insert("inversion_observed", u64::from(observed));
        counts.insert("spin_ns", SPIN_NS);
        let what = if self.inherit {
            "with inheritance"
        } else {
            "without inheritance"
        };
        let verdict = if observed {
            "priority inversion observed"
        } else {
            "no priority inversion"
        };
        Some(Findings {
            counts,
            note: format!(
                "{verdict} {what}: the medium thread's {} µs spin ran while high waited in {k} of {n} rounds",
                SPIN_NS / 1000
            ),
        })
    }
}
