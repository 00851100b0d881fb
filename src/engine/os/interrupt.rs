//! Stop requests, the watchdog and peer death, seen by every blocking wait.
//!
//! Handlers only set atomics. They are installed without `SA_RESTART`, so a
//! blocked system call returns `EINTR`, the endpoint calls [`check`], and the
//! error unwinds to the engine, which releases everything it created.

use crate::engine::error::ChannelError;
use crate::sys::signal as sig;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);
static WATCHDOG_FIRED: AtomicBool = AtomicBool::new(false);
static PEER_GONE: AtomicBool = AtomicBool::new(false);
static PEER_STOP: AtomicBool = AtomicBool::new(false);

/// The signal the engine sends a server thread to interrupt its blocking wait
/// when it must stop (numbers: [`sig::RtSignal`]).
pub fn wake_signal() -> i32 {
    sig::RtSignal::Wake.number()
}

extern "C" fn on_stop(signo: libc::c_int) {
    STOP_SIGNAL.store(signo, Ordering::SeqCst);
}

extern "C" fn on_alarm(_: libc::c_int) {
    WATCHDOG_FIRED.store(true, Ordering::SeqCst);
}

extern "C" fn on_child(_: libc::c_int) {
    PEER_GONE.store(true, Ordering::SeqCst);
}

extern "C" fn on_wake(_: libc::c_int) {}

/// Installs the stop signals' handlers alone (SIGINT, SIGTERM, SIGHUP):
/// from the start of a run's set-up, so that a stop then is a stop
/// requested, not the process killed with nothing stored. Not SIGCHLD's:
/// the set-up's own commands end, and a peer's wait would take that for
/// its peer's death.
pub fn install_stop() -> std::io::Result<()> {
    for stop in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // A stop signal the caller chose to ignore (nohup, a background job)
        // stays ignored: the run must survive what the user asked it to.
        if !sig::is_ignored(stop)? {
            sig::install_handler(stop, on_stop, 0)?;
        }
    }
    Ok(())
}

/// Installs the handlers. Call once at start, before any peer exists.
pub fn install() -> std::io::Result<()> {
    install_stop()?;
    sig::install_handler(libc::SIGALRM, on_alarm, 0)?;
    sig::install_handler(libc::SIGCHLD, on_child, libc::SA_NOCLDSTOP)?;
    sig::install_handler(wake_signal(), on_wake, 0)?;
    Ok(())
}

/// Signals a server thread blocks, so that they reach the measuring thread.
pub fn signals_for_measuring_thread() -> [i32; 5] {
    [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGALRM,
        libc::SIGCHLD,
    ]
}

/// Clears per-figure state before a figure starts.
pub fn reset_for_figure() {
    WATCHDOG_FIRED.store(false, Ordering::SeqCst);
    PEER_GONE.store(false, Ordering::SeqCst);
    PEER_STOP.store(false, Ordering::SeqCst);
}

/// Records that the server ended on its own (a thread peer returning; a child
/// is reported by SIGCHLD). The measuring thread's next wait ends with
/// [`ChannelError::PeerDied`].
pub fn peer_gone() {
    PEER_GONE.store(true, Ordering::SeqCst);
}

/// Whether the engine asked the server to stop.
pub fn peer_stop_requested() -> bool {
    PEER_STOP.load(Ordering::SeqCst)
}

/// Asks a server thread to stop at its next wake-up.
pub fn request_peer_stop() {
    PEER_STOP.store(true, Ordering::SeqCst);
}

/// The signal that asked the whole run to stop, if any.
pub fn stop_requested() -> Option<i32> {
    match STOP_SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Name of a stop signal, for messages.
pub fn signal_name(signo: i32) -> &'static str {
    match signo {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Whether the current wait must end, and why. Cheap enough for spin loops.
#[inline]
pub fn check() -> Result<(), ChannelError> {
    if let Some(s) = stop_requested() {
        return Err(ChannelError::Interrupted(signal_name(s)));
    }
    if PEER_STOP.load(Ordering::Relaxed) {
        return Err(ChannelError::Stopped);
    }
    if PEER_GONE.load(Ordering::Relaxed) {
        return Err(ChannelError::PeerDied);
    }
    if WATCHDOG_FIRED.load(Ordering::Relaxed) {
        return Err(ChannelError::Timeout);
    }
    Ok(())
}

/// Holds `SIGCHLD` blocked in the calling thread while an operation creates
/// and reaps its own children (mode `op` has no peer): their exits must not
/// read as a dead peer, nor interrupt the operation's own `waitpid`. On drop
/// the pending `SIGCHLD`, if any, is discarded and the mask restored.
pub struct ChildExitsHeld {
    previous: sig::SigSet,
}

impl ChildExitsHeld {
    /// Blocks `SIGCHLD`.
    pub fn hold() -> std::io::Result<ChildExitsHeld> {
        Ok(ChildExitsHeld {
            previous: sig::block(&[libc::SIGCHLD])?,
        })
    }
}

impl Drop for ChildExitsHeld {
    fn drop(&mut self) {
        let set = sig::SigSet::of(&[libc::SIGCHLD]);
        while let Ok(Some(_)) = sig::take_pending(&set) {}
        let _ = sig::thread_mask(libc::SIG_SETMASK, &self.previous);
    }
}

/// A deadline on the whole process: when it passes, `SIGALRM` interrupts
/// whatever wait is in progress. Disarmed on drop.
///
/// After the deadline the alarm repeats every 100 ms: a signal (stop request,
/// dead child, the deadline itself) that lands just *before* a blocking call
/// starts causes no EINTR, and the repeat is what still ends that wait.
pub struct Watchdog(());

/// Period of the alarm once the deadline has passed.
const REPEAT_NS: u64 = 100_000_000;

impl Watchdog {
    /// Arms the deadline `after` from now.
    pub fn arm(after: Duration) -> Watchdog {
        WATCHDOG_FIRED.store(false, Ordering::SeqCst);
        // Cannot fail with a valid timer and value; if it did, the wait would
        // only lose its deadline, not its correctness.
        let _ = sig::set_alarm_ns(after.as_nanos().max(1_000) as u64, REPEAT_NS);
        Watchdog(())
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = sig::set_alarm_ns(0, 0);
    }
}
