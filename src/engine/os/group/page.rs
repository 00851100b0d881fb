//! The results page: one anonymous `MAP_SHARED` mapping (nothing to leak,
//! whatever kills the run) holding the start barrier, the stop flag and one
//! slot per member, into which the member writes its state, CPUs, progress,
//! counters and error, and from which the parent reads them.

use crate::sys::mem::SharedMapping;
use std::sync::atomic::Ordering;

/// Counters each member can report (see [`Member::set_counter`](super::Member::set_counter)).
pub const MAX_COUNTERS: usize = 8;

/// Words of the set of CPUs a member was seen on: 16 × 64 = 1024 CPUs, the
/// size of the kernel's default `cpu_set_t`.
pub(super) const CPU_WORDS: usize = 16;

// Layout of the shared page. The header words and every member's slot start on
// their own cache lines, so that a member publishing its progress never
// disturbs another's.
pub(super) const OFF_GO: usize = 0;
pub(super) const OFF_STOP: usize = 64;
pub(super) const HEADER: usize = 128;
pub(super) const SLOT: usize = 512;
pub(super) const S_STATE: usize = 0;
pub(super) const S_CPU_START: usize = 4;
pub(super) const S_CPU_END: usize = 8;
pub(super) const S_ERR_LEN: usize = 12;
pub(super) const S_PROGRESS: usize = 16;
pub(super) const S_START: usize = 24;
pub(super) const S_END: usize = 32;
pub(super) const S_MIGRATIONS: usize = 40;
pub(super) const S_MISSES: usize = 48;
pub(super) const S_COUNTERS: usize = 64;
pub(super) const S_CPUS: usize = S_COUNTERS + 8 * MAX_COUNTERS;
pub(super) const S_ERR: usize = S_CPUS + 8 * CPU_WORDS;
pub(super) const ERR_CAP: usize = SLOT - S_ERR;
// The layout is checked when compiling: room for an error message, aligned
// 64-bit words, and the header's words inside the header.
const _: () = assert!(ERR_CAP >= 64 && S_COUNTERS.is_multiple_of(8) && S_CPUS.is_multiple_of(8));
const _: () = assert!(OFF_STOP + 4 <= HEADER);

// A zeroed slot (state 0) is a member still starting.
pub(super) const READY: u32 = 1;
pub(super) const DONE: u32 = 2;
pub(super) const FAILED: u32 = 3;
/// Failed only because a partner went away (end of file, broken pipe, removed
/// object): a consequence, reported only if no member failed for a cause.
pub(super) const FAILED_AFTER_PARTNER: u32 = 4;

pub(super) fn is_failed(state: u32) -> bool {
    state == FAILED || state == FAILED_AFTER_PARTNER
}

/// "No CPU known" in a CPU word.
const NO_CPU: u32 = u32::MAX;

/// Offset of member `i`'s slot.
pub(super) fn slot_of(i: usize) -> usize {
    HEADER + i * SLOT
}

/// Adds `cpu` to the set of CPUs the member of `slot` was seen on.
pub(super) fn note_cpu(page: &SharedMapping, slot: usize, cpu: Option<usize>) {
    if let Some(c) = cpu.filter(|&c| c < 64 * CPU_WORDS) {
        page.atomic_u64(slot + S_CPUS + 8 * (c / 64))
            .fetch_or(1 << (c % 64), Ordering::Relaxed);
    }
}

pub(super) fn cpu_word(cpu: Option<usize>) -> u32 {
    cpu.map_or(NO_CPU, |c| c as u32)
}

pub(super) fn word_cpu(w: u32) -> Option<usize> {
    (w != NO_CPU).then_some(w as usize)
}
