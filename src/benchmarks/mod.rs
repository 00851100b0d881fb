//! Benchmarks timed in one process: one file each, one line each in
//! [`REGISTRY`] (mode `op`, or `event` when the benchmark times itself),
//! [`PERIODIC`] (mode `periodic`) or [`SCORED`] (mode `score`), grouped
//! (`syscall`, `sched`, `timer`, `rhealstone`, `thread-metric`; `rtos` selects
//! both RTOS suites).
//!
//! Everything user-facing about them (`ipcmark list`, the names `ipcmark run`
//! accepts, the conformance tests) is derived from the registry and
//! [`GROUPS`]. The IPC mechanisms are the group [`IPC`], listed in
//! `crate::mechanisms::REGISTRY`.

pub mod rhealstone;
pub mod sched;
pub mod syscall;
pub mod thread_metric;
pub mod timer;

use crate::engine::models::periodic::Periodic;
use crate::engine::models::score::Scored;
use crate::engine::op::Operation;

/// The group of the IPC mechanisms (ping-pong between two processes).
pub const IPC: &str = "ipc";

/// The group of Rhealstone's metrics.
pub const RHEALSTONE: &str = "rhealstone";

/// The group of Thread-Metric's tests.
pub const THREAD_METRIC: &str = "thread-metric";

/// The name that selects every group.
pub const ALL: &str = "all";

/// A group of benchmarks, selected by its name on the command line.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Name on the command line and in JSON.
    pub name: &'static str,
    /// One line: what the group measures.
    pub summary: &'static str,
    /// Other groups this one also selects (`rtos`: both RTOS suites).
    pub includes: &'static [&'static str],
}

/// Every group, in the order runs show them. A group with no benchmark yet is
/// reserved: naming it is an error that says so.
pub static GROUPS: &[Group] = &[
    Group {
        name: IPC,
        summary: "IPC mechanisms: one-way time of a message between two processes",
        includes: &[],
    },
    Group {
        name: syscall::GROUP,
        summary: "single system calls timed in one process, loop overhead subtracted",
        includes: &[],
    },
    Group {
        name: sched::GROUP,
        summary: "scheduler: context switches, wake-ups, priorities",
        includes: &[],
    },
    Group {
        name: timer::GROUP,
        summary: "timers and sleeps: resolution and latency",
        includes: &[],
    },
    Group {
        name: RHEALSTONE,
        summary: "Rhealstone's six RTOS metrics with threads under SCHED_FIFO",
        includes: &[],
    },
    Group {
        name: THREAD_METRIC,
        summary: "Thread-Metric's eight RTOS tests: operations counted in a period",
        includes: &[],
    },
    Group {
        name: "rtos",
        summary: "both RTOS suites: Rhealstone and Thread-Metric",
        includes: &[RHEALSTONE, THREAD_METRIC],
    },
];

/// Every operation benchmark, in the order runs and tables show them.
pub static REGISTRY: &[&dyn Operation] = &[
    &syscall::getpid::Getpid,
    &syscall::gettid::Gettid,
    &syscall::clock_gettime::ClockGettime,
    &syscall::lseek::Lseek,
    &syscall::stat::Stat,
    &syscall::open_close::OpenClose,
    &syscall::read::Read::TMPFS,
    &syscall::read::Read::DISK,
    &syscall::write::Write::TMPFS,
    &syscall::write::Write::DISK,
    &syscall::create_unlink::CreateUnlink,
    &syscall::mmap::Mmap,
    &syscall::fork::ForkExitWait,
    &syscall::spawn::Spawn,
    &sched::yield_switch::YieldSwitch,
    &sched::ring::Ring::PROC_2,
    &sched::ring::Ring::PROC_2_16K,
    &sched::ring::Ring::PROC_2_64K,
    &sched::ring::Ring::PROC_8,
    &sched::ring::Ring::PROC_8_16K,
    &sched::ring::Ring::PROC_8_64K,
    &sched::ring::Ring::THREADS_2,
    &sched::ring::Ring::THREADS_8,
    &rhealstone::task_switch::TaskSwitch,
    &rhealstone::preemption::Preemption,
    &rhealstone::interrupt_latency::InterruptLatency,
    &rhealstone::semaphore_shuffle::SemaphoreShuffle,
    &rhealstone::message_latency::MessageLatency,
    &rhealstone::deadlock_break::DeadlockBreak::PI,
    &rhealstone::deadlock_break::DeadlockBreak::NO_PI,
];

