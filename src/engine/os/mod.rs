//! Processes and OS objects: the peer that serves a channel's other end,
//! groups of processes for whole workloads, placement on CPUs and
//! SCHED_FIFO, stop requests and watchdogs, named objects and their release,
//! the environment record, the CPU wake-up latency request and what a wake-up
//! costs, and the seccomp probe. Nothing here times a figure
//! or knows a timing model.

pub mod daemon;
pub mod doctor;
pub mod environment;
pub mod group;
pub mod interrupt;
pub mod load;
pub mod objects;
pub mod peer;
pub mod placement;
pub mod probe;
pub mod schedstat;
pub mod sysroot;
pub mod topology;
pub mod tracefs;
pub mod wakeup;
