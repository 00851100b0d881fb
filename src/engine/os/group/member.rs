//! A member process: what its closure sees ([`Member`]) and its whole life
//! after the fork: die with the parent, place itself, report ready, wait at
//! the start barrier, run the closure once, report how it ended.

use super::migration::{Migration, Moves};
use super::page::{
    DONE, ERR_CAP, FAILED, FAILED_AFTER_PARTNER, MAX_COUNTERS, OFF_GO, OFF_STOP, READY, S_COUNTERS,
    S_CPU_END, S_CPU_START, S_END, S_ERR, S_ERR_LEN, S_PROGRESS, S_START, S_STATE, cpu_word,
    note_cpu, slot_of,
};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::os::interrupt;
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::process;
use crate::sys::sched;
use crate::sys::sync::futex_wait;
use std::sync::atomic::{AtomicU64, Ordering};

/// One member, as its closure sees it (in its own process).
pub struct Member<'a> {
    index: usize,
    page: &'a SharedMapping,
    slot: usize,
    moves: Moves,
}

impl Member<'_> {
    /// Which member this is (0-based).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Whether the parent has raised the stop flag (the run's time is up).
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.page.atomic_u32(OFF_STOP).load(Ordering::Relaxed) != 0
    }

    /// Call before every operation with the number of operations completed so
    /// far: ends the member if the run was interrupted, publishes progress (the
    /// parent's liveness check), and carries out a migration that is due.
    #[inline]
    pub fn before_op(&mut self, done: u64) -> Result<(), ChannelError> {
        interrupt::check()?;
        self.word64(S_PROGRESS).store(done, Ordering::Relaxed);
        if self.moves.due(done) {
            self.moves.migrate(self.page, self.slot, done)?;
        }
        Ok(())
    }

    /// Records the final number of operations.
    pub fn set_ops(&self, ops: u64) {
        self.word64(S_PROGRESS).store(ops, Ordering::Relaxed);
    }

    /// Records counter `i` (< [`MAX_COUNTERS`]).
    pub fn set_counter(&self, i: usize, value: u64) {
        assert!(i < MAX_COUNTERS, "counter {i} out of range");
        self.word64(S_COUNTERS + 8 * i)
            .store(value, Ordering::Relaxed);
    }

    fn word64(&self, off: usize) -> &AtomicU64 {
        self.page.atomic_u64(self.slot + off)
    }
}

/// Everything a member process does; returns its exit code.
pub(super) fn member_main<F>(
    page: &SharedMapping,
    i: usize,
    cpu: Option<usize>,
    migration: Option<Migration>,
    parent: libc::pid_t,
    body: &mut F,
) -> i32
where
    F: FnMut(&mut Member) -> Result<(), ChannelError>,
{
    let _ = process::set_parent_death_signal(libc::SIGKILL);
    if process::getppid() != parent {
        // The parent died before the death signal was armed.
        return 1;
    }
    interrupt::reset_for_figure();
    let slot = slot_of(i);
    let fail_as = |msg: &str, state: u32| {
        let n = msg.len().min(ERR_CAP);
        page.write_bytes(slot + S_ERR, &msg.as_bytes()[..n]);
        page.atomic_u32(slot + S_ERR_LEN)
            .store(n as u32, Ordering::Release);
        page.atomic_u64(slot + S_END)
            .store(monotonic_ns(), Ordering::Relaxed);
        page.atomic_u32(slot + S_STATE)
            .store(state, Ordering::Release);
        1
    };
    let fail = |msg: &str| fail_as(msg, FAILED);
    if let Some(cpu) = cpu
        && let Err(e) = sched::pin_to_cpu(cpu)
    {
        return fail(&format!("pin to CPU {cpu}: {e}"));
    }
    let seen = sched::current_cpu();
    page.atomic_u32(slot + S_CPU_START)
        .store(cpu_word(seen), Ordering::Relaxed);
    note_cpu(page, slot, seen);
    page.atomic_u32(slot + S_STATE)
        .store(READY, Ordering::Release);

    let go = page.atomic_u32(OFF_GO);
    while go.load(Ordering::Acquire) == 0 {
        if let Err(e) = retry("futex wait (start barrier)", || futex_wait(go, 0)) {
            return fail(&e.to_string());
        }
    }
    page.atomic_u64(slot + S_START)
        .store(monotonic_ns(), Ordering::Relaxed);

    let mut member = Member {
        index: i,
        page,
        slot,
        moves: Moves::new(migration, cpu),
    };
    // A panic must not unwind into the caller's code, which belongs to the
    // parent: report it and leave.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut member)));
    let end_cpu = sched::current_cpu();
    page.atomic_u32(slot + S_CPU_END)
        .store(cpu_word(end_cpu), Ordering::Relaxed);
    note_cpu(page, slot, end_cpu);
    match outcome {
        Ok(Ok(())) => {
            page.atomic_u64(slot + S_END)
                .store(monotonic_ns(), Ordering::Relaxed);
            page.atomic_u32(slot + S_STATE)
                .store(DONE, Ordering::Release);
            0
        }
        Ok(Err(e @ (ChannelError::Closed | ChannelError::PeerDied))) => {
            fail_as(&e.to_string(), FAILED_AFTER_PARTNER)
        }
        Ok(Err(e)) => fail(&e.to_string()),
        Err(_) => fail("panicked"),
    }
}
