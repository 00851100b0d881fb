//! What waking a blocked process on another CPU costs on this machine, for
//! a run that could not (or was told not to) keep the CPUs out of deep idle
//! states, so that its warning can say what that costs here.
//!
//! Two threads pinned to two CPUs pass one byte back and forth through two
//! pipes, in two ways that alternate by blocks of round trips: both sides
//! *block* between messages (each round trip wakes the peer and then the
//! caller, and an idle CPU is woken from whatever idle state it entered), or
//! both *busy-wait* (no one sleeps, no CPU idles). A wake-up costs half the
//! difference of the two medians. Comparing back-to-back blocking round trips
//! with paused ones would miss it where the CPU halts even between
//! back-to-back messages (a KVM guest whose idle driver halts at once: there
//! both pay the deep wake-up and their difference is small).
//!
//! Every wait has a deadline ([`DEADLINE`] for the whole probe), the pipes
//! belong to the calling scope so no write can meet a closed pipe (no
//! SIGPIPE), and both threads are joined before it returns: no fork ever
//! sees them.

use crate::sys::fd::{set_nonblocking, wait_readable};
use std::io::{ErrorKind, PipeReader, PipeWriter, Read, Write};
use std::time::{Duration, Instant};

/// The longest the whole probe may take; it takes a few ms to a few tens of
/// ms unless the machine is starved.
pub const DEADLINE: Duration = Duration::from_secs(1);
/// Round trips timed in each way.
const ROUND_TRIPS: usize = 200;
/// Round trips in a row in one way; the ways alternate by block, so that a
/// change in the machine's load touches both.
const BLOCK: usize = 20;
/// Untimed round trips before the first block.
const WARMUP: usize = 20;

/// The message bytes: echo, then block (or busy-wait) for the next message;
/// or end.
const BLOCK_NEXT: u8 = b'b';
const SPIN_NEXT: u8 = b's';
const QUIT: u8 = b'q';

/// A measured cross-CPU wake-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WakeupCost {
    /// The caller's CPU and the peer's.
    pub cpus: [usize; 2],
    /// Round trips timed in each way.
    pub round_trips: usize,
    /// Median round trip when both sides block between messages, ns.
    pub blocking_round_trip_ns: f64,
    /// Median round trip when both sides busy-wait, ns.
    pub busy_round_trip_ns: f64,
    /// How many times the two CPUs entered an idle state deeper than
    /// polling during the probe, by the kernel's cpuidle counters; None
    /// when they cannot be read. 0 means the CPUs were kept out of those
    /// states all along (another process holding a latency limit).
    pub deep_idle_entries: Option<u64>,
}

impl WakeupCost {
    /// What one wake-up costs, ns: half the difference of the medians (a
    /// blocking round trip wakes two sides), 0 if noise made it negative.
    pub fn wakeup_ns(&self) -> f64 {
        ((self.blocking_round_trip_ns - self.busy_round_trip_ns) / 2.0).max(0.0)
    }
}

/// Measures a wake-up between `cpus[0]` and `cpus[1]`, or says why it could not.
pub fn measure(cpus: [usize; 2]) -> Result<WakeupCost, String> {
    if cpus[0] == cpus[1] {
        return Err("the two sides would share one CPU".into());
    }
    let deadline = Instant::now() + DEADLINE;
    let pipe = || -> Result<(PipeReader, PipeWriter), String> {
        let (r, w) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
        // Neither side ever blocks in read or write: waits are polls with
        // a deadline, or busy-waits that look at the clock.
        set_nonblocking(&r, true).map_err(|e| format!("fcntl: {e}"))?;
        set_nonblocking(&w, true).map_err(|e| format!("fcntl: {e}"))?;
        Ok((r, w))
    };
    let (to_peer_r, to_peer_w) = pipe()?;
    let (to_caller_r, to_caller_w) = pipe()?;
    let entries_before = deep_idle_entries(cpus);
    std::thread::scope(|s| {
        let peer = std::thread::Builder::new()
            .name("ipcmark-wakeup".into())
            .spawn_scoped(s, || serve(&to_peer_r, &to_caller_w, cpus[1], deadline))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        let timed = std::thread::Builder::new()
            .name("ipcmark-wakeup".into())
            .spawn_scoped(s, || {
                let timed = time(&to_caller_r, &to_peer_w, cpus[0], deadline);
                // Ends the peer on every path; the pipe holds at most a
                // few bytes, so this write cannot find it full.
                let _ = (&to_peer_w).write(&[QUIT]);
                timed
            });
        let timed = match timed {
            Ok(t) => t
                .join()
                .map_err(|_| "the timing thread panicked".to_string())?,
            Err(e) => {
                let _ = (&to_peer_w).write(&[QUIT]);
                Err(format!("cannot start a thread: {e}"))
            }
        };
        let served = peer
            .join()
            .map_err(|_| "the peer thread panicked".to_string())?;
        // A peer that failed explains the caller's time-out.
        served?;
        let (blocking, busy) = timed?;
        Ok(WakeupCost {
            cpus,
            round_trips: ROUND_TRIPS,
            blocking_round_trip_ns: crate::stats::median(&blocking),
            busy_round_trip_ns: crate::stats::median(&busy),
            deep_idle_entries: entries_before
                .zip(deep_idle_entries(cpus))
                .map(|(before, after)| after.saturating_sub(before)),
        })
    })
}

