//! `shared-counter`: the study's shared-memory test.
//!
//! Two processes share an array of 32-bit counters, all zero at the start,
//! and a lock (a System V semaphore by default). In turn, under the lock, each
//! sums the array and, while the sum is below the threshold, adds 1 to every
//! element: one *pass*. When a process finds the threshold reached it stops.
//! The threshold is a multiple of the element count, so if the lock excludes
//! properly the final sum equals it exactly and every element holds
//! threshold / elements; the parent checks both. The figure is the time from
//! the start to the last process stopping.

use super::common::{self, LockKind};
use super::{
    Fault, Headline, Opt, Params, Prepared, ProcessRecord, RunContext, RunError, RunRecord,
    Workload, WorkloadInfo,
};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::os::group::Member;
use crate::engine::os::objects::{Cleanup, ObjectNamer};
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::posix_ipc::NamedSemaphore;
use crate::sys::sync::{futex_wait, futex_wake};
use crate::sys::sysv;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::Duration;

/// A byte count as the study wrote them: 4 B, 40 KB, 4 MB (powers of 10).
pub(super) fn human_bytes(b: usize) -> String {
    if b >= 1_000_000 && b.is_multiple_of(1_000_000) {
        format!("{} MB", b / 1_000_000)
    } else if b >= 1_000 && b.is_multiple_of(1_000) {
        format!("{} KB", b / 1_000)
    } else {
        format!("{b} B")
    }
}

/// Two processes incrementing a shared array under a lock.
pub struct SharedCounter;

/// The study's first case: one 4-byte element.
const DEFAULT_ARRAY_BYTES: usize = 4;
/// Largest array: 256 MiB.
pub const MAX_ARRAY_BYTES: usize = 256 << 20;
/// The array starts after the futex lock word's own slot.
const ARRAY_OFFSET: usize = 128;
/// Processes sharing the array.
const PROCESSES: usize = 2;

const COUNTERS: [&str; 2] = ["passes", "lock_wait_ns"];

/// The study's thresholds: 1 000 for one element (1 000 passes), 1 000 000 for
/// 10 000 elements and 100 000 000 for 1 000 000 (100 passes each). Arrays
/// below 40 KB get 1 000 passes, larger ones 100.
fn default_passes(elements: usize) -> u64 {
    if elements < 10_000 { 1_000 } else { 100 }
}

impl Workload for SharedCounter {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            id: "shared-counter",
            summary: "two processes add 1 to every element of a shared array under a semaphore until its sum reaches a threshold, then the sum is checked; total time",
            operation: "pass",
            headline: Headline::Time,
            options: &[Opt::Array, Opt::Threshold, Opt::Mechanism, Opt::Pause],
            faults: &[Fault::Corrupt],
        }
    }

    fn prepare(&self, p: &Params) -> Result<Box<dyn Prepared>, String> {
        Ok(Box::new(Counter::resolve(p)?))
    }
}

/// Resolved settings, shared with the run across MPI ranks
/// (`mpi::workloads`).
pub struct Counter {
    /// 32-bit elements of the array.
    pub elements: usize,
    /// Sum at which the counters stop.
    pub threshold: u64,
    /// The lock (`--mechanism`), for the local run.
    pub kind: LockKind,
    /// Sleep after each pass, outside the lock.
    pub pause: Duration,
    /// Test fault: one increment doubled.
    pub corrupt: bool,
}

impl Counter {
    /// The defaults applied and the limits checked; an error is a usage error.
    pub fn resolve(p: &Params) -> Result<Counter, String> {
        let bytes = p.array_bytes.unwrap_or(DEFAULT_ARRAY_BYTES);
        if bytes == 0 || !bytes.is_multiple_of(4) || bytes > MAX_ARRAY_BYTES {
            return Err(format!(
                "--array {bytes} B: a whole number of 4-byte elements, at most 256 MiB"
            ));
        }
        let elements = bytes / 4;
        let threshold = p
            .threshold
            .unwrap_or(elements as u64 * default_passes(elements));
        if threshold == 0 || !threshold.is_multiple_of(elements as u64) {
            return Err(format!(
                "--threshold {threshold}: must be a positive multiple of the {elements} element(s), since every pass adds {elements}"
            ));
        }
        if threshold / elements as u64 > u32::MAX as u64 {
            return Err(format!(
                "--threshold {threshold}: more than {} passes would overflow a 32-bit element",
                u32::MAX
            ));
        }
        Ok(Counter {
            elements,
            threshold,
            kind: p.mechanism.unwrap_or(LockKind::SysvSem),
            pause: p.pause.unwrap_or(Duration::ZERO),
            corrupt: p.fault == Some(Fault::Corrupt),
        })
    }

