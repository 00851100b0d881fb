//! Benchmarks timed in one process: one file each and one line each in
//! [`REGISTRY`], a [`Benchmark`] of its timing model (mode `op`, or `event`
//! when the benchmark times itself; `periodic`; `score`), grouped (`syscall`,
//! `sched`, `timer`, `rhealstone`, `thread-metric`; `rtos` selects both RTOS
//! suites).
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

/// One benchmark, of whichever timing model: what `ipcmark run` selects by
/// id or group, and `ipcmark list` shows.
#[derive(Clone, Copy)]
pub enum Benchmark {
    /// Timed in one process: mode `op`, or `event` when its threads time
    /// themselves.
    Op(&'static dyn Operation),
    /// The periodic model (mode `periodic`: wake-ups at deadlines, periodic
    /// interrupts); the benchmark only plans its figures.
    Periodic(&'static dyn Periodic),
    /// The score model (mode `score`: operations counted in a period).
    Scored(&'static dyn Scored),
}

impl Benchmark {
    /// Stable id on the command line and in JSON.
    pub fn id(self) -> &'static str {
        match self {
            Benchmark::Op(b) => b.info().id,
            Benchmark::Periodic(b) => b.info().id,
            Benchmark::Scored(b) => b.info().id,
        }
    }

    /// One line: what it measures.
    pub fn summary(self) -> &'static str {
        match self {
            Benchmark::Op(b) => b.info().summary,
            Benchmark::Periodic(b) => b.info().summary,
            Benchmark::Scored(b) => b.info().summary,
        }
    }

    /// The group it belongs to.
    pub fn group(self) -> &'static str {
        match self {
            Benchmark::Op(b) => b.info().group,
            Benchmark::Periodic(b) => b.info().group,
            Benchmark::Scored(b) => b.info().group,
        }
    }
}

/// Every benchmark, in the order runs and tables show them: the operations,
/// then the periodic model's, then the score model's (its baseline first).
pub static REGISTRY: &[Benchmark] = &[
    Benchmark::Op(&syscall::getpid::Getpid),
    Benchmark::Op(&syscall::gettid::Gettid),
    Benchmark::Op(&syscall::clock_gettime::ClockGettime),
    Benchmark::Op(&syscall::lseek::Lseek),
    Benchmark::Op(&syscall::stat::Stat),
    Benchmark::Op(&syscall::open_close::OpenClose),
    Benchmark::Op(&syscall::read::Read::TMPFS),
    Benchmark::Op(&syscall::read::Read::DISK),
    Benchmark::Op(&syscall::write::Write::TMPFS),
    Benchmark::Op(&syscall::write::Write::DISK),
    Benchmark::Op(&syscall::create_unlink::CreateUnlink),
    Benchmark::Op(&syscall::mmap::Mmap),
    Benchmark::Op(&syscall::fork::ForkExitWait),
    Benchmark::Op(&syscall::spawn::Spawn),
    Benchmark::Op(&sched::yield_switch::YieldSwitch),
    Benchmark::Op(&sched::ring::Ring::PROC_2),
    Benchmark::Op(&sched::ring::Ring::PROC_2_16K),
    Benchmark::Op(&sched::ring::Ring::PROC_2_64K),
    Benchmark::Op(&sched::ring::Ring::PROC_8),
    Benchmark::Op(&sched::ring::Ring::PROC_8_16K),
    Benchmark::Op(&sched::ring::Ring::PROC_8_64K),
    Benchmark::Op(&sched::ring::Ring::THREADS_2),
    Benchmark::Op(&sched::ring::Ring::THREADS_8),
    Benchmark::Op(&rhealstone::task_switch::TaskSwitch),
    Benchmark::Op(&rhealstone::preemption::Preemption),
    Benchmark::Op(&rhealstone::interrupt_latency::InterruptLatency),
    Benchmark::Op(&rhealstone::semaphore_shuffle::SemaphoreShuffle),
    Benchmark::Op(&rhealstone::message_latency::MessageLatency),
    Benchmark::Op(&rhealstone::deadlock_break::DeadlockBreak::PI),
    Benchmark::Op(&rhealstone::deadlock_break::DeadlockBreak::NO_PI),
    Benchmark::Periodic(&timer::latency::Latency),
    Benchmark::Periodic(&timer::failures::Failures),
    Benchmark::Periodic(&timer::irq_overhead::IrqOverhead),
    Benchmark::Scored(&thread_metric::basic::Basic),
    Benchmark::Scored(&thread_metric::cooperative::Cooperative),
    Benchmark::Scored(&thread_metric::preemptive::Preemptive),
    Benchmark::Scored(&thread_metric::interrupt::Interrupt),
    Benchmark::Scored(&thread_metric::interrupt_preemption::InterruptPreemption),
    Benchmark::Scored(&thread_metric::message::Message),
    Benchmark::Scored(&thread_metric::synchronization::Synchronization),
    Benchmark::Scored(&thread_metric::memory::Memory),
];

/// Finds a benchmark by id.
pub fn find(id: &str) -> Option<Benchmark> {
    REGISTRY.iter().copied().find(|b| b.id() == id)
}

/// All benchmark ids, in registry order.
pub fn ids() -> Vec<&'static str> {
    REGISTRY.iter().map(|b| b.id()).collect()
}

/// Whether a benchmark of group `own` is selected by naming group `name`:
/// its own group, or a group that includes it.
fn selects(name: &str, own: &str) -> bool {
    name == own || group(name).is_some_and(|g| g.includes.contains(&own))
}

/// Finds a group by name.
pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

/// The benchmarks of a group (and of the groups it includes), in registry
/// order (none for [`IPC`], whose members are the mechanisms).
pub fn members(group: &str) -> Vec<Benchmark> {
    REGISTRY
        .iter()
        .copied()
        .filter(|b| selects(group, b.group()))
        .collect()
}

/// Names of the groups that have benchmarks now, in order.
pub fn available_groups() -> Vec<&'static str> {
    GROUPS
        .iter()
        .map(|g| g.name)
        .filter(|&g| g == IPC || !members(g).is_empty())
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
        // Every benchmark: a well-formed unique id named after a known group
        // (not ipc, which is the mechanisms'), and a summary.
        let mut baselines = HashSet::new();
        for &b in REGISTRY {
            let (id, grp) = (b.id(), b.group());
            let summary = match b {
                Benchmark::Op(b) => b.info().summary,
                Benchmark::Periodic(b) => b.info().summary,
                Benchmark::Scored(b) => b.info().summary,
            };
            assert!(seen.insert(id), "duplicate id {id}");
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "bad id {id:?}"
            );
            assert!(
                id.starts_with(&format!("{grp}-")),
                "{id} is not named after its group {grp}"
            );
            assert!(group(grp).is_some(), "{id}: unknown group");
            assert!(grp != IPC, "{id}: ipc is for mechanisms");
            assert!(
                !summary.is_empty() && !summary.ends_with('.'),
                "summary of {id}"
            );
            if let Benchmark::Scored(b) = b {
                let info = b.info();
                assert!(!info.operation.is_empty(), "{}: operation", info.id);
                if info.is_baseline {
                    assert!(
                        baselines.insert(info.group),
                        "two baselines in {}",
                        info.group
                    );
                }
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
            assert_eq!(find(id).map(|b| b.id()), Some(id));
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
        for &b in REGISTRY {
            let Benchmark::Op(b) = b else { continue };
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
