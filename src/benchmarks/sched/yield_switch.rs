//! `sched-yield`: the QNX study's Yield switch. A helper thread pinned to the
//! measuring thread's CPU yields in a loop; the operation is one
//! `sched_yield` by the measuring thread, which hands the CPU to the helper,
//! whose own yield hands it back: two switches. The loop without the yield
//! is the engine's null loop, subtracted already.
//!
//! The helper thread exists while the engine's probe forks: it holds no lock
//! (it only yields and reads an atomic), so the probe child, which runs one
//! `sched_yield` and `_exit`s, cannot inherit a lock held by it.

use super::{GROUP, SCHED_YIELD, SWITCH_SOURCE, place_helper, shared_cpu, switches, switches_in};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Counter, Events, Op, OpContext, OpInfo, Operation, Prepared};
use crate::engine::os::interrupt;
use crate::sys::{sched, signal};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// `sched_yield` between two threads on one CPU.
pub struct YieldSwitch;

impl Operation for YieldSwitch {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "sched-yield",
            summary: "sched_yield to a thread on the same CPU that yields back (per switch)",
            group: GROUP,
            bytes: 0,
            enters: &[SCHED_YIELD],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(switches(2))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let rt = ctx.rt_priority;
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("ipcmark-yield".into())
            .spawn(move || {
                // Signals for the run (stop requests, watchdog) stay with the
                // measuring thread; this one only yields.
                let placed = signal::block(&interrupt::signals_for_measuring_thread())
                    .and_then(|_| place_helper(cpu, rt));
                let ok = placed.is_ok();
                let _ = ready_tx.send(
                    placed
                        .map(|_| crate::sys::process::gettid())
                        .map_err(|e| e.to_string()),
                );
                while ok && !flag.load(Ordering::Relaxed) {
                    let _ = sched::yield_cpu();
                }
            })
            .map_err(ChannelError::io("start the yielding thread"))?;
        // Stops and joins the helper on every path from here on.
        let helper = Helper {
            stop,
            handle: Some(handle),
        };
        let helper_tid = match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(tid)) => tid,
            Ok(Err(e)) => {
                return Err(ChannelError::Setup(format!(
                    "place the yielding thread on CPU {cpu}: {e}"
                )));
            }
            Err(_) => {
                return Err(ChannelError::Setup(
                    "the yielding thread never started".into(),
                ));
            }
        };
        Ok(Prepared {
            op: Box::new(YieldOp {
                _helper: helper,
                helper_status: format!("/proc/self/task/{helper_tid}/status"),
            }),
            note: Some(format!("helper thread yielding on CPU {cpu}")),
        })
    }
}

/// The yielding thread: stopped and joined on drop.
struct Helper {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

struct YieldOp {
    _helper: Helper,
    /// Where the kernel counts the helper's switches.
    helper_status: String,
}

impl Op for YieldOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        sched::yield_cpu().map_err(ChannelError::io("sched_yield"))
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Both threads' switches: a yield hands the CPU over and the
        // helper's yield hands it back, two switches. At least one per
        // yield is required, not two: the scheduler may now and then let a
        // yielding thread keep the CPU (EEVDF picks by eligibility; seen
        // once in 45 000 yields), and a yield that never switched at all
        // would leave the helper without the CPU and the count near zero.
        Ok(Some(Counter {
            source: SWITCH_SOURCE,
            value: switches_in("/proc/thread-self/status")? + switches_in(&self.helper_status)?,
            per_op: 1,
        }))
    }
}
