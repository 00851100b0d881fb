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
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(TaskCounters {
        run_ns,
        wait_ns,
        voluntary: field("voluntary_ctxt_switches:"),
        involuntary: field("nonvoluntary_ctxt_switches:"),
    })
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
