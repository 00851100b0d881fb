//! A group of worker processes that run one workload together.
//!
//! The caller creates the shared objects first; [`Group::spawn`] then forks one
//! child per member. Each child asks to die with its parent
//! (`PR_SET_PDEATHSIG`), places itself on its CPU, reads back where it really
//! runs, reports ready and waits at a start barrier, so that all begin
//! together when [`Group::run`] opens it. Results come back through an
//! anonymous `MAP_SHARED` page (nothing to leak, whatever kills the run). The
//! parent never blocks without a deadline, and every path out of a [`Group`]
//! (success, a member's failure, a time-out, Ctrl-C, a panic in the parent)
//! kills and reaps every child.
//!
//! The engine knows nothing of what the members do: a member is a closure that
//! counts *operations* (whatever the workload calls them), calls
//! [`Member::before_op`] before each one (which applies a scheduled migration
//! and publishes progress), and may report a few counters.

use crate::engine::channel::{ChannelError, retry};
use crate::engine::os::interrupt;
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::process::{self, ExitStatus, Fork};
use crate::sys::sched;
use crate::sys::sync::{futex_wait, futex_wake};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Most processes one group may have.
pub const MAX_MEMBERS: usize = 64;

/// Counters each member can report (see [`Member::set_counter`]).
pub const MAX_COUNTERS: usize = 8;

/// Words of the set of CPUs a member was seen on: 16 × 64 = 1024 CPUs, the
/// size of the kernel's default `cpu_set_t`.
const CPU_WORDS: usize = 16;

// Layout of the shared page. The header words and every member's slot start on
// their own cache lines, so that a member publishing its progress never
// disturbs another's.
const OFF_GO: usize = 0;
const OFF_STOP: usize = 64;
const HEADER: usize = 128;
const SLOT: usize = 512;
const S_STATE: usize = 0;
const S_CPU_START: usize = 4;
const S_CPU_END: usize = 8;
const S_ERR_LEN: usize = 12;
const S_PROGRESS: usize = 16;
const S_START: usize = 24;
const S_END: usize = 32;
const S_MIGRATIONS: usize = 40;
const S_MISSES: usize = 48;
const S_COUNTERS: usize = 64;
const S_CPUS: usize = S_COUNTERS + 8 * MAX_COUNTERS;
const S_ERR: usize = S_CPUS + 8 * CPU_WORDS;
const ERR_CAP: usize = SLOT - S_ERR;
// The layout is checked when compiling: room for an error message, aligned
// 64-bit words, and the header's words inside the header.
const _: () = assert!(ERR_CAP >= 64 && S_COUNTERS.is_multiple_of(8) && S_CPUS.is_multiple_of(8));
const _: () = assert!(OFF_STOP + 4 <= HEADER);

// A zeroed slot (state 0) is a member still starting.
const READY: u32 = 1;
const DONE: u32 = 2;
const FAILED: u32 = 3;
/// Failed only because a partner went away (end of file, broken pipe, removed
/// object): a consequence, reported only if no member failed for a cause.
const FAILED_AFTER_PARTNER: u32 = 4;

fn is_failed(state: u32) -> bool {
    state == FAILED || state == FAILED_AFTER_PARTNER
}

/// "No CPU known" in a CPU word.
const NO_CPU: u32 = u32::MAX;

/// How often the parent looks at its members while they run: rare enough not
/// to compete with them for a CPU (the figures come from the members' own
/// clocks, not from the parent's polls).
const POLL: Duration = Duration::from_millis(20);

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

/// What to start.
#[derive(Debug, Clone)]
pub struct GroupSpec {
    /// One entry per member: the CPU it pins itself to (`None`: left free).
    pub cpus: Vec<Option<usize>>,
    /// One entry per member: its migration, if any.
    pub migrations: Vec<Option<Migration>>,
    /// How long any wait on the members may last: start-up, a stretch with no
    /// progress at all, and the finish after a stop.
    pub timeout: Duration,
}

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

/// A finished group.
#[derive(Debug, Clone)]
pub struct GroupReport {
    /// From opening the start barrier to the last member finishing, ns.
    pub elapsed_ns: u64,
    /// From opening the barrier to raising the stop flag (timed runs), ns.
    pub stopped_after_ns: Option<u64>,
    /// One report per member, in member order.
    pub members: Vec<MemberReport>,
}

