//! A deadline on rank 0's waits for its peers in `ipcmark mpi`. MPI's
//! blocking calls take none, and ipcmark's figures use them as `osu_latency`
//! does (a receive that polled for a deadline would time something else),
//! so a peer that stops answering but stays alive would hold rank 0 for
//! ever. A thread of its own watches instead: while a figure is under way
//! ([`arm`]), rank 0 beats once per round trip or window ([`beat`]); when no
//! beat comes for the `--timeout`, or a stop was asked for (Ctrl-C,
//! SIGTERM) and no beat came for [`STOP_GRACE`], the thread says why on one
//! line and ends the process (`_exit`), and the launcher then ends the job.
//!
//! The thread makes no MPI call (MPI is initialised at
//! `MPI_THREAD_SINGLE`), touches nothing the main thread holds, and a beat
//! is one plain store: nothing is added to the timed loop but that store.

use crate::engine::os::interrupt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Beats so far (only rank 0's main thread writes it).
static BEATS: AtomicU64 = AtomicU64::new(0);
/// Whether a figure is under way.
static ARMED: AtomicBool = AtomicBool::new(false);
/// What rank 0 waits on while armed ("rank 1", "ranks 1, 3"): the line's.
static WAITING_ON: Mutex<String> = Mutex::new(String::new());
/// While armed for another rank's turn of `fleet run` ([`arm_turn`]): the
/// whole line a stop prints.
static TURN_LINE: Mutex<Option<String>> = Mutex::new(None);

/// How long a stop request waits for the main thread to act on it itself,
/// between MPI calls, before the watch ends the process.
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// Marks progress: a round trip or a window completed. On the ranks
/// without a watch, and between figures, it does nothing anyone reads.
#[inline]
pub fn beat() {
    // A load and a store, not an atomic add: one writer, and no locked
    // instruction in the timed loop.
    BEATS.store(
        BEATS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// A figure under way, waiting on `peers`; the watch is disarmed when the
/// guard drops.
pub struct Armed(());

/// Arms the watch for a figure that waits on `peers` (e.g. "rank 1").
pub fn arm(peers: &str) -> Armed {
    if let Ok(mut w) = WAITING_ON.lock() {
        w.clear();
        w.push_str(peers);
    }
    set_turn_line(None);
    beat();
    ARMED.store(true, Ordering::SeqCst);
    Armed(())
}

/// Arms the watch for a wait on another rank's whole turn (`fleet run`):
/// no beat comes while that rank measures, so the `--timeout` does not
/// apply; a stop (mpirun's SIGTERM once a rank died) prints `line` at once
/// — the main thread, blocked in the wait, cannot act on it — and ends the
/// process (128 + the signal).
pub fn arm_turn(line: String) -> Armed {
    set_turn_line(Some(line));
    ARMED.store(true, Ordering::SeqCst);
    Armed(())
}

fn set_turn_line(line: Option<String>) {
    if let Ok(mut l) = TURN_LINE.lock() {
        *l = line;
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        ARMED.store(false, Ordering::SeqCst);
        set_turn_line(None);
    }
}

/// Why the watch ends the process, if it must: `silent` is how long no
/// beat came while armed, `stop` the stop signal asked for, if any.
fn verdict(silent: Duration, limit: Duration, stop: Option<i32>) -> Option<(String, i32)> {
    if let Some(signo) = stop
        && silent >= STOP_GRACE
    {
        return Some((
            format!(
                "stopped by {} while waiting in MPI",
                interrupt::signal_name(signo)
            ),
            128 + signo,
        ));
    }
    (silent >= limit).then(|| {
        (
            format!(
                "no progress for {} s while waiting in MPI (--timeout)",
                limit.as_secs_f64()
            ),
            1,
        )
    })
}

/// Starts the watch on rank 0: a figure that makes no progress for `limit`
/// ends the job.
pub fn watch(limit: Duration) -> std::io::Result<()> {
    let tick = (limit / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    std::thread::Builder::new()
        .name("mpi-deadline".into())
        .spawn(move || {
            let (mut seen, mut since) = (BEATS.load(Ordering::Relaxed), Instant::now());
            loop {
                std::thread::sleep(tick);
                if ARMED.load(Ordering::SeqCst)
                    && let Some(signo) = interrupt::stop_requested()
                    && let Some(line) = TURN_LINE.lock().ok().and_then(|l| l.clone())
                {
                    let line = format!("{line}\n");
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                    crate::sys::process::exit_now(128 + signo);
                }
                let now = BEATS.load(Ordering::Relaxed);
                if TURN_LINE.lock().is_ok_and(|l| l.is_some()) {
                    // A turn's wait has no beats and no deadline.
                    (seen, since) = (now, Instant::now());
                    continue;
                }
                if now != seen || !ARMED.load(Ordering::SeqCst) {
                    (seen, since) = (now, Instant::now());
                    continue;
                }
                if let Some((why, code)) =
                    verdict(since.elapsed(), limit, interrupt::stop_requested())
                {
                    let peers = WAITING_ON.lock().map(|w| w.clone()).unwrap_or_default();
                    // One write, so the launcher's own lines cannot land inside it.
                    let line = format!("ipcmark: rank 0: {why} for {peers}: ending the MPI job\n");
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                    crate::sys::process::exit_now(code);
                }
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_or_an_unheeded_stop_ends_the_wait_and_nothing_sooner() {
        let s = Duration::from_secs;
        assert_eq!(verdict(s(4), s(5), None), None);
        let (why, code) = verdict(s(5), s(5), None).unwrap();
        assert!(
            why.contains("no progress for 5 s") && why.contains("--timeout"),
            "{why}"
        );
        assert_eq!(code, 1);
        // A stop the main thread may still act on itself.
        assert_eq!(verdict(Duration::from_millis(500), s(5), Some(2)), None);
        let (why, code) = verdict(s(1), s(5), Some(libc::SIGTERM)).unwrap();
        assert!(why.contains("SIGTERM"), "{why}");
        assert_eq!(code, 128 + libc::SIGTERM);
    }
}
