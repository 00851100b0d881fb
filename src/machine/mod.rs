//! The machine measured on, apart from the measuring: where its `/proc`
//! and `/sys` are read (`sysroot`), what it is (`environment`, and what tells
//! one host from another of its kind: `fingerprint`), its CPUs'
//! topology (`topology`), whether it is fit to measure on (`doctor`), the
//! CPU wake-up latency held while measuring and what a wake-up costs when it
//! is not (`cpu_latency`, `wakeup`), the kernel's tracepoints (`tracefs`) and
//! a task's scheduler counters (`schedstat`). The engine never uses this
//! layer: a run asks for what it needs of the machine before and around the
//! engine's session.

pub mod cpu_latency;
pub mod cpu_list;
pub mod doctor;
pub mod environment;
pub mod fingerprint;
pub mod schedstat;
pub mod sysroot;
pub mod topology;
pub mod tracefs;
pub mod wakeup;
