//! The parent's side of a group: its member processes and what they report
//! on the results page: failures (the cause before its consequences),
//! progress, each member's report, and killing and reaping every child on
//! every path out.

use super::page::{
    CPU_WORDS, DONE, ERR_CAP, FAILED, MAX_COUNTERS, S_COUNTERS, S_CPU_END, S_CPU_START, S_CPUS,
    S_END, S_ERR, S_ERR_LEN, S_MIGRATIONS, S_MISSES, S_PROGRESS, S_START, S_STATE, is_failed,
    slot_of, word_cpu,
};
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use crate::sys::process::{self, ExitStatus};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Why a group could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// The group could not be set up (mapping, fork).
    #[error("{0}")]
    Setup(String),
    /// A member failed or ended unexpectedly; the first to do so is reported.
    #[error("process {} failed: {message}", .index + 1)]
    Member {
        /// Which member (0-based).
        index: usize,
        /// What it reported.
        message: String,
    },
    /// A wait on the members ran past its deadline.
    #[error("{0}")]
    Timeout(String),
    /// SIGINT, SIGTERM or SIGHUP asked the run to stop.
    #[error("interrupted by {0}")]
    Interrupted(&'static str),
}

/// How one member ran, as it reported itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberReport {
    /// The CPU it was asked to pin itself to.
    pub cpu_placed: Option<usize>,
    /// The CPU it ran on once placed, before the start (sched_getcpu).
    pub cpu_start: Option<usize>,
    /// The CPU it ran on when it finished.
    pub cpu_end: Option<usize>,
    /// Every CPU it was seen on: after placement, after each migration, at the end.
    pub cpus_seen: Vec<usize>,
    /// Migrations carried out.
    pub migrations: u64,
    /// Migrations after which the member did not run on the target CPU.
    pub migration_misses: u64,
    /// Operations it reported.
    pub ops: u64,
    /// Its own time from passing the start barrier to finishing, ns.
    pub time_ns: u64,
    /// Its counters, [`MAX_COUNTERS`] of them (unused ones are 0).
    pub counters: Vec<u64>,
}

/// The member processes of a group, as the parent holds them: dropping
/// this kills and reaps every child not yet reaped.
pub(super) struct Children {
    pub(super) page: SharedMapping,
    pub(super) pids: Vec<libc::pid_t>,
    pub(super) reaped: Vec<bool>,
    pub(super) placed: Vec<Option<usize>>,
    pub(super) timeout: Duration,
}

impl Children {
    pub(super) fn slot_u32(&self, i: usize, off: usize) -> &AtomicU32 {
        self.page.atomic_u32(slot_of(i) + off)
    }

    pub(super) fn slot_u64(&self, i: usize, off: usize) -> &AtomicU64 {
        self.page.atomic_u64(slot_of(i) + off)
    }

    /// Whether every member's state is `state`.
    pub(super) fn all_in(&self, state: u32) -> bool {
        (0..self.pids.len()).all(|i| self.slot_u32(i, S_STATE).load(Ordering::Acquire) == state)
    }

