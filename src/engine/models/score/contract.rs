//! What a benchmark of the score model implements ([`Scored`]) and the
//! settings a score figure runs under.
//!
//! A benchmark describes its threads (name, priority, whether it starts
//! ready, the loop it runs), the counters they bump, which counters make the
//! score, an optional interrupt routine and the check its reporter makes on
//! the counters; it never times anything. Its priorities are its own scale:
//! [`ScoreInfo::fifo_priority`] says which SCHED_FIFO priority each stands
//! for, so the engine applies them without knowing the benchmark.

use super::board::{Board, End};
use crate::engine::os::objects::ObjectNamer;
use std::time::Duration;

/// Static facts about a benchmark of the score model, shown by `ipcmark list`.
#[derive(Debug, Clone, Copy)]
pub struct ScoreInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what it measures.
    pub summary: &'static str,
    /// Group it belongs to (`thread-metric`).
    pub group: &'static str,
    /// What one operation of the score is.
    pub operation: &'static str,
    /// The test every other score of the run is normalised by (R = S / H).
    pub is_baseline: bool,
    /// Whether the test means anything only under strict priorities
    /// (SCHED_FIFO): without them it is skipped with the reason.
    pub needs_fifo: bool,
    /// The SCHED_FIFO priority a thread of the given [`ThreadSpec::priority`]
    /// runs at. It must keep every thread below [`REPORTER_FIFO`], or the
    /// reporter could not read the counters while no test thread runs.
    pub fifo_priority: fn(u8) -> i32,
}

/// What a benchmark may use to build its test.
pub struct ScoreContext<'a> {
    /// Names for OS objects (`ipcmark-<pid>-…`).
    pub names: &'a ObjectNamer,
}

/// A thread's loop: runs until [`Board::running`] says stop.
pub type Body = Box<dyn FnOnce(&Board) -> Result<(), End> + Send>;

/// An interrupt service routine, run in signal context on the thread that
/// raised the interrupt: atomics and async-signal-safe calls only.
pub type Routine = Box<dyn Fn(&Board) + Send + Sync>;

/// Boxes a thread's loop (the closure's signature is deduced from the bound).
pub fn body(f: impl FnOnce(&Board) -> Result<(), End> + Send + 'static) -> Body {
    Box::new(f)
}

/// Boxes an interrupt routine.
pub fn routine(f: impl Fn(&Board) + Send + Sync + 'static) -> Routine {
    Box::new(f)
}

/// One thread of a test.
pub struct ThreadSpec {
    /// Name in reports ("thread 0").
    pub name: &'static str,
    /// The benchmark's own priority (Thread-Metric: 1, most urgent, to 31),
    /// recorded as is; [`ScoreInfo::fifo_priority`] maps it to SCHED_FIFO.
    /// The reporter is above all.
    pub priority: u8,
    /// Whether it starts ready (`tm_thread_resume` at initialisation) or
    /// suspended until another thread or the interrupt routine resumes it.
    pub ready: bool,
    /// What it runs.
    pub body: Body,
}

/// The check the reporter makes on the counters at every report, as in
/// Thread-Metric's reporting threads.
#[derive(Clone, Copy)]
pub struct Check {
    /// What it checks, for the report.
    pub description: &'static str,
    /// Ok, or what is wrong, given every counter (in declaration order).
    pub test: fn(&[u64]) -> Result<(), String>,
}

/// One test, built by [`Scored::prepare`] for one figure.
pub struct ScoreTest {
    /// Its threads (index = position, used by [`Board::suspend`] / [`Board::resume`]).
    pub threads: Vec<ThreadSpec>,
    /// Names of its counters (index = position, used by [`Board::count`]).
    pub counters: &'static [&'static str],
    /// The counters whose sum is the score.
    pub score: &'static [usize],
    /// The interrupt routine, if the test raises interrupts ([`Board::interrupt`]).
    pub routine: Option<Routine>,
    /// The reporter's check on the counters, if any.
    pub check: Option<Check>,
}

/// A benchmark of the score model: it describes its test, the engine runs it.
pub trait Scored: Sync {
    /// Static description.
    fn info(&self) -> ScoreInfo;
    /// Builds the test: its OS objects and its threads' loops.
    fn prepare(&self, ctx: &ScoreContext) -> Result<ScoreTest, String>;
}

/// The settings a score figure runs under.
#[derive(Debug, Clone)]
pub struct ScoreSettings {
    /// The counting period.
    pub period: Duration,
    /// Reports within the period (Thread-Metric reports once per period).
    pub intervals: usize,
    /// CPU every thread of the test runs on.
    pub cpu: Option<usize>,
    /// Whether the threads run under SCHED_FIFO with their priorities.
    pub fifo: bool,
    /// How long threads may take to become ready or to stop.
    pub timeout: Duration,
    /// Test-only fault: the first thread runs one priority above its peers.
    pub unfair: bool,
}

/// Reports a period is cut into by default: enough for a spread, few
/// enough that the reporter's wake-ups cost nothing measurable.
pub const INTERVALS: usize = 5;

/// SCHED_FIFO priority of the reporter (the measuring thread): above every
/// test thread, as Thread-Metric's reporting thread (priority 2) is.
pub const REPORTER_FIFO: i32 = 50;
