//! Whether an object's run is gone: what `clean` knows of the process it runs
//! in ([`Here`]), how it sees the others ([`Processes`]), the [`judge`] and
//! the report it fills ([`CleanReport`]). Apart so that both halves of
//! `clean` (directories in `clean.rs`, System V objects in `sysvipc.rs`)
//! judge alike without depending on each other. The test helpers at the end
//! serve the tests of both.

use super::names::{NameOwner, Owner, owner_of_name, pid_namespace, start_time};
use crate::sys::process::process_exists;

/// What `ipcmark clean` found and did.
#[derive(Debug, Default)]
pub struct CleanReport {
    /// Objects removed, as "kind name".
    pub removed: Vec<String>,
    /// Objects left alone because their run is still alive.
    pub live: Vec<String>,
    /// Objects left alone because their run cannot be proven gone, as
    /// "object (why)".
    pub kept: Vec<String>,
    /// Objects that could not be removed, with the reason.
    pub failed: Vec<String>,
    /// How many of `removed` are cgroups (`ipcmark tax`'s, left by a killed
    /// run), for the summary line.
    pub cgroups_removed: usize,
}

/// What `clean` needs to know of the process it runs in.
#[derive(Debug, Clone, Copy)]
pub(super) struct Here {
    /// Our PID namespace's inode (0: unknown).
    pub(super) pid_ns: u64,
    /// Whether /proc shows the processes of our PID namespace (it shows
    /// another's when mounted there: then no start time can be checked).
    proc_ours: bool,
}

impl Here {
    pub(super) fn now() -> Here {
        let me = Owner::current();
        let pid = me.pid.to_string();
        let proc_ours = me.pid_ns != 0
            && me.start != 0
            && pid_namespace(&pid) == Some(me.pid_ns)
            && start_time(&pid) == Some(me.start);
        Here {
            pid_ns: me.pid_ns,
            proc_ours,
        }
    }
}

/// Whether an object's run is gone, and if it is not known to be, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its process is gone: the object may go.
    Gone,
    /// Its process is alive.
    Live,
    /// Whether its process lives cannot be told from here.
    Unproven(String),
}

/// How `clean` sees a pid of its own PID namespace.
pub(super) trait Processes {
    fn exists(&self, pid: libc::pid_t) -> bool;
    fn start_time(&self, pid: libc::pid_t) -> Option<u64>;
}

/// This machine's processes.
pub(super) struct System;

impl Processes for System {
    fn exists(&self, pid: libc::pid_t) -> bool {
        process_exists(pid)
    }
    fn start_time(&self, pid: libc::pid_t) -> Option<u64> {
        start_time(&pid.to_string())
    }
}

/// Judges an object's run. Only a process of our own PID namespace can be
/// looked up: there it is gone if its pid is, or if the pid now belongs to a
/// process started at another time. An owner in another namespace, or one
/// whose name records none, is kept: its pid means nothing here.
pub(super) fn judge(owner: NameOwner, here: &Here, procs: &dyn Processes) -> Verdict {
    let o = match owner {
        NameOwner::Recorded(o) => o,
        NameOwner::PidOnly(_) => {
            return Verdict::Unproven(
                "its name records no PID namespace or start time (an older ipcmark made it), \
                 so its pid cannot prove its run gone; remove it by hand if no run is going"
                    .into(),
            );
        }
    };
    if o.pid_ns == 0 || here.pid_ns == 0 {
        return Verdict::Unproven(
            "the PID namespace of its run or of this clean is unknown (/proc/PID/ns/pid unreadable)"
                .into(),
        );
    }
    if o.pid_ns != here.pid_ns {
        return Verdict::Unproven(format!(
            "its run is in another PID namespace (pid:[{}]; this clean runs in pid:[{}]), \
             where pid {} cannot be looked up from here",
            o.pid_ns, here.pid_ns, o.pid
        ));
    }
    if !procs.exists(o.pid) {
        return Verdict::Gone;
    }
    // A live pid with another start time is a later process that reused it.
    match (here.proc_ours && o.start != 0)
        .then(|| procs.start_time(o.pid))
        .flatten()
    {
        Some(start) if start != o.start => Verdict::Gone,
        _ => Verdict::Live,
    }
}

/// How `clean` judges the run that made the object called `name` (a name
/// of [`super::ObjectNamer`]'s, wherever the object lives: a tracefs
/// instance, a cgroup too); `None` when the name is not ipcmark's. Only
/// [`Verdict::Gone`] allows touching the object.
pub fn judge_name(name: &str) -> Option<Verdict> {
    let (owner, _) = owner_of_name(name)?;
    Some(judge(owner, &Here::now(), &System))
}

/// Processes as a test says they are.
#[cfg(test)]
pub(super) struct Fake {
    pub(super) alive: Vec<(libc::pid_t, u64)>,
}

#[cfg(test)]
impl Processes for Fake {
    fn exists(&self, pid: libc::pid_t) -> bool {
        self.alive.iter().any(|&(p, _)| p == pid)
    }
    fn start_time(&self, pid: libc::pid_t) -> Option<u64> {
        self.alive.iter().find(|&&(p, _)| p == pid).map(|&(_, s)| s)
    }
}

/// Our namespace, and /proc showing it.
#[cfg(test)]
pub(super) fn here() -> Here {
    let here = Here::now();
    assert!(here.pid_ns != 0 && here.proc_ours, "{here:?}");
    here
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pid_of_our_namespace_gone_or_reused_is_judged_gone() {
        let here = Here {
            pid_ns: 4026531836,
            proc_ours: true,
        };
        let procs = Fake {
            alive: vec![(100, 5000)],
        };
        let owner = |pid, pid_ns, start| NameOwner::Recorded(Owner { pid, pid_ns, start });
        let ours = here.pid_ns;
        assert_eq!(judge(owner(100, ours, 5000), &here, &procs), Verdict::Live);
        // Gone, or the pid taken by a process started later.
        assert_eq!(judge(owner(200, ours, 5000), &here, &procs), Verdict::Gone);
        assert_eq!(judge(owner(100, ours, 4000), &here, &procs), Verdict::Gone);
        // Another namespace: alive or not, its pid means nothing here.
        for pid in [100, 200] {
            let v = judge(owner(pid, ours + 1, 5000), &here, &procs);
            assert!(
                matches!(&v, Verdict::Unproven(why) if why.contains("another PID namespace")),
                "{v:?}"
            );
        }
        // A name of the older form: the pid alone proves nothing.
        assert!(matches!(
            judge(NameOwner::PidOnly(200), &here, &procs),
            Verdict::Unproven(_)
        ));
        // Unknown namespaces prove nothing either.
        assert!(matches!(
            judge(owner(200, 0, 5000), &here, &procs),
            Verdict::Unproven(_)
        ));
        // With /proc of another namespace, a live pid cannot be checked: kept.
        let blind = Here {
            proc_ours: false,
            ..here
        };
        assert_eq!(judge(owner(100, ours, 4000), &blind, &procs), Verdict::Live);
        assert_eq!(judge(owner(200, ours, 5000), &blind, &procs), Verdict::Gone);
    }
}