    /// Fails if the run was interrupted, a member reported failure, or a member
    /// ended without reporting (killed, crashed); kills the others first.
    pub(super) fn check_members(&mut self) -> Result<(), GroupError> {
        if let Some(sig) = interrupt::stop_requested() {
            self.kill_all();
            return Err(GroupError::Interrupted(interrupt::signal_name(sig)));
        }
        let mut vanished = None;
        for i in 0..self.pids.len() {
            if self.reaped[i] {
                continue;
            }
            if let Ok(Some(status)) = process::try_wait(self.pids[i]) {
                self.reaped[i] = true;
                let state = self.slot_u32(i, S_STATE).load(Ordering::Acquire);
                if state != DONE && !is_failed(state) && vanished.is_none() {
                    vanished = Some((i, status));
                }
            }
        }
        // The others usually fail because of the cause (a closed pipe, a
        // killed partner), and may record it first: a member that failed when
        // its body returned has already closed its ends. So a failure with a
        // cause of its own wins, then a member that vanished, then the
        // earliest consequence, which is given a moment for its cause to show.
        let mut failed = self.first_failed();
        if failed.is_some_and(|(_, cause)| !cause) && vanished.is_none() {
            let until = Instant::now() + Duration::from_millis(100);
            while Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
                failed = self.first_failed();
                if failed.is_some_and(|(_, cause)| cause) {
                    break;
                }
            }
        }
        let report = match (failed, vanished) {
            (Some((i, true)), _) | (Some((i, false)), None) => Some(GroupError::Member {
                index: i,
                message: self.error_of(i),
            }),
            (_, Some((i, status))) => {
                let how = match status {
                    ExitStatus::Code(c) => format!("exit code {c}"),
                    ExitStatus::Signal(s) => format!("signal {s}"),
                };
                Some(GroupError::Member {
                    index: i,
                    message: format!("ended unexpectedly ({how})"),
                })
            }
            (None, None) => None,
        };
        match report {
            Some(e) => {
                self.kill_all();
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// The failed member to report, and whether it failed for a cause of its
    /// own: causes first, then the earliest to record its failure.
    fn first_failed(&self) -> Option<(usize, bool)> {
        (0..self.pids.len())
            .filter_map(|i| {
                let state = self.slot_u32(i, S_STATE).load(Ordering::Acquire);
                is_failed(state).then_some((i, state == FAILED))
            })
            .min_by_key(|&(i, cause)| (!cause, self.slot_u64(i, S_END).load(Ordering::Relaxed)))
    }

    fn error_of(&self, i: usize) -> String {
        let n = (self.slot_u32(i, S_ERR_LEN).load(Ordering::Acquire) as usize).min(ERR_CAP);
        let mut buf = vec![0u8; n];
        self.page.read_bytes(slot_of(i) + S_ERR, &mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    }

    pub(super) fn progress(&self) -> u64 {
        (0..self.pids.len())
            .map(|i| {
                let done = self.slot_u32(i, S_STATE).load(Ordering::Relaxed) == DONE;
                self.slot_u64(i, S_PROGRESS)
                    .load(Ordering::Relaxed)
                    .wrapping_add(done as u64)
            })
            .fold(0u64, u64::wrapping_add)
    }

    /// Reaps members that reported DONE (they exit right after).
    pub(super) fn reap_finished(&mut self) -> Result<(), GroupError> {
        let deadline = Instant::now() + self.timeout;
        while self.reaped.iter().any(|r| !r) {
            for i in 0..self.pids.len() {
                if !self.reaped[i] && matches!(process::try_wait(self.pids[i]), Ok(Some(_))) {
                    self.reaped[i] = true;
                }
            }
            if Instant::now() > deadline {
                self.kill_all();
                return Err(GroupError::Timeout(
                    "a finished process did not exit".into(),
                ));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(())
    }

    pub(super) fn report_of(&self, i: usize) -> MemberReport {
        let mut cpus_seen = Vec::new();
        for w in 0..CPU_WORDS {
            let bits = self.slot_u64(i, S_CPUS + 8 * w).load(Ordering::Relaxed);
            cpus_seen.extend((0..64).filter(|b| bits & (1 << b) != 0).map(|b| w * 64 + b));
        }
        let start = self.slot_u64(i, S_START).load(Ordering::Relaxed);
        let end = self.slot_u64(i, S_END).load(Ordering::Relaxed);
        MemberReport {
            cpu_placed: self.placed[i],
            cpu_start: word_cpu(self.slot_u32(i, S_CPU_START).load(Ordering::Relaxed)),
            cpu_end: word_cpu(self.slot_u32(i, S_CPU_END).load(Ordering::Relaxed)),
            cpus_seen,
            migrations: self.slot_u64(i, S_MIGRATIONS).load(Ordering::Relaxed),
            migration_misses: self.slot_u64(i, S_MISSES).load(Ordering::Relaxed),
            ops: self.slot_u64(i, S_PROGRESS).load(Ordering::Relaxed),
            time_ns: end.saturating_sub(start),
            counters: (0..MAX_COUNTERS)
                .map(|c| self.slot_u64(i, S_COUNTERS + 8 * c).load(Ordering::Relaxed))
                .collect(),
        }
    }

    /// Kills every member not yet reaped and reaps it. SIGKILL cannot be
    /// ignored; the deadline only guards against a child stuck in
    /// uninterruptible sleep.
    pub(super) fn kill_all(&mut self) {
        for i in 0..self.pids.len() {
            if !self.reaped[i] {
                let _ = process::kill(self.pids[i], libc::SIGKILL);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.reaped.iter().any(|r| !r) && Instant::now() < deadline {
            for i in 0..self.pids.len() {
                if !self.reaped[i] && !matches!(process::try_wait(self.pids[i]), Ok(None)) {
                    self.reaped[i] = true;
                }
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.kill_all();
    }
}
