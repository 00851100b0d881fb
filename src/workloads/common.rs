//! What the workloads share: the choice of synchronisation primitive, creating
//! System V sets and POSIX semaphores that clean up after themselves, a fixed
//! amount of CPU work, and running a group with errors that name the process.

use super::{RunContext, RunError};
use crate::engine::channel::ChannelError;
use crate::engine::os::group::{Group, GroupError, GroupReport, GroupSpec, Member};
use crate::engine::os::objects::{Cleanup, ObjectNamer};
use crate::sys::clock::monotonic_ns;
use crate::sys::posix_ipc::{NamedSemaphore, sem_unlink};
use crate::sys::sysv;
use std::time::Duration;

/// The primitive a workload synchronises with (`--mechanism`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// A System V semaphore set (`semop`): what the study used.
    SysvSem,
    /// Named POSIX semaphores (`sem_wait` / `sem_post`).
    PosixSem,
    /// Futex words in shared memory.
    Futex,
}

impl LockKind {
    /// The id used on the command line and in JSON.
    pub fn id(self) -> &'static str {
        match self {
            LockKind::SysvSem => "sysv-sem",
            LockKind::PosixSem => "posix-sem",
            LockKind::Futex => "futex",
        }
    }
}

/// Creates a System V semaphore set with these initial values, keyed with the
/// pid (so `ipcmark clean` finds it after `kill -9`); the guard removes it.
pub fn sysv_set(names: &ObjectNamer, initial: &[u16]) -> Result<(i32, Cleanup), RunError> {
    let (id, cleanup) = names
        .create_sysv("sem", |key| sysv::sem_create(key, initial.len() as i32))
        .map_err(|e| RunError::Failed(format!("semget: {e}")))?;
    sysv::sem_set_all(id, initial).map_err(|e| RunError::Failed(format!("semctl SETALL: {e}")))?;
    Ok((id, cleanup))
}

/// Creates a named POSIX semaphore holding `value` and removes its name at
/// once: the forked processes inherit it, so nothing is left in /dev/shm even
/// if the run is killed.
pub fn unlinked_semaphore(names: &ObjectNamer, value: u32) -> Result<NamedSemaphore, RunError> {
    let (name, sem) = names
        .create_named("sem", |name| NamedSemaphore::create(&format!("/{name}")))
        .map_err(|e| RunError::Failed(format!("sem_open: {e}")))?;
    let name = format!("/{name}");
    sem_unlink(&name).map_err(|e| RunError::Failed(format!("sem_unlink: {e}")))?;
    for _ in 0..value {
        sem.post()
            .map_err(|e| RunError::Failed(format!("sem_post: {e}")))?;
    }
    Ok(sem)
}

/// A fixed amount of CPU work: `iters` dependent xorshift steps, which no
/// compiler can shorten and no cache can help.
#[inline(never)]
pub fn spin_work(iters: u64) -> u64 {
    let mut x = std::hint::black_box(0x2545_F491_4F6C_DD1D_u64);
    for _ in 0..std::hint::black_box(iters) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// Steps of [`spin_work`] per millisecond on this machine: the best of
/// several short trials (a slower trial was interrupted, not slower work).
pub fn calibrate_work() -> f64 {
    const PROBE: u64 = 1 << 20;
    let best = (0..7)
        .map(|_| {
            let t = monotonic_ns();
            spin_work(PROBE);
            monotonic_ns().saturating_sub(t).max(1)
        })
        .min()
        .unwrap_or(1);
    PROBE as f64 / (best as f64 / 1e6)
}

/// Sleeps for `d` unless it is zero.
#[inline]
pub fn pause(d: Duration) {
    if !d.is_zero() {
        std::thread::sleep(d);
    }
}

/// Forks the run's processes, each running `body`, placed as `ctx` says.
pub fn spawn<F>(ctx: &RunContext, roles: &[String], body: F) -> Result<Group, RunError>
where
    F: FnMut(&mut Member) -> Result<(), ChannelError>,
{
    let spec = GroupSpec {
        cpus: ctx.cpus.to_vec(),
        migrations: ctx.migrations.to_vec(),
        timeout: ctx.timeout,
    };
    Group::spawn(&spec, body).map_err(|e| group_error(e, roles))
}

/// Starts the group and waits for it; `limit` stops a timed run, and
/// `longest_op` is the longest one operation may legitimately take (added to
/// the time-out for "no progress").
pub fn finish(
    mut group: Group,
    ctx: &RunContext,
    roles: &[String],
    limit: Option<Duration>,
    longest_op: Duration,
) -> Result<GroupReport, RunError> {
    group
        .run(limit, ctx.timeout + longest_op)
        .map_err(|e| group_error(e, roles))
}

/// A group error in the workload's words: the failing process by its role.
fn group_error(e: GroupError, roles: &[String]) -> RunError {
    match e {
        GroupError::Interrupted(sig) => RunError::Interrupted(sig),
        GroupError::Member { index, message } => RunError::Failed(format!(
            "{}: {message}",
            roles
                .get(index)
                .cloned()
                .unwrap_or_else(|| format!("process {}", index + 1))
        )),
        other => RunError::Failed(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_calibrates_to_a_positive_rate() {
        assert!(calibrate_work() > 0.0);
    }
}
