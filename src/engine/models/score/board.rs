//! The counter board: what the threads of a test share with each other and
//! with the reporter (counters, suspension gates, the start barrier, the stop
//! flag), and the calls a thread's loop makes through it.
//!
//! Nothing is timed inside the loops: a thread bumps its own counter (one
//! writer, a plain load and store on its own cache line, no lock), and only
//! the reporter reads counters, between the loops' work.

use crate::sys::{sched, signal as sig, sync};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// How a thread's loop ends.
#[derive(Debug)]
pub enum End {
    /// The engine stopped the test (the normal end).
    Stopped,
    /// The thread found a wrong result or a failed call.
    Failed(String),
}

impl From<String> for End {
    fn from(s: String) -> End {
        End::Failed(s)
    }
}

/// The real-time signal standing in for the software interrupt (numbers:
/// [`sig::RtSignal`]).
pub fn interrupt_signal() -> i32 {
    sig::RtSignal::ScoreInterrupt.number()
}

/// A counter on its own cache line.
#[repr(align(64))]
struct Padded(AtomicU64);

/// A thread's suspension word: 0 none pending, 1 a resume pending, 2 stopping.
#[repr(align(64))]
struct Gate(AtomicU32);

const PENDING: u32 = 1;
const STOPPING: u32 = 2;

/// What the threads of a test share with each other and with the reporter:
/// counters, suspension gates, the stop flag.
pub struct Board {
    stop: AtomicBool,
    counters: Box<[Padded]>,
    gates: Box<[Gate]>,
    start: AtomicU32,
    ready: AtomicU32,
    interrupts: bool,
    failure: Mutex<Option<String>>,
}

impl Board {
    pub(super) fn new(threads: usize, counters: usize, interrupts: bool) -> Board {
        Board {
            stop: AtomicBool::new(false),
            counters: (0..counters).map(|_| Padded(AtomicU64::new(0))).collect(),
            gates: (0..threads).map(|_| Gate(AtomicU32::new(0))).collect(),
            start: AtomicU32::new(0),
            ready: AtomicU32::new(0),
            interrupts,
            failure: Mutex::new(None),
        }
    }

    /// `Err(End::Stopped)` once the period is over: loops call it each turn.
    #[inline]
    pub fn running(&self) -> Result<(), End> {
        if self.stop.load(Ordering::Relaxed) {
            Err(End::Stopped)
        } else {
            Ok(())
        }
    }

    /// Adds one to counter `c`. Each counter has one writer (a thread, or
    /// the interrupt routine on the one thread that raises it): a plain load
    /// and store, no locked instruction.
    #[inline]
    pub fn count(&self, c: usize) {
        let a = &self.counters[c].0;
        a.store(a.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// Suspends thread `me` (the caller) until another thread or the
    /// interrupt routine resumes it (`tm_thread_suspend`): a futex wait.
    #[inline]
    pub fn suspend(&self, me: usize) -> Result<(), End> {
        let g = &self.gates[me].0;
        loop {
            match g.compare_exchange(PENDING, 0, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(STOPPING) => return Err(End::Stopped),
                Err(_) => {}
            }
            match sync::futex_wait_private(g, 0) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(End::Failed(format!("futex wait: {e}"))),
            }
        }
    }

    /// Resumes thread `t` (`tm_thread_resume`): marks a resume pending and
    /// wakes it; under SCHED_FIFO a more urgent thread runs at once.
    /// Async-signal-safe: the interrupt routine may call it.
    #[inline]
    pub fn resume(&self, t: usize) -> Result<(), End> {
        let g = &self.gates[t].0;
        if g.compare_exchange(0, PENDING, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            sync::futex_wake_private(g, 1).map_err(|e| End::Failed(format!("futex wake: {e}")))?;
        }
        Ok(())
    }

    /// Gives the CPU to the next ready thread of the same priority
    /// (`tm_thread_relinquish`): `sched_yield`.
    #[inline]
    pub fn relinquish(&self) -> Result<(), End> {
        sched::yield_cpu().map_err(|e| End::Failed(format!("sched_yield: {e}")))
    }

    /// Raises the software interrupt on the calling thread
    /// (`TM_CAUSE_INTERRUPT`): the routine has run when this returns.
    #[inline]
    pub fn interrupt(&self) -> Result<(), End> {
        if !self.interrupts {
            return Err(End::Failed("interrupt raised without a routine".into()));
        }
        sig::raise_here(interrupt_signal()).map_err(|e| End::Failed(format!("pthread_kill: {e}")))
    }

    /// Records the first failure and ends the test.
    pub(super) fn fail(&self, why: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(why);
        drop(f);
        self.stop_all();
    }

    pub(super) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the test has been ended (the period is over or a thread failed).
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Ends the test: every loop sees the flag, every suspended thread wakes.
    pub(super) fn stop_all(&self) {
        self.stop.store(true, Ordering::SeqCst);
        for g in self.gates.iter() {
            g.0.store(STOPPING, Ordering::SeqCst);
            let _ = sync::futex_wake_private(&g.0, i32::MAX);
        }
        self.start.store(1, Ordering::SeqCst);
        let _ = sync::futex_wake_private(&self.start, i32::MAX);
    }

    /// A thread has finished its set-up (placed and masked, or failed to be).
    pub(super) fn mark_ready(&self) {
        self.ready.fetch_add(1, Ordering::SeqCst);
    }

    /// Threads that have finished their set-up.
    pub(super) fn ready_threads(&self) -> u32 {
        self.ready.load(Ordering::SeqCst)
    }

    /// Opens the start barrier: every waiting thread begins.
    pub(super) fn open_start(&self) {
        self.start.store(1, Ordering::SeqCst);
        let _ = sync::futex_wake_private(&self.start, i32::MAX);
    }

    /// Waits at the start barrier (opened by the reporter, or by a stop).
    pub(super) fn wait_start(&self) {
        while self.start.load(Ordering::SeqCst) == 0 {
            let _ = sync::futex_wait_private(&self.start, 0);
        }
    }

    /// Copies every counter into `into` (in declaration order).
    pub(super) fn read(&self, into: &mut [u64]) {
        for (v, c) in into.iter_mut().zip(self.counters.iter()) {
            *v = c.0.load(Ordering::Relaxed);
        }
    }
}
