//! Where each side runs: CPU pinning and the real-time policy.

use crate::sys::sched;
use std::io;

/// Placement of one side of a measurement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SidePlacement {
    /// CPU to pin to; `None` leaves the scheduler free.
    pub cpu: Option<usize>,
    /// SCHED_FIFO priority; `None` keeps SCHED_OTHER.
    pub rt_priority: Option<i32>,
}

impl SidePlacement {
    /// Applies this placement to the calling thread.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(cpu) = self.cpu {
            sched::pin_to_cpu(cpu)
                .map_err(|e| io::Error::new(e.kind(), format!("pin to CPU {cpu}: {e}")))?;
        }
        if let Some(prio) = self.rt_priority {
            sched::set_fifo(prio).map_err(|e| {
                io::Error::new(e.kind(), format!("SCHED_FIFO priority {prio}: {e}"))
            })?;
        }
        Ok(())
    }
}

/// Restores the calling thread's CPU set and policy when dropped.
pub struct PlacementGuard {
    cpus: Vec<usize>,
    was_rt: bool,
}

impl PlacementGuard {
    /// Applies `p` to the calling thread and remembers how to undo it.
    pub fn apply(p: &SidePlacement) -> io::Result<PlacementGuard> {
        let guard = PlacementGuard {
            cpus: sched::allowed_cpus()?,
            was_rt: p.rt_priority.is_some(),
        };
        p.apply()?;
        Ok(guard)
    }
}

impl Drop for PlacementGuard {
    fn drop(&mut self) {
        if self.was_rt {
            let _ = sched::set_normal();
        }
        let _ = sched::set_allowed_cpus(&self.cpus);
    }
}

/// Prefers a NUMA node for the pages the calling thread faults in while it
/// is held (a channel's shared pages, its buffers), and for the peer it
/// starts meanwhile, which inherits the policy; the default policy is back
/// when it is dropped. `None` changes nothing.
pub struct HomeGuard {
    set: bool,
}

impl HomeGuard {
    /// Prefers `node` until dropped.
    pub fn apply(node: Option<usize>) -> io::Result<HomeGuard> {
        if let Some(n) = node {
            crate::sys::numa::set_preferred_node(Some(n))
                .map_err(|e| io::Error::new(e.kind(), format!("prefer NUMA node {n}: {e}")))?;
        }
        Ok(HomeGuard {
            set: node.is_some(),
        })
    }
}

impl Drop for HomeGuard {
    fn drop(&mut self) {
        if self.set {
            let _ = crate::sys::numa::set_preferred_node(None);
        }
    }
}

/// Checks that SCHED_FIFO at `priority` is permitted, by trying it on the
/// calling thread and switching back at once.
pub fn probe_rt(priority: i32) -> io::Result<()> {
    sched::set_fifo(priority)?;
    sched::set_normal()
}

/// The highest SCHED_FIFO priority the calling thread may take (the
/// permission only grows downwards: `RLIMIT_RTPRIO` is a ceiling, root has
/// every priority), or the error that refuses the lowest. Tries each
/// candidate on the calling thread and switches back at once.
pub fn max_fifo_priority() -> io::Result<i32> {
    probe_rt(1)?;
    let (mut lo, mut hi): (i32, i32) = (1, 99);
    while lo < hi {
        let mid = (lo + hi + 1) / 2;
        if probe_rt(mid).is_ok() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(lo)
}
