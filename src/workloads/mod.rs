//! Whole workloads: small programs of several processes whose figure is a
//! count or a time for the whole program, after the OpenSSI study (dining
//! philosophers, a generator and a calculator talking over pipes, a shared
//! counter). One file per workload, one line each in [`REGISTRY`].
//!
//! A workload builds its shared objects, runs its processes as an
//! [`engine::group::Group`](crate::engine::os::group::Group) (which places,
//! starts, migrates, times and reaps them), checks its own results and
//! invariants, and returns a [`RunRecord`]. It never prints and never parses
//! arguments; the figures' tables and JSON come from the `output` layer.

mod common;
pub mod generator_calculator;
pub mod philosophers;
pub mod shared_counter;
pub mod title;

use crate::engine::os::group::{MemberReport, Migration};
use crate::engine::os::objects::ObjectNamer;
use std::time::Duration;

pub use common::LockKind;
pub use generator_calculator::MAX_VECTOR;
pub use philosophers::MAX_PHILOSOPHERS;

/// Every workload, in the order `ipcmark workload --help` lists them.
pub static REGISTRY: &[&dyn Workload] = &[
    &philosophers::Philosophers,
    &generator_calculator::GeneratorCalculator,
    &shared_counter::SharedCounter,
];

/// Finds a workload by id.
pub fn find(id: &str) -> Option<&'static dyn Workload> {
    REGISTRY.iter().copied().find(|w| w.info().id == id)
}

/// All ids, in registry order.
pub fn ids() -> Vec<&'static str> {
    REGISTRY.iter().map(|w| w.info().id).collect()
}

/// What a workload's headline figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headline {
    /// Operations completed by all processes in a fixed time: higher is better.
    Count,
    /// Time to complete a fixed amount of work: lower is better.
    Time,
}

/// A workload-specific option of `ipcmark workload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    /// `--duration`: length of a timed run.
    Duration,
    /// `--philosophers`.
    Philosophers,
    /// `--think`.
    Think,
    /// `--eat`.
    Eat,
    /// `--mechanism`: the synchronisation primitive.
    Mechanism,
    /// `--vector`: elements per vector.
    Vector,
    /// `--ops`: vectors to process.
    Ops,
    /// `--array`: size of the shared array.
    Array,
    /// `--threshold`: sum at which the counters stop.
    Threshold,
    /// `--pause`: sleep between passes.
    Pause,
}

impl Opt {
    /// The option as typed on the command line.
    pub fn flag(self) -> &'static str {
        match self {
            Opt::Duration => "--duration",
            Opt::Philosophers => "--philosophers",
            Opt::Think => "--think",
            Opt::Eat => "--eat",
            Opt::Mechanism => "--mechanism",
            Opt::Vector => "--vector",
            Opt::Ops => "--ops",
            Opt::Array => "--array",
            Opt::Threshold => "--threshold",
            Opt::Pause => "--pause",
        }
    }
}

/// Faults a workload can be told to inject so that tests can prove its checks
/// catch them. Never used by a normal run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Philosophers take their forks one at a time (lower-numbered first:
    /// deadlock-free, but a waiting philosopher holds one fork alone).
    SplitTake,
    /// Philosophers eat without taking their forks from the primitive (two
    /// neighbours then share a fork, which only the owner words show).
    SkipForks,
    /// One result is corrupted (a calculator's element, a doubled increment).
    Corrupt,
}

/// Static facts about a workload.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what runs.
    pub summary: &'static str,
    /// What one operation is ("meal", "vector", "pass"): the unit of
    /// `--migrate` and of the per-operation figures.
    pub operation: &'static str,
    /// Count or time.
    pub headline: Headline,
    /// The workload-specific options it takes.
    pub options: &'static [Opt],
    /// The faults it can inject.
    pub faults: &'static [Fault],
}

/// The workload-specific settings given on the command line (`None`: the
/// workload's default). Values are already syntactically valid; each workload
/// checks what only it can (limits, combinations).
#[derive(Debug, Clone, Default)]
pub struct Params {
    /// Length of a timed run.
    pub duration: Option<Duration>,
    /// Number of philosophers.
    pub philosophers: Option<usize>,
    /// Thinking time between meals.
    pub think: Option<Duration>,
    /// Eating time (as an amount of CPU work).
    pub eat: Option<Duration>,
    /// Synchronisation primitive.
    pub mechanism: Option<LockKind>,
    /// Elements per vector.
    pub vector: Option<usize>,
    /// Vectors to process.
    pub ops: Option<u64>,
    /// Shared array size in bytes.
    pub array_bytes: Option<usize>,
    /// Sum at which the counters stop.
    pub threshold: Option<u64>,
    /// Sleep after each pass, outside the lock.
    pub pause: Option<Duration>,
    /// Test-only fault.
    pub fault: Option<Fault>,
}

