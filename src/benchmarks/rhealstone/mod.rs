//! The `rhealstone` group: Rhealstone's six real-time metrics (Kar and
//! Porter, 1989) as the RTEMS test suite implements them, on Linux threads
//! of one process pinned to one CPU under SCHED_FIFO at explicit priorities.
//!
//! - `rhealstone-task-switch`: two threads of equal priority yielding to
//!   each other; the baseline is the same yield with the other thread parked.
//! - `rhealstone-preemption`: the measuring thread wakes a higher-priority
//!   thread, which preempts it and blocks again; the baseline is the same
//!   futex calls with no thread to wake.
//! - `rhealstone-interrupt-latency` (mode `event`): a timer's expiry to the
//!   highest-priority thread, blocked on it, running; the baseline is the
//!   deadline found by polling the clock.
//! - `rhealstone-semaphore-shuffle`: two threads of equal priority taking a
//!   semaphore in turn; the baseline is the same loop without the semaphore.
//! - `rhealstone-message-latency`: a message on a POSIX queue to a
//!   higher-priority thread blocked on it; the baseline is the same send and
//!   receive by one thread.
//! - `rhealstone-deadlock-break[-no-pi]` (mode `event`): a high-priority
//!   thread blocked on a mutex a low-priority thread holds while a
//!   medium-priority thread spins; with priority inheritance and without.
//!
//! The engine puts the measuring thread under SCHED_FIFO at the base priority
//! ([`BASE_PRIORITY`], or `--rt`) before `prepare` when it is permitted;
//! helpers run at the base plus 0 to 3. When it is refused every thread runs
//! under SCHED_OTHER and each result says what its figure loses.

pub mod deadlock_break;
pub mod interrupt_latency;
pub mod message_latency;
pub mod preemption;
pub mod semaphore_shuffle;
pub mod task_switch;

use crate::benchmarks::sched::switches_in;
use crate::engine::channel::ChannelError;
use crate::engine::op::RealTime;
use crate::engine::os::interrupt;
use crate::sys::{process, sched, signal};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The group these benchmarks belong to.
pub const GROUP: &str = super::RHEALSTONE;

/// The measuring thread's SCHED_FIFO priority when `--rt` gives none: low
/// enough to stay under the kernel's own threads (50 and up), high enough
/// to stay above ordinary real-time users.
pub const BASE_PRIORITY: i32 = 20;

/// The scheduling every Rhealstone benchmark asks the engine for.
pub(crate) const fn realtime(without_fifo: &'static str) -> RealTime {
    RealTime {
        base_priority: BASE_PRIORITY,
        helpers_above: 3,
        without_fifo,
    }
}

/// How long a helper or the measuring thread waits for the other side
/// before the figure fails (the engine's watchdog also bounds the measuring
/// thread's blocking waits).
pub(crate) const PEER_DEADLINE: Duration = Duration::from_secs(2);

/// The helper threads of one benchmark, stopped and joined on drop: the
/// stop flag is set, then `wake` (which unblocks whatever they wait on) is
/// repeated until every thread has ended.
pub(crate) struct Helpers {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
    tids: Vec<libc::pid_t>,
    wake: Option<Box<dyn Fn() + Send>>,
}

impl Helpers {
    pub(crate) fn new() -> Helpers {
        Helpers {
            stop: Arc::new(AtomicBool::new(false)),
            handles: Vec::new(),
            tids: Vec::new(),
            wake: None,
        }
    }

    /// The flag the helpers watch.
    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// What unblocks the helpers when they must stop.
    pub(crate) fn on_stop(&mut self, wake: impl Fn() + Send + 'static) {
        self.wake = Some(Box::new(wake));
    }

    /// Starts a helper pinned to `cpu`, at SCHED_FIFO `priority` (`None`:
    /// SCHED_OTHER), with the run's signals blocked (they belong to the
    /// measuring thread); returns once it is placed, before `body` runs.
    pub(crate) fn spawn(
        &mut self,
        name: &str,
        cpu: usize,
        priority: Option<i32>,
        body: impl FnOnce() + Send + 'static,
    ) -> Result<(), ChannelError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(format!("ipcmark-{name}"))
            .spawn(move || {
                let placed = signal::block(&interrupt::signals_for_measuring_thread())
                    .and_then(|_| sched::pin_to_cpu(cpu))
                    .and_then(|_| match priority {
                        Some(p) => sched::set_fifo(p),
                        // Threads inherit the creator's policy: a helper
                        // meant for SCHED_OTHER must leave FIFO explicitly.
                        None => sched::set_normal(),
                    })
                    .map(|_| process::gettid());
                let ok = placed.is_ok();
                let _ = tx.send(placed.map_err(|e| e.to_string()));
                if ok {
                    body();
                }
            })
            .map_err(ChannelError::io("start a helper thread"))?;
        self.handles.push(handle);
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(tid)) => {
                self.tids.push(tid);
                Ok(())
            }
            Ok(Err(e)) => Err(ChannelError::Setup(format!(
                "place the {name} thread on CPU {cpu}{}: {e}",
                priority.map_or(String::new(), |p| format!(" at SCHED_FIFO {p}"))
            ))),
            Err(_) => Err(ChannelError::Setup(format!(
                "the {name} thread never started"
            ))),
        }
    }

    /// Context switches of the helper started `i`-th.
    pub(crate) fn switches(&self, i: usize) -> Result<u64, ChannelError> {
        switches_in(&format!("/proc/self/task/{}/status", self.tids[i]))
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // A helper may check the flag just before blocking: wake it again
        // until it has seen the flag, for a bounded time.
        let give_up = Instant::now() + Duration::from_secs(10);
        for h in self.handles.drain(..) {
            while !h.is_finished() && Instant::now() < give_up {
                if let Some(w) = &self.wake {
                    w();
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

/// Waits on `sem` in slices until it is posted (`true`) or `stop` is set
/// (`false`): a helper's wait, which has no watchdog of its own.
pub(crate) fn wait_or_stop(sem: &crate::sys::sync::Semaphore, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        match sem.wait_for(Duration::from_millis(20)) {
            Ok(true) => return true,
            Ok(false) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Waits, yielding the CPU, until `done()` holds: the measuring thread's
/// wait for a higher-priority helper, which under SCHED_FIFO has always
/// finished already (no call at all), and under SCHED_OTHER needs the CPU.
/// Fails after [`PEER_DEADLINE`] or on a stop request.
#[inline]
pub(crate) fn until(
    what: &'static str,
    mut done: impl FnMut() -> bool,
) -> Result<(), ChannelError> {
    if done() {
        return Ok(());
    }
    let give_up = Instant::now() + PEER_DEADLINE;
    while !done() {
        interrupt::check()?;
        if Instant::now() > give_up {
            return Err(ChannelError::Check(format!(
                "the {what} did not answer within {} s",
                PEER_DEADLINE.as_secs()
            )));
        }
        let _ = sched::yield_cpu();
    }
    Ok(())
}
