//! What the kernel counts of one task without tracing, for the coarse
//! anatomy of `ipcmark explain` without root: `/proc/<tid>/schedstat`
//! (time on a CPU, time waiting on a run queue, ns) and the voluntary and
//! involuntary switches of `/proc/<tid>/status`, read through [`SysRoot`].

use super::sysroot::SysRoot;

/// A task's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounters {
    /// Time on a CPU, ns.
    pub run_ns: u64,
    /// Time runnable but waiting on a run queue, ns.
    pub wait_ns: u64,
    /// Switches away because it blocked.
    pub voluntary: u64,
    /// Switches away while still runnable (preempted).
    pub involuntary: u64,
}

impl TaskCounters {
    /// The counters of thread `tid`, or `None` where they cannot be read
    /// (the kernel has no schedstat, or the task is gone).
    pub fn read(root: &SysRoot, tid: i32) -> Option<TaskCounters> {
        let sched = root.read(&format!("/proc/{tid}/schedstat"))?;
        let status = root
            .read(&format!("/proc/{tid}/status"))
            .unwrap_or_default();
        parse(&sched, &status)
    }

    /// What changed since `before`.
    pub fn since(&self, before: &TaskCounters) -> TaskCounters {
        TaskCounters {
            run_ns: self.run_ns.saturating_sub(before.run_ns),
            wait_ns: self.wait_ns.saturating_sub(before.wait_ns),
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
        }
    }
}

/// `schedstat` ("run wait slices") and `status` (its `*_ctxt_switches` lines).
fn parse(schedstat: &str, status: &str) -> Option<TaskCounters> {
    let mut f = schedstat.split_whitespace().map(|v| v.parse::<u64>().ok());
    let run_ns = f.next()??;
    let wait_ns = f.next()??;
    let field = |key: &str| status_field::<u64>(status, key).unwrap_or(0);
    Some(TaskCounters {
        run_ns,
        wait_ns,
        voluntary: field("voluntary_ctxt_switches:"),
        involuntary: field("nonvoluntary_ctxt_switches:"),
    })
}

/// The value of the line `key` (`Tgid:`, `voluntary_ctxt_switches:`) of a
/// `/proc/<tid>/status` text, where it reads as a `T`.
fn status_field<T: std::str::FromStr>(status: &str, key: &str) -> Option<T> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
}

/// The kernel's flag on a kernel thread (`PF_KTHREAD`).
const PF_KTHREAD: u64 = 0x0020_0000;

/// Whether task `tid` is a kernel thread (its `/proc/<tid>/stat` flags),
/// or `None` where it cannot be told (the task is gone).
pub fn kernel_thread(root: &SysRoot, tid: i32) -> Option<bool> {
    let stat = root.read_raw(&format!("/proc/{tid}/stat"))?;
    // The command may hold spaces and parentheses: the fields after it
    // begin past its last ')'; the flags are the 9th field, the 7th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let flags: u64 = rest.split_whitespace().nth(6)?.parse().ok()?;
    Some(flags & PF_KTHREAD != 0)
}

/// The process thread `tid` belongs to, where it is another task (a
/// thread of a pool, a compiler's worker): its id and command, from
/// `/proc/<tid>/status`'s `Tgid` and `/proc/<tgid>/comm`. `None` for a
/// process's own main thread, and for a task gone.
pub fn process_of(root: &SysRoot, tid: i32) -> Option<(i32, String)> {
    let status = root.read_raw(&format!("/proc/{tid}/status"))?;
    let tgid: i32 = status_field(&status, "Tgid:")?;
    if tgid == tid || tgid <= 0 {
        return None;
    }
    let comm = root.read(&format!("/proc/{tgid}/comm"))?;
    let comm = comm.trim();
    (!comm.is_empty()).then(|| (tgid, comm.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tasks_counters_are_read_from_its_proc_files() {
        let dir = std::env::temp_dir().join(format!("ipcmark-schedstat-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/42")).unwrap();
        std::fs::write(dir.join("proc/42/schedstat"), "1500 700 9\n").unwrap();
        std::fs::write(
            dir.join("proc/42/status"),
            "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n",
        )
        .unwrap();
        let root = SysRoot::at(&dir);
        let c = TaskCounters::read(&root, 42).unwrap();
        assert_eq!(
            c,
            TaskCounters {
                run_ns: 1500,
                wait_ns: 700,
                voluntary: 12,
                involuntary: 3
            }
        );
        assert_eq!(c.since(&TaskCounters::default()), c);
        assert!(TaskCounters::read(&root, 7).is_none());
        // A command with a space and a parenthesis; the flags field.
        std::fs::write(
            dir.join("proc/42/stat"),
            "42 (kworker/0:1 (x)) I 2 0 0 0 -1 69238880 0 0\n",
        )
        .unwrap();
        assert_eq!(kernel_thread(&root, 42), Some(true));
        std::fs::write(
            dir.join("proc/42/stat"),
            "42 (cat) R 1 42 42 0 -1 4194304 9\n",
        )
        .unwrap();
        assert_eq!(kernel_thread(&root, 42), Some(false));
        assert_eq!(kernel_thread(&root, 7), None);
        assert_eq!(kernel_thread(&SysRoot::host(), 2), Some(true));
        // A thread of process 40 (`rustc`); a process's own main thread.
        std::fs::create_dir_all(dir.join("proc/40")).unwrap();
        std::fs::write(dir.join("proc/40/comm"), "rustc\n").unwrap();
        std::fs::write(dir.join("proc/42/status"), "Name:\topt cgu.1\nTgid:\t40\n").unwrap();
        assert_eq!(process_of(&root, 42), Some((40, "rustc".to_string())));
        std::fs::write(dir.join("proc/40/status"), "Name:\trustc\nTgid:\t40\n").unwrap();
        assert_eq!(process_of(&root, 40), None);
        assert_eq!(process_of(&root, 7), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