/// Entries so far of `cpus` into idle states other than polling (which a
/// latency limit of 0 leaves them), from sysfs, which anyone may read; None
/// without cpuidle.
fn deep_idle_entries(cpus: [usize; 2]) -> Option<u64> {
    let read = |path: String| std::fs::read_to_string(path).ok();
    let mut total = 0;
    for cpu in cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
        let mut states = 0;
        while let Some(name) = read(format!("{dir}/state{states}/name")) {
            if name.trim() != "POLL" {
                total += read(format!("{dir}/state{states}/usage"))?
                    .trim()
                    .parse::<u64>()
                    .ok()?;
            }
            states += 1;
        }
        if states == 0 {
            return None;
        }
    }
    Some(total)
}

/// The peer: echoes every byte, then waits for the next as the byte says.
fn serve(rx: &PipeReader, tx: &PipeWriter, cpu: usize, deadline: Instant) -> Result<(), String> {
    crate::sys::sched::pin_to_cpu(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    let mut spin = false;
    loop {
        let b = receive(rx, spin, deadline)?;
        if b == QUIT {
            return Ok(());
        }
        spin = b == SPIN_NEXT;
        send(tx, b)?;
    }
}

/// The timing side: round trips in blocks of each way; the blocking and the
/// busy-waiting round trips, ns.
fn time(
    rx: &PipeReader,
    tx: &PipeWriter,
    cpu: usize,
    deadline: Instant,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    crate::sys::sched::pin_to_cpu(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    let round_trip = |spin: bool| -> Result<f64, String> {
        let start = Instant::now();
        send(tx, if spin { SPIN_NEXT } else { BLOCK_NEXT })?;
        receive(rx, spin, deadline)?;
        Ok(start.elapsed().as_nanos() as f64)
    };
    for _ in 0..WARMUP {
        round_trip(false)?;
    }
    let mut blocking = Vec::with_capacity(ROUND_TRIPS);
    let mut busy = Vec::with_capacity(ROUND_TRIPS);
    for _ in 0..ROUND_TRIPS / BLOCK {
        for (spin, out) in [(false, &mut blocking), (true, &mut busy)] {
            // The first round trip of a block finds the peer waiting the
            // other way: untimed.
            round_trip(spin)?;
            for _ in 0..BLOCK {
                out.push(round_trip(spin)?);
            }
        }
    }
    Ok((blocking, busy))
}

fn send(tx: &PipeWriter, b: u8) -> Result<(), String> {
    match (&*tx).write(&[b]) {
        Ok(1) => Ok(()),
        Ok(_) => Err("write: nothing written".into()),
        Err(e) => Err(format!("write: {e}")),
    }
}

/// The next byte, waiting by polling (`spin` false) or busy-waiting, until
/// `deadline`.
fn receive(rx: &PipeReader, spin: bool, deadline: Instant) -> Result<u8, String> {
    let late = || format!("no answer within {DEADLINE:?}: the machine is too busy");
    let mut b = [0u8];
    let mut turns = 0u32;
    loop {
        match (&*rx).read(&mut b) {
            Ok(1) => return Ok(b[0]),
            Ok(_) => return Err("the other side closed its pipe".into()),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
        if spin {
            turns = turns.wrapping_add(1);
            if turns.is_multiple_of(1024) && Instant::now() >= deadline {
                return Err(late());
            }
            std::hint::spin_loop();
        } else {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(late());
            }
            match wait_readable(rx, left) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("poll: {e}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_is_measured_between_two_cpus_and_refused_on_one() {
        let cpus = crate::sys::sched::allowed_cpus().unwrap();
        assert!(measure([cpus[0], cpus[0]]).is_err());
        if cpus.len() < 2 {
            eprintln!("SKIPPED: one allowed CPU, no cross-CPU wake-up to measure");
            return;
        }
        let w = measure([cpus[0], cpus[1]]).unwrap();
        assert_eq!(w.cpus, [cpus[0], cpus[1]]);
        assert_eq!(w.round_trips, ROUND_TRIPS);
        assert!(
            w.blocking_round_trip_ns > 0.0 && w.busy_round_trip_ns > 0.0,
            "{w:?}"
        );
        assert!(w.wakeup_ns() >= 0.0 && w.wakeup_ns().is_finite(), "{w:?}");
        // Counted where the kernel has cpuidle.
        assert_eq!(
            w.deep_idle_entries.is_some(),
            deep_idle_entries([cpus[0], cpus[1]]).is_some()
        );
    }

    #[test]
    fn a_wake_up_is_half_the_difference_and_never_negative() {
        let w = |blocking, busy| WakeupCost {
            cpus: [0, 1],
            round_trips: 1,
            blocking_round_trip_ns: blocking,
            busy_round_trip_ns: busy,
            deep_idle_entries: None,
        };
        assert_eq!(w(12_000.0, 2_000.0).wakeup_ns(), 5_000.0);
        assert_eq!(w(1_000.0, 2_000.0).wakeup_ns(), 0.0);
    }
}
