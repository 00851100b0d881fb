//! Starting and running a group: one child forked per member, every one
//! placed and waiting at the start barrier before [`Group::spawn`] returns,
//! then [`Group::run`] opens the barrier, raises the stop flag when the time
//! is up, watches for failures and silence, and collects the reports.

use super::children::{Children, GroupError, MemberReport};
use super::member::{Member, member_main};
use super::migration::Migration;
use super::page::{DONE, HEADER, OFF_GO, OFF_STOP, READY, S_END, SLOT};
use crate::engine::channel::ChannelError;
use crate::engine::os::interrupt;
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::process::{self, Fork};
use crate::sys::sync::futex_wake;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Most processes one group may have.
pub const MAX_MEMBERS: usize = 64;

/// How often the parent looks at its members while they run: rare enough not
/// to compete with them for a CPU (the figures come from the members' own
/// clocks, not from the parent's polls).
const POLL: Duration = Duration::from_millis(20);

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

/// A running group of member processes.
pub struct Group {
    /// The children; dropping them kills and reaps them.
    children: Children,
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
            children: Children {
                page,
                pids: Vec::with_capacity(n),
                reaped: Vec::with_capacity(n),
                placed: spec.cpus.clone(),
                timeout: spec.timeout,
            },
        };
        let parent = process::getpid();
        for i in 0..n {
            match process::fork() {
                Ok(Fork::Child) => {
                    // Only this runs in the child, and it never returns: the
                    // child never drops (releases) anything of the parent's.
                    let code = member_main(
                        &group.children.page,
                        i,
                        spec.cpus[i],
                        spec.migrations[i],
                        parent,
                        &mut body,
                    );
                    process::exit_now(code)
                }
                Ok(Fork::Parent(pid)) => {
                    group.children.pids.push(pid);
                    group.children.reaped.push(false);
                }
                // Dropping `group` kills the members already forked.
                Err(e) => return Err(GroupError::Setup(format!("fork: {e}"))),
            }
        }
        group.wait_ready()?;
        Ok(group)
    }

    fn wait_ready(&mut self) -> Result<(), GroupError> {
        let c = &mut self.children;
        let deadline = Instant::now() + c.timeout;
        let mut pause = Duration::from_micros(100);
        loop {
            c.check_members()?;
            if c.all_in(READY) {
                return Ok(());
            }
            if Instant::now() > deadline {
                c.kill_all();
                return Err(GroupError::Timeout(format!(
                    "the processes were not ready within {:?}",
                    c.timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
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
        let c = &mut self.children;
        let t0 = monotonic_ns();
        let go = c.page.atomic_u32(OFF_GO);
        go.store(1, Ordering::Release);
        futex_wake(go, i32::MAX).map_err(|e| GroupError::Setup(format!("futex wake: {e}")))?;
        let stop_at = limit.map(|d| t0 + d.as_nanos() as u64);
        let mut stopped_after = None;
        let mut last_progress = c.progress();
        let mut last_change = Instant::now();
        loop {
            c.check_members()?;
            if c.all_in(DONE) {
                break;
            }
            let now = monotonic_ns();
            if let Some(at) = stop_at
                && stopped_after.is_none()
                && now >= at
            {
                c.page.atomic_u32(OFF_STOP).store(1, Ordering::Release);
                stopped_after = Some(now - t0);
                // The members now finish what they started: that is progress.
                last_change = Instant::now();
            }
            let p = c.progress();
            if p != last_progress {
                last_progress = p;
                last_change = Instant::now();
            } else if last_change.elapsed() > silence {
                c.kill_all();
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
        c.reap_finished()?;
        let members = (0..c.pids.len())
            .map(|i| c.report_of(i))
            .collect::<Vec<_>>();
        let last_end = (0..c.pids.len())
            .map(|i| c.slot_u64(i, S_END).load(Ordering::Relaxed))
            .max()
            .unwrap_or(t0);
        Ok(GroupReport {
            elapsed_ns: last_end.saturating_sub(t0),
            stopped_after_ns: stopped_after,
            members,
        })
    }
}