/// Every benchmark of the periodic model (wake-ups at deadlines, periodic
/// interrupts), in the order runs and tables show them.
pub static PERIODIC: &[&dyn Periodic] = &[
    &timer::latency::Latency,
    &timer::failures::Failures,
    &timer::irq_overhead::IrqOverhead,
];

/// Every benchmark of the score model (operations counted in a period), in
/// the order runs and tables show them; the baseline first.
pub static SCORED: &[&dyn Scored] = &[
    &thread_metric::basic::Basic,
    &thread_metric::cooperative::Cooperative,
    &thread_metric::preemptive::Preemptive,
    &thread_metric::interrupt::Interrupt,
    &thread_metric::interrupt_preemption::InterruptPreemption,
    &thread_metric::message::Message,
    &thread_metric::synchronization::Synchronization,
    &thread_metric::memory::Memory,
];

/// Finds a score benchmark by id.
pub fn find_scored(id: &str) -> Option<&'static dyn Scored> {
    SCORED.iter().copied().find(|b| b.info().id == id)
}

/// All score benchmark ids, in registry order.
pub fn scored_ids() -> Vec<&'static str> {
    SCORED.iter().map(|b| b.info().id).collect()
}

/// The score benchmarks of a group (and of the groups it includes), in registry order.
pub fn scored_members(group: &str) -> Vec<&'static dyn Scored> {
    SCORED
        .iter()
        .copied()
        .filter(|b| selects(group, b.info().group))
        .collect()
}

/// Finds a periodic benchmark by id.
pub fn find_periodic(id: &str) -> Option<&'static dyn Periodic> {
    PERIODIC.iter().copied().find(|b| b.info().id == id)
}

/// All periodic benchmark ids, in registry order.
pub fn periodic_ids() -> Vec<&'static str> {
    PERIODIC.iter().map(|b| b.info().id).collect()
}

/// Whether a benchmark of group `own` is selected by naming group `name`:
/// its own group, or a group that includes it.
fn selects(name: &str, own: &str) -> bool {
    name == own || group(name).is_some_and(|g| g.includes.contains(&own))
}

/// The periodic benchmarks of a group (and of the groups it includes), in registry order.
pub fn periodic_members(group: &str) -> Vec<&'static dyn Periodic> {
    PERIODIC
        .iter()
        .copied()
        .filter(|b| selects(group, b.info().group))
        .collect()
}

/// Finds an operation benchmark by id.
pub fn find(id: &str) -> Option<&'static dyn Operation> {
    REGISTRY.iter().copied().find(|b| b.info().id == id)
}

/// All operation ids, in registry order.
pub fn ids() -> Vec<&'static str> {
    REGISTRY.iter().map(|b| b.info().id).collect()
}

/// Finds a group by name.
pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

/// The operation benchmarks of a group (and of the groups it includes), in
/// registry order (none for [`IPC`], whose members are the mechanisms).
pub fn members(group: &str) -> Vec<&'static dyn Operation> {
    REGISTRY
        .iter()
        .copied()
        .filter(|b| selects(group, b.info().group))
        .collect()
}

