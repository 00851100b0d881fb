//! Scheduled moves of a member between CPUs while it runs: what the caller
//! asks for ([`Migration`]) and how a member carries it out, recording on
//! the results page where it really ran after each move.

use super::page::{S_MIGRATIONS, S_MISSES, note_cpu};
use crate::engine::channel::ChannelError;
use crate::sys::mem::SharedMapping;
use crate::sys::sched;
use std::sync::atomic::Ordering;

/// A scheduled move of one member between CPUs while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// After every `ops` operations, move to whichever of the two CPUs the
    /// member is not pinned to (to the first if it is on neither).
    Every {
        /// Operations between moves (≥ 1).
        ops: u64,
        /// The two CPUs.
        cpus: [usize; 2],
    },
    /// Move once to `cpu` just before operation `op` (numbered from 1, so
    /// `op = 1` moves before any work).
    At {
        /// The operation the move precedes (≥ 1).
        op: u64,
        /// Where to.
        cpu: usize,
    },
}

impl Migration {
    /// Completed operations after which the first move happens.
    fn first_move(&self) -> u64 {
        match *self {
            Migration::Every { ops, .. } => ops,
            Migration::At { op, .. } => op.saturating_sub(1),
        }
    }
}

/// A member's own schedule of moves: which is next, and where it is pinned.
pub(super) struct Moves {
    migration: Option<Migration>,
    next_move: u64,
    pinned: Option<usize>,
}

impl Moves {
    /// The schedule of a member pinned to `pinned` (if anywhere) at the start.
    pub(super) fn new(migration: Option<Migration>, pinned: Option<usize>) -> Moves {
        Moves {
            migration,
            next_move: migration.map_or(u64::MAX, |m| m.first_move()),
            pinned,
        }
    }

    /// Whether a move is due after `done` completed operations: the one
    /// comparison the member's hot path pays.
    #[inline]
    pub(super) fn due(&self, done: u64) -> bool {
        done >= self.next_move
    }

    /// Carries out the move that is due, and records it in the member's
    /// `slot` of `page`.
    #[cold]
    pub(super) fn migrate(
        &mut self,
        page: &SharedMapping,
        slot: usize,
        done: u64,
    ) -> Result<(), ChannelError> {
        let target = match self.migration {
            Some(Migration::Every { ops, cpus }) => {
                self.next_move = done + ops;
                if self.pinned == Some(cpus[0]) {
                    cpus[1]
                } else {
                    cpus[0]
                }
            }
            Some(Migration::At { cpu, .. }) => {
                self.next_move = u64::MAX;
                cpu
            }
            None => {
                self.next_move = u64::MAX;
                return Ok(());
            }
        };
        // sched_setaffinity moves the calling thread before it returns, so the
        // CPU read right after is where the rest of the work runs.
        sched::pin_to_cpu(target).map_err(ChannelError::io("sched_setaffinity (migration)"))?;
        self.pinned = Some(target);
        let seen = sched::current_cpu();
        note_cpu(page, slot, seen);
        page.atomic_u64(slot + S_MIGRATIONS)
            .fetch_add(1, Ordering::Relaxed);
        if seen != Some(target) {
            page.atomic_u64(slot + S_MISSES)
                .fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_move_counts_completed_operations() {
        let every = Migration::Every {
            ops: 10,
            cpus: [0, 1],
        };
        assert_eq!(every.first_move(), 10);
        assert_eq!(Migration::At { op: 1, cpu: 0 }.first_move(), 0);
        assert_eq!(Migration::At { op: 500, cpu: 0 }.first_move(), 499);
    }
}
