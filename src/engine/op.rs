//! The contract between the engine and a benchmark timed in one process
//! (mode `op`): one operation, such as one system call, repeated in a loop.
//!
//! A benchmark prepares its state (files, buffers, prepared arguments) outside
//! any timed region and hands the engine an [`Op`] whose `run` performs the
//! operation once. The engine calibrates, times and subtracts the loop
//! overhead (`oploop`), and proves the operation does what it claims: that it
//! enters the kernel through the calls it names (`probe`), and that an
//! independent counter grew as much as the operations should have made it.

use crate::engine::channel::ChannelError;
use crate::engine::os::objects::ObjectNamer;

/// A system call, with every number the C library may use for it.
#[derive(Debug, Clone, Copy)]
pub struct KernelCall {
    /// Name shown in lists and reports (`getpid`, `pread64`, `clone`, …).
    pub name: &'static str,
    /// System-call numbers that count as this call (e.g. `open` and `openat`).
    pub nrs: &'static [libc::c_long],
}

/// Static facts about a benchmark, shown by `ipcmark list` and recorded with results.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what one operation is.
    pub summary: &'static str,
    /// Group it belongs to (`syscall`, …): `ipcmark run GROUP` selects it.
    pub group: &'static str,
    /// Bytes one operation moves (recorded as `size_bytes`; 0 if none).
    pub bytes: usize,
    /// System calls every operation makes; the engine proves each one.
    pub enters: &'static [KernelCall],
    /// System calls the operation is expected to do without (a vDSO call);
    /// the engine checks and reports whether it did.
    pub avoids: &'static [KernelCall],
}

/// Everything a benchmark needs to prepare.
pub struct OpContext<'a> {
    /// Names for files and other OS objects, so that `ipcmark clean` can find them.
    pub names: &'a ObjectNamer,
    /// The CPU the measuring thread will be pinned to (`None`: not pinned).
    /// Helpers that must share its CPU (processes or threads the operation
    /// switches to) pin themselves here.
    pub cpu: Option<usize>,
    /// The SCHED_FIFO priority the measuring thread will run at (`--rt`), which
    /// such helpers must share; `None` keeps SCHED_OTHER.
    pub rt_priority: Option<i32>,
}

/// What one operation is made of, when the figure is reported per event
/// rather than per operation (e.g. a lap of a token ring is N context
/// switches): the engine divides each time per operation by `per_op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Events {
    /// What one event is, e.g. "context switch".
    pub name: &'static str,
    /// Events per operation (at least 1).
    pub per_op: u32,
}

/// The scheduling a benchmark's threads need: SCHED_FIFO at explicit,
/// different priorities, all on the measuring thread's CPU (Rhealstone's
/// preemption and priority inversion mean nothing without them).
///
/// The engine puts the measuring thread under SCHED_FIFO at the base priority
/// (the one `--rt` gives, else `base_priority`) before `prepare`, when the
/// system permits it, and passes that base in [`OpContext::rt_priority`];
/// the benchmark's helpers run at the base plus at most `helpers_above`. When
/// SCHED_FIFO is refused, every thread runs under SCHED_OTHER, the context
/// carries `None`, and the result says so with `without_fifo`.
#[derive(Debug, Clone, Copy)]
pub struct RealTime {
    /// The measuring thread's priority when `--rt` gives none.
    pub base_priority: i32,
    /// How many priorities above the base the helpers use (the base is
    /// lowered so that base + this stays within 1..=99).
    pub helpers_above: i32,
    /// What the figure loses under SCHED_OTHER, for the note and the warning.
    pub without_fifo: &'static str,
}

/// What a benchmark observed while it ran, beyond its times (e.g. in how many
/// rounds a priority inversion happened), recorded with the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Findings {
    /// Named counts (JSON `observations`).
    pub counts: std::collections::BTreeMap<&'static str, u64>,
    /// One line for the table's notes.
    pub note: String,
}

/// A benchmark, prepared.
pub struct Prepared {
    /// The operation the engine times.
    pub op: Box<dyn Op>,
    /// A fact worth recording with the result (e.g. the file system of a file).
    pub note: Option<String>,
}

/// A benchmark of one operation timed in one process.
pub trait Operation: Sync {
    /// Static description.
    fn info(&self) -> OpInfo;
    /// Why it cannot run on this system (a missing program, …), if it cannot.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// Builds the state the operation needs. Any OS object it creates must be
    /// released when the returned [`Op`] is dropped in this process (see
    /// [`crate::engine::os::objects::Cleanup`]).
    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError>;
    /// If the figure is reported per event: what an operation is made of.
    /// `None` (the default): the figure is per operation.
    fn events(&self) -> Option<Events> {
        None
    }
    /// If the benchmark's threads need SCHED_FIFO at explicit priorities:
    /// which, and what the figure loses without it. `None` (the default):
    /// the policy is the run's (`--rt`).
    fn realtime(&self) -> Option<RealTime> {
        None
    }
    /// Whether the benchmark times its events itself (mode `event`,
    /// `eventloop.rs`): each run reports the latency of one event measured
    /// inside it ([`Op::event_ns`]), e.g. from a timer's expiry to the
    /// thread that handles it running. `false` (the default): the engine
    /// times the loop (mode `op`).
    fn self_timed(&self) -> bool {
        false
    }
}

/// A count kept by the kernel (not by ipcmark) that every operation raises by
/// at least `per_op`, read before and after the timed phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// What is counted and where it is read, e.g. "rchar in /proc/self/io".
    pub source: &'static str,
    /// Its value now.
    pub value: u64,
    /// The least it grows by per operation.
    pub per_op: u64,
}

/// One prepared operation.
///
/// `run` performs the operation exactly once and checks what it returned
/// (returning an error on a wrong result), allocating nothing, logging
/// nothing. A call that blocks (waiting for a child) goes through
/// [`crate::engine::channel::retry`] so that the watchdog and stop requests end it.
pub trait Op {
    /// Performs the operation once.
    fn run(&mut self) -> Result<(), ChannelError>;
    /// The kernel's own count of what the operations did, if there is one
    /// (bytes read, processes created). Called outside timed regions.
    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        Ok(None)
    }
    /// The same work without what is being measured (the token passed
    /// through pipes within one process, with no switch), if the operation
    /// has such a companion: the engine times it apart, like the null loop,
    /// and subtracts its time per operation from every figure.
    fn baseline(&mut self) -> Option<&mut dyn Op> {
        None
    }
    /// Self-timed operations ([`Operation::self_timed`]): the latency of the
    /// event of the run that just returned, ns, measured on the monotonic
    /// clock by the benchmark's threads. `None` for a loop-timed operation.
    fn event_ns(&self) -> Option<u64> {
        None
    }
    /// What the operation observed over all its runs so far, read once
    /// after the timed phases.
    fn findings(&self) -> Option<Findings> {
        None
    }
}

/// An operation that does nothing: the loop overhead is timed against it.
pub struct NullOp;

impl Op for NullOp {
    fn run(&mut self) -> Result<(), ChannelError> {
        Ok(())
    }
}
