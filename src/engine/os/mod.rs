//! Processes and OS objects: the peer that serves a channel's other end,
//! groups of processes for whole workloads, placement on CPUs and
//! SCHED_FIFO, stop requests and watchdogs, named objects and their release,
//! a stated load, the kernel's limits a channel reads, the seccomp probe, and
//! fresh cgroups with the cpu controller.
//! Nothing here times a figure or knows a timing model; what the machine
//! *is* (its environment, topology, checks, tracing) is `crate::machine`.

pub mod cgroup;
pub mod daemon;
pub mod group;
pub mod interrupt;
pub mod limits;
pub mod load;
pub mod objects;
pub mod peer;
pub mod placement;
pub mod probe;