    /// Passes the threshold takes: threshold / elements.
    pub fn passes(&self) -> u64 {
        self.threshold / self.elements as u64
    }

    /// The final check, once every counter has stopped: every element holds
    /// threshold / elements, the sum is the threshold, and the passes the
    /// counters reported add up to it. Returns the sum.
    pub fn check_final(&self, array: &[u32], passes_reported: u64) -> Result<u64, String> {
        let sum: u64 = array.iter().map(|&a| a as u64).sum();
        let per_element = self.passes();
        if let Some(j) = array.iter().position(|&a| a as u64 != per_element) {
            return Err(format!(
                "check failed: element {} holds {}, expected {per_element} (final sum {sum}, threshold {}): increments were lost or doubled",
                j + 1,
                array[j],
                self.threshold
            ));
        }
        if sum != self.threshold {
            return Err(format!(
                "check failed: final sum {sum}, expected the threshold {}",
                self.threshold
            ));
        }
        if passes_reported != per_element {
            return Err(format!(
                "check failed: the processes reported {passes_reported} passes, the array holds {per_element}"
            ));
        }
        Ok(sum)
    }
}

impl Prepared for Counter {
    fn roles(&self) -> Vec<String> {
        (1..=PROCESSES).map(|i| format!("counter {i}")).collect()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "array_bytes": 4 * self.elements,
            "elements": self.elements,
            "threshold": self.threshold,
            "passes": self.passes(),
            "mechanism": self.kind.id(),
            "pause_ms": self.pause.as_secs_f64() * 1e3,
        })
    }

    fn duration(&self) -> Option<Duration> {
        None
    }

    fn run(&self, ctx: &RunContext) -> Result<RunRecord, RunError> {
        let roles = self.roles();
        let map = SharedMapping::new(ARRAY_OFFSET + 4 * self.elements)
            .map_err(|e| RunError::Failed(format!("mmap shared array: {e}")))?;
        // Declared before the group, so released after every process is gone.
        let lock = Lock::create(self.kind, ctx.names)?;
        let group = common::spawn(ctx, &roles, |m| self.count(m, &map, &lock))?;
        // One pass over the largest array takes well under a second.
        let longest = Duration::from_secs(1) + self.pause;
        let report = common::finish(group, ctx, &roles, None, longest)?;

        // The final check, in the parent once both processes are gone.
        let array: Vec<u32> = map
            .atomic_u32_slice(ARRAY_OFFSET, self.elements)
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .collect();
        let passes: u64 = report.members.iter().map(|m| m.ops).sum();
        let sum = self.check_final(&array, passes).map_err(RunError::Failed)?;
        let elapsed = report.elapsed_ns;
        let metrics = vec![
            ("time_ns", elapsed as f64),
            ("per_op_ns", elapsed as f64 / passes as f64),
            ("final_sum", sum as f64),
            ("threshold", self.threshold as f64),
        ];
        Ok(RunRecord {
            elapsed_ns: elapsed,
            stopped_after_ns: None,
            figure: elapsed as f64,
            processes: report
                .members
                .into_iter()
                .zip(roles)
                .map(|(r, role)| ProcessRecord {
                    role,
                    rank: None,
                    counters: COUNTERS
                        .iter()
                        .enumerate()
                        .map(|(c, &name)| (name, r.counters[c]))
                        .collect(),
                    report: r,
                })
                .collect(),
            metrics,
            places: Vec::new(),
        })
    }
}