/// One member, as its closure sees it (in its own process).
pub struct Member<'a> {
    index: usize,
    page: &'a SharedMapping,
    slot: usize,
    migration: Option<Migration>,
    next_move: u64,
    pinned: Option<usize>,
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
        if done >= self.next_move {
            self.migrate(done)?;
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

    #[cold]
    fn migrate(&mut self, done: u64) -> Result<(), ChannelError> {
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
        note_cpu(self.page, self.slot, seen);
        self.word64(S_MIGRATIONS).fetch_add(1, Ordering::Relaxed);
        if seen != Some(target) {
            self.word64(S_MISSES).fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn slot_of(i: usize) -> usize {
    HEADER + i * SLOT
}

fn note_cpu(page: &SharedMapping, slot: usize, cpu: Option<usize>) {
    if let Some(c) = cpu.filter(|&c| c < 64 * CPU_WORDS) {
        page.atomic_u64(slot + S_CPUS + 8 * (c / 64))
            .fetch_or(1 << (c % 64), Ordering::Relaxed);
    }
}

fn cpu_word(cpu: Option<usize>) -> u32 {
    cpu.map_or(NO_CPU, |c| c as u32)
}

fn word_cpu(w: u32) -> Option<usize> {
    (w != NO_CPU).then_some(w as usize)
}

/// A running group of member processes.
pub struct Group {
    page: SharedMapping,
    pids: Vec<libc::pid_t>,
    reaped: Vec<bool>,
    placed: Vec<Option<usize>>,
    timeout: Duration,
}

impl Group {
    /// Forks one child per member of `spec`, each running `body` once (in its
    /// own process) after the start barrier opens; returns when every member
    /// is placed and waiting at the barrier.
    ///
    /// Call only from a single-threaded process, after
    /// [`interrupt::install`], with every object the members share already
    /// created. Whatever the caller holds that only the children need (pipe
    /// ends…) can be dropped once this returns.
    pub fn spawn<F>(spec: &GroupSpec, mut body: F) -> Result<Group, GroupError>
    where
        F: FnMut(&mut Member) -> Result<(), ChannelError>,
    {
        let n = spec.cpus.len();
        assert!(
            (1..=MAX_MEMBERS).contains(&n) && spec.migrations.len() == n,
            "group of {n} members with {} migrations",
            spec.migrations.len()
        );
        let page = SharedMapping::new(HEADER + n * SLOT)
            .map_err(|e| GroupError::Setup(format!("mmap group page: {e}")))?;
        // Flags left by an earlier group's children (SIGCHLD) must not reach
        // these children, which inherit them.
        interrupt::reset_for_figure();
        let mut group = Group {
            page,
            pids: Vec::with_capacity(n),
            reaped: Vec::with_capacity(n),
            placed: spec.cpus.clone(),
            timeout: spec.timeout,
        };
        let parent = process::getpid();
        for i in 0..n {
            match process::fork() {
                Ok(Fork::Child) => {
                    // Only this runs in the child, and it never returns: the
                    // child never drops (releases) anything of the parent's.
                    let code = member_main(&group.page, i, spec, parent, &mut body);
                    process::exit_now(code)
                }
                Ok(Fork::Parent(pid)) => {
                    group.pids.push(pid);
                    group.reaped.push(false);
                }
                // Dropping `group` kills the members already forked.
                Err(e) => return Err(GroupError::Setup(format!("fork: {e}"))),
            }
        }
        group.wait_ready()?;
        Ok(group)
    }

    fn slot_u32(&self, i: usize, off: usize) -> &AtomicU32 {
        self.page.atomic_u32(slot_of(i) + off)
    }

    fn slot_u64(&self, i: usize, off: usize) -> &AtomicU64 {
        self.page.atomic_u64(slot_of(i) + off)
    }

    fn wait_ready(&mut self) -> Result<(), GroupError> {
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_micros(100);
        loop {
            self.check_members()?;
            let ready = (0..self.pids.len())
                .all(|i| self.slot_u32(i, S_STATE).load(Ordering::Acquire) == READY);
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill_all();
                return Err(GroupError::Timeout(format!(
                    "the processes were not ready within {:?}",
                    self.timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Fails if the run was interrupted, a member reported failure, or a member
    /// ended without reporting (killed, crashed); kills the others first.
    fn check_members(&mut self) -> Result<(), GroupError> {
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

    fn progress(&self) -> u64 {
        (0..self.pids.len())
            .map(|i| {
                let done = self.slot_u32(i, S_STATE).load(Ordering::Relaxed) == DONE;
                self.slot_u64(i, S_PROGRESS)
                    .load(Ordering::Relaxed)
                    .wrapping_add(done as u64)
            })
            .fold(0u64, u64::wrapping_add)
    }

    /// Opens the start barrier and waits until every member has finished.
    /// With `limit`, raises the stop flag that long after the start. The run
    /// fails if no member makes progress for `silence` (the caller adds the
    /// longest an operation may legitimately take to the group's timeout).
    pub fn run(
        &mut self,
        limit: Option<Duration>,
        silence: Duration,
    ) -> Result<GroupReport, GroupError> {
        let t0 = monotonic_ns();
        let go = self.page.atomic_u32(OFF_GO);
        go.store(1, Ordering::Release);
        futex_wake(go, i32::MAX).map_err(|e| GroupError::Setup(format!("futex wake: {e}")))?;
        let stop_at = limit.map(|d| t0 + d.as_nanos() as u64);
        let mut stopped_after = None;
        let mut last_progress = self.progress();
        let mut last_change = Instant::now();
        loop {
            self.check_members()?;
            let all_done = (0..self.pids.len())
                .all(|i| self.slot_u32(i, S_STATE).load(Ordering::Acquire) == DONE);
            if all_done {
                break;
            }
            let now = monotonic_ns();
            if let Some(at) = stop_at
                && stopped_after.is_none()
                && now >= at
            {
                self.page.atomic_u32(OFF_STOP).store(1, Ordering::Release);
                stopped_after = Some(now - t0);
                // The members now finish what they started: that is progress.
                last_change = Instant::now();
            }
            let p = self.progress();
            if p != last_progress {
                last_progress = p;
                last_change = Instant::now();
            } else if last_change.elapsed() > silence {
                self.kill_all();
                return Err(GroupError::Timeout(format!(
                    "no process made progress for {:.1} s",
                    silence.as_secs_f64()
                )));
            }
            let mut pause = POLL;
            if let Some(at) = stop_at
                && stopped_after.is_none()
            {
                pause = pause.min(Duration::from_nanos(at.saturating_sub(now)));
            }
            std::thread::sleep(pause.max(Duration::from_micros(50)));
        }
        self.reap_finished()?;
        let members = (0..self.pids.len())
            .map(|i| self.report_of(i))
            .collect::<Vec<_>>();
        let last_end = (0..self.pids.len())
            .map(|i| self.slot_u64(i, S_END).load(Ordering::Relaxed))
            .max()
            .unwrap_or(t0);
        Ok(GroupReport {
            elapsed_ns: last_end.saturating_sub(t0),
            stopped_after_ns: stopped_after,
            members,
        })
    }

    /// Reaps members that reported DONE (they exit right after).
    fn reap_finished(&mut self) -> Result<(), GroupError> {
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

    fn report_of(&self, i: usize) -> MemberReport {
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
    fn kill_all(&mut self) {
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

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Everything a member process does; returns its exit code.
fn member_main<F>(
    page: &SharedMapping,
    i: usize,
    spec: &GroupSpec,
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
    if let Some(cpu) = spec.cpus[i]
        && let Err(e) = sched::pin_to_cpu(cpu)
    {
        return fail(&format!("pin to CPU {cpu}: {e}"));
    }
    let cpu = sched::current_cpu();
    page.atomic_u32(slot + S_CPU_START)
        .store(cpu_word(cpu), Ordering::Relaxed);
    note_cpu(page, slot, cpu);
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

    let migration = spec.migrations[i];
    let mut member = Member {
        index: i,
        page,
        slot,
        migration,
        next_move: migration.map_or(u64::MAX, |m| m.first_move()),
        pinned: spec.cpus[i],
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