/// Names of the groups that have benchmarks now, in order.
pub fn available_groups() -> Vec<&'static str> {
    GROUPS
        .iter()
        .map(|g| g.name)
        .filter(|&g| {
            g == IPC
                || !members(g).is_empty()
                || !periodic_members(g).is_empty()
                || !scored_members(g).is_empty()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::op::OpContext;
    use crate::engine::os::objects::{ObjectNamer, disk_temp_base, tmpfs_base};
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_well_formed_and_grouped() {
        let mut seen: HashSet<&str> = crate::mechanisms::ids().into_iter().collect();
        for g in GROUPS {
            assert!(seen.insert(g.name), "group {} clashes with an id", g.name);
        }
        assert!(seen.insert(ALL));
        // Every registry: a unique id named after a known group, and a summary.
        let mut check = |id: &'static str, grp: &str, summary: &str| {
            assert!(seen.insert(id), "duplicate id {id}");
            assert!(
                id.starts_with(&format!("{grp}-")),
                "{id} is not named after its group {grp}"
            );
            assert!(group(grp).is_some(), "{id}: unknown group");
            assert!(
                !summary.is_empty() && !summary.ends_with('.'),
                "summary of {id}"
            );
        };
        for b in REGISTRY {
            let info = b.info();
            check(info.id, info.group, info.summary);
            assert!(
                info.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "bad id {:?}",
                info.id
            );
            assert!(info.group != IPC, "{}: ipc is for mechanisms", info.id);
        }
        for b in PERIODIC {
            let info = b.info();
            check(info.id, info.group, info.summary);
        }
        let mut baselines = HashSet::new();
        for b in SCORED {
            let info = b.info();
            check(info.id, info.group, info.summary);
            assert!(!info.operation.is_empty(), "{}: operation", info.id);
            if info.is_baseline {
                assert!(
                    baselines.insert(info.group),
                    "two baselines in {}",
                    info.group
                );
            }
        }
        assert!(
            baselines.contains(THREAD_METRIC),
            "thread-metric has a baseline"
        );
        assert_eq!(
            available_groups(),
            vec![
                IPC,
                syscall::GROUP,
                sched::GROUP,
                timer::GROUP,
                RHEALSTONE,
                THREAD_METRIC,
                "rtos"
            ]
        );
    }

    #[test]
    fn find_matches_registry() {
        for id in ids() {
            assert_eq!(find(id).map(|b| b.info().id), Some(id));
        }
        assert!(find("pipe").is_none());
    }

    /// Names left by this process's benchmarks under `base`.
    fn ours(base: &std::path::Path) -> Vec<String> {
        let prefix = format!("ipcmark-{}-syscall-", std::process::id());
        std::fs::read_dir(base)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix))
            .collect()
    }

    /// Every benchmark prepares, runs, moves its kernel counter by at least
    /// what it claims, proves its system calls, and leaves nothing behind.
    #[test]
    fn every_benchmark_runs_proves_its_calls_and_cleans_up() {
        let names = ObjectNamer::new();
        // Pinned as the engine pins the measuring thread: the sched
        // benchmarks' helpers share its CPU.
        let cpu = crate::sys::sched::current_cpu();
        let _placed = crate::engine::os::placement::PlacementGuard::apply(
            &crate::engine::os::placement::SidePlacement {
                cpu,
                rt_priority: None,
            },
        )
        .unwrap();
        for b in REGISTRY {
            let info = b.info();
            if let Some(why) = b.unavailable() {
                eprintln!("SKIPPED {}: {why}", info.id);
                continue;
            }
            let mut p = b
                .prepare(&OpContext {
                    names: &names,
                    cpu,
                    rt_priority: None,
                })
                .unwrap_or_else(|e| panic!("{}: {e}", info.id));
            let before = p.op.counter().unwrap();
            for _ in 0..3 {
                p.op.run().unwrap_or_else(|e| panic!("{}: {e}", info.id));
            }
            if let (Some(b0), Some(b1)) = (before, p.op.counter().unwrap()) {
                assert!(b1.value - b0.value >= 3 * b0.per_op, "{}", info.id);
            }
            let checks = crate::engine::os::probe::probe(
                p.op.as_mut(),
                &info,
                std::time::Duration::from_secs(10),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", info.id));
            assert_eq!(checks.len(), info.enters.len() + info.avoids.len());
            for c in &checks {
                if c.must_enter {
                    assert_eq!(c.entered, Some(true), "{}: {}", info.id, c.call);
                }
            }
            drop(p);
        }
        for base in [disk_temp_base(), tmpfs_base()] {
            assert!(
                ours(&base).is_empty(),
                "left in {}: {:?}",
                base.display(),
                ours(&base)
            );
        }
    }
}