impl Counter {
    /// One process: passes under the lock until the threshold is reached.
    fn count(&self, m: &mut Member, map: &SharedMapping, lock: &Lock) -> Result<(), ChannelError> {
        let array = map.atomic_u32_slice(ARRAY_OFFSET, self.elements);
        let (mut passes, mut wait_ns) = (0u64, 0u64);
        loop {
            m.before_op(passes)?;
            let t = monotonic_ns();
            lock.lock(map)?;
            wait_ns += monotonic_ns() - t;
            // The lock orders these plain (relaxed) accesses between the
            // processes; the fences make that explicit to the compiler.
            fence(Ordering::Acquire);
            let sum: u64 = array.iter().map(|a| a.load(Ordering::Relaxed) as u64).sum();
            if sum >= self.threshold {
                fence(Ordering::Release);
                lock.unlock(map)?;
                break;
            }
            for a in array {
                a.store(a.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
            }
            // Test fault: on each process's first pass (one of them always gets
            // one, whichever wins the lock), so the check must catch it.
            if self.corrupt && passes == 0 {
                array[0].fetch_add(1, Ordering::Relaxed);
            }
            fence(Ordering::Release);
            lock.unlock(map)?;
            passes += 1;
            common::pause(self.pause);
        }
        m.set_ops(passes);
        m.set_counter(0, passes);
        m.set_counter(1, wait_ns);
        Ok(())
    }
}

/// The lock around the array.
enum Lock {
    /// One System V semaphore (1 = free), `semop` −1 / +1.
    Sysv { id: i32, _remove: Cleanup },
    /// A named POSIX semaphore (1 = free).
    Posix(NamedSemaphore),
    /// A futex mutex (0 free, 1 locked, 2 locked with waiters) in the first
    /// word of the shared mapping, in its own cache-line slot.
    Futex,
}

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

impl Lock {
    fn create(kind: LockKind, names: &ObjectNamer) -> Result<Lock, RunError> {
        Ok(match kind {
            LockKind::SysvSem => {
                let (id, remove) = common::sysv_set(names, &[1])?;
                Lock::Sysv {
                    id,
                    _remove: remove,
                }
            }
            LockKind::PosixSem => Lock::Posix(common::unlinked_semaphore(names, 1)?),
            // The mapping is zeroed: the word starts unlocked.
            LockKind::Futex => Lock::Futex,
        })
    }

    #[inline]
    fn lock(&self, map: &SharedMapping) -> Result<(), ChannelError> {
        match self {
            Lock::Sysv { id, .. } => retry("semop -1 (lock)", || sysv::sem_op(*id, 0, -1)),
            Lock::Posix(sem) => retry("sem_wait (lock)", || sem.wait()),
            Lock::Futex => futex_lock(map.atomic_u32(0)),
        }
    }

    #[inline]
    fn unlock(&self, map: &SharedMapping) -> Result<(), ChannelError> {
        match self {
            Lock::Sysv { id, .. } => {
                sysv::sem_op(*id, 0, 1).map_err(ChannelError::io("semop +1 (unlock)"))
            }
            Lock::Posix(sem) => sem.post().map_err(ChannelError::io("sem_post (unlock)")),
            Lock::Futex => {
                let word = map.atomic_u32(0);
                if word.swap(UNLOCKED, Ordering::Release) == CONTENDED {
                    futex_wake(word, 1).map_err(ChannelError::io("futex wake (unlock)"))?;
                }
                Ok(())
            }
        }
    }
}

/// Drepper's mutex ("Futexes are tricky", mutex 2): the wake-up call is made
/// only when someone may be asleep.
fn futex_lock(word: &AtomicU32) -> Result<(), ChannelError> {
    if word
        .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        return Ok(());
    }
    while word.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
        retry("futex wait (lock)", || futex_wait(word, CONTENDED))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thresholds_are_the_studys() {
        let t = |bytes: usize| (bytes / 4) as u64 * default_passes(bytes / 4);
        assert_eq!(t(4), 1_000);
        assert_eq!(t(40_000), 1_000_000);
        assert_eq!(t(4_000_000), 100_000_000);
    }
}