/// Where the processes of one run go.
pub struct RunContext<'a> {
    /// One CPU per process (`None`: not pinned).
    pub cpus: &'a [Option<usize>],
    /// One migration plan per process.
    pub migrations: &'a [Option<Migration>],
    /// Names and keys for OS objects.
    pub names: &'a ObjectNamer,
    /// How long any wait may last without progress (see `GroupSpec::timeout`).
    pub timeout: Duration,
}

/// One process of a finished run.
#[derive(Debug, Clone)]
pub struct ProcessRecord {
    /// Its role, e.g. "philosopher 2" or "calculator".
    pub role: String,
    /// Across MPI ranks: its rank, whose node is in [`RunRecord::places`].
    pub rank: Option<usize>,
    /// What the engine recorded: CPUs, migrations, operations, time.
    pub report: MemberReport,
    /// The workload's own counters, named.
    pub counters: Vec<(&'static str, u64)>,
}

/// Where one process of a run across MPI ranks ran: its node, as the
/// study's tables named it. Local runs have none (their CPUs are in the
/// processes' reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The MPI rank.
    pub rank: usize,
    /// What the rank did ("generator", "arbiter", "idle"…).
    pub role: String,
    /// The node's host name.
    pub host: String,
    /// The node's number: nodes numbered by first appearance in rank order.
    pub node: usize,
    /// The process id on its node.
    pub pid: u32,
    /// The CPUs the launcher bound it to (every CPU when it bound nothing).
    pub allowed_cpus: Vec<usize>,
    /// The CPU it was on when the run started.
    pub cpu: Option<usize>,
}

/// Across MPI ranks: the rank playing one role of a configuration (one
/// `--place` item), and its node, so the configuration reads as the study's
/// ("same node", "other node").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CastRole {
    /// The role ("generator", "calculator", "holds the array"…).
    pub role: String,
    /// The MPI rank playing it.
    pub rank: usize,
    /// Its node's number, by first appearance in rank order.
    pub node: usize,
    /// Its node's host name.
    pub host: String,
}

/// One finished run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// From the start barrier to the last process finishing, ns.
    pub elapsed_ns: u64,
    /// For timed runs: from the start barrier to the stop, ns.
    pub stopped_after_ns: Option<u64>,
    /// The headline figure: operations ([`Headline::Count`]) or ns ([`Headline::Time`]).
    pub figure: f64,
    /// Every process.
    pub processes: Vec<ProcessRecord>,
    /// Run-level figures, named (totals, fairness, the verified final sum…).
    pub metrics: Vec<(&'static str, f64)>,
    /// Across MPI ranks: every rank's node and CPU, in rank order (empty
    /// for a local run).
    pub places: Vec<Place>,
}

/// Why a run produced no figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// SIGINT, SIGTERM or SIGHUP: stop the whole command.
    Interrupted(&'static str),
    /// Set-up failed, a process failed or hung, or a check failed.
    Failed(String),
}

/// A workload with its settings resolved and checked, ready to run.
pub trait Prepared {
    /// One label per process, e.g. "philosopher 1" … or "generator", "calculator".
    fn roles(&self) -> Vec<String>;
    /// The resolved settings, for the JSON report.
    fn parameters(&self) -> serde_json::Value;
    /// The fixed length of a run, for workloads whose figure is a count.
    fn duration(&self) -> Option<Duration>;
    /// Runs once in the given placement.
    fn run(&self, ctx: &RunContext) -> Result<RunRecord, RunError>;
}

/// A workload.
pub trait Workload: Sync {
    /// Static description.
    fn info(&self) -> WorkloadInfo;
    /// Resolves defaults and checks the settings; an error is a usage error
    /// (one line, without the "ipcmark: " prefix).
    fn prepare(&self, params: &Params) -> Result<Box<dyn Prepared>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for w in REGISTRY {
            let info = w.info();
            assert!(seen.insert(info.id), "duplicate id {}", info.id);
            assert!(
                info.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                info.id
            );
            assert!(!info.summary.is_empty() && !info.operation.is_empty());
        }
    }

    #[test]
    fn every_workload_prepares_with_defaults_and_names_its_processes() {
        let _keys = crate::engine::os::objects::sysv_test_lock();
        for w in REGISTRY {
            let p = w.prepare(&Params::default()).expect("defaults are valid");
            let roles = p.roles();
            assert!(roles.len() >= 2, "{}: {roles:?}", w.info().id);
            let unique: HashSet<_> = roles.iter().collect();
            assert_eq!(unique.len(), roles.len(), "{}: {roles:?}", w.info().id);
            assert!(p.parameters().is_object());
            assert_eq!(
                p.duration().is_some(),
                w.info().headline == Headline::Count,
                "{}: only counted workloads are timed",
                w.info().id
            );
        }
    }

    #[test]
    fn docs_describe_every_workload() {
        let docs =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/workloads.md"))
                .expect("docs/workloads.md");
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        for id in ids() {
            assert!(
                docs.contains(&format!("## `{id}`")),
                "docs/workloads.md has no section for {id}"
            );
            assert!(
                readme.contains(&format!("ipcmark workload {id}")),
                "README.md shows no usage of {id}"
            );
        }
    }
}
