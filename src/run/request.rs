//! A run asked for in code: [`RunRequest`], what to measure (names or a
//! preset, the mode, sizes), where (CPUs, SCHED_FIFO, the peer), with what
//! budget, under what load, against which remote agent, and where the
//! report goes. `ipcmark run` builds one from its flags; a study (`explain`,
//! `map`, `selftest`, `advise --verify`, `mpi`) builds its own, starting
//! from [`RunRequest::default`], which is `ipcmark run` with no name and no
//! flag (a test in `cli` checks the two agree).
//!
//! The enums derive clap's `ValueEnum` so the command line parses them as
//! they are: their doc comments are the help of their values.

/// A source of figures that measures them itself (the MPI figures).
pub use crate::engine::run::session::External;
use crate::machine::environment::MpiJob;
use crate::record::map::MapSettingsRecord;
use clap::ValueEnum;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use super::values::{CpuLatency, CpuList, FrequencyList, LoadArg, LoadSweep, SizeList};
/// The offered rates of mode rate (`--rates`).
pub use crate::engine::models::rate::Rates;

/// How the echo server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeerChoice {
    /// A forked child process.
    Process,
    /// A thread of the measuring process.
    Thread,
}

/// How IPC mechanisms are timed (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// Round trips through an echo server; one-way = round trip / 2.
    Pingpong,
    /// Stamped messages one way, one in flight: saturated, or sporadic with --interval.
    Oneway,
    /// One direction as fast as it goes: MB/s, messages/s, CPU per message.
    Stream,
    /// One direction on a fixed schedule at each offered rate (--rates):
    /// latency from the intended send, the knee and the saturation rate.
    Rate,
}

impl RunMode {
    /// The mode's name on the command line (`--mode NAME`).
    pub fn name(self) -> &'static str {
        match self {
            RunMode::Pingpong => "pingpong",
            RunMode::Oneway => "oneway",
            RunMode::Stream => "stream",
            RunMode::Rate => "rate",
        }
    }
}

/// Which way a remote stream flows (`--direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StreamDirection {
    /// From this host to the agent.
    Send,
    /// From the agent to this host.
    Receive,
}

/// Faults for tests of the engine's checks (hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InjectedFault {
    /// The server flips the last byte of every message.
    Corrupt,
    /// The server exits after 20 messages.
    Die,
    /// The server stops answering after 20 messages.
    Hang,
    /// Every receive, on either end, writes nothing into the engine's buffer.
    Silent,
    /// The client's end is wired back to itself: it receives what it sent.
    Loopback,
    /// The client's two directions share one buffer, read before the reply lands.
    SharedBuffer,
    /// Score tests: the first thread runs one SCHED_FIFO priority above its
    /// peers (an unfair schedule the cooperative test's check must catch).
    Unfair,
}

/// How long a figure may measure and how precisely (the budget flags).
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The quick budget: fewer samples, shorter phases, 64 B only by default.
    pub quick: bool,
    /// Samples per figure, when fixed.
    pub samples: Option<u32>,
    /// Passes over the figures (default 3).
    pub passes: Option<u32>,
    /// The precision aimed at, percent of the median.
    pub precision: Option<f64>,
    /// The most a figure may measure for.
    pub max_time: Option<Duration>,
    /// The time one sample should take.
    pub sample_time: Option<Duration>,
    /// How long a peer may go without progress before the figure fails.
    pub timeout: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            quick: false,
            samples: None,
            passes: None,
            precision: None,
            max_time: None,
            sample_time: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// `--timeout`'s default: how long a peer may go without progress.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A stated load held while measuring.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Load {
    /// Its parts (`irq:…`, `cpu:…`, `net:…`), or none.
    pub spec: Option<LoadArg>,
    /// The CPUs it runs on (default: the measured ones).
    pub cpus: Option<CpuList>,
}

/// The timer group's period and duration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timer {
    /// The period of the periodic benchmarks.
    pub period: Option<Duration>,
    /// How long each periodic figure runs.
    pub duration: Option<Duration>,
}

/// Where a run's report goes besides the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sinks {
    /// The JSON report, written after every step.
    pub json: Option<PathBuf>,
    /// The CSV of the figures, written once the run is over.
    pub csv: Option<PathBuf>,
    /// Mode rate: the directory of the figures' HdrHistogram interval
    /// logs, written once the run is over.
    pub hdr: Option<PathBuf>,
    /// The history database (default: the user's).
    pub db: Option<PathBuf>,
    /// Keep the run out of the history.
    pub no_save: bool,
}

/// A run's figures placed on pairs of CPUs in turn (`ipcmark map`): one
/// level of the session per pair, each with its pages' NUMA home.
#[derive(Clone)]
pub struct Pairs {
    /// (client CPU, server CPU), in the order they are measured.
    pub pairs: Vec<(usize, usize)>,
    /// The NUMA node each pair's pages are preferred on, if any.
    pub homes: Vec<Option<usize>>,
    /// What the report records of the map.
    pub map: MapSettingsRecord,
}

impl std::fmt::Debug for Pairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pairs")
            .field("pairs", &self.pairs)
            .field("homes", &self.homes)
            .finish_non_exhaustive()
    }
}

/// Figures measured by a source of their own instead of the named items
/// (the MPI figures between ranks), placed by whoever started the job.
#[derive(Clone)]
pub struct ExternalFigures {
    /// The source, measured at the request's sizes.
    pub figures: Arc<dyn External>,
    /// What placed the sides, for the report's placement note.
    pub placed_by: String,
    /// The MPI job the figures span, for the environment record.
    pub mpi: Option<MpiJob>,
}

impl std::fmt::Debug for ExternalFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalFigures")
            .field("figures", &self.figures.id())
            .field("placed_by", &self.placed_by)
            .finish_non_exhaustive()
    }
}

/// Everything a run is asked to do.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// Mechanisms, benchmarks or groups (default: the ipc group).
    pub names: Vec<String>,
    /// A preset: a study's experiment as it was done.
    pub preset: Option<String>,
    /// How IPC mechanisms are timed (default: ping-pong).
    pub mode: Option<RunMode>,
    /// The address of the D-Bus bus the dbus mechanism uses.
    pub dbus_address: Option<String>,
    /// Message sizes (default: the mode's and budget's).
    pub sizes: Option<SizeList>,
    /// Every message from a buffer not in cache.
    pub cold: bool,
    /// CPUs for client and server.
    pub cpus: Option<CpuList>,
    /// Both sides on the first CPU of `cpus`.
    pub same_cpu: bool,
    /// SCHED_FIFO priority of both sides.
    pub rt: Option<i32>,
    /// The echo server as a process or a thread.
    pub peer: PeerChoice,
    /// The CPU wake-up latency asked for (default: 0 µs when permitted).
    pub cpu_latency: Option<CpuLatency>,
    /// The budget of each figure.
    pub budget: Budget,
    /// A load held while measuring.
    pub load: Load,
    /// One level per interrupt frequency (`--load-sweep`).
    pub load_sweep: Option<LoadSweep>,
    /// An agent to measure tcp and udp against (HOST[:PORT]).
    pub remote: Option<String>,
    /// The agent's CPU.
    pub remote_cpu: Option<usize>,
    /// Which way a remote stream flows.
    pub direction: Option<StreamDirection>,
    /// The link's speed, bits per second.
    pub link_speed: Option<u64>,
    /// The file holding the agent's token.
    pub token_file: Option<PathBuf>,
    /// The timer group's period and duration.
    pub timer: Timer,
    /// timer-failures: the fraction of a period that is a failure.
    pub tolerance: f64,
    /// timer-failures: the event frequencies, Hz.
    pub frequencies: FrequencyList,
    /// timer-irq-overhead: the timer interrupt's frequency, Hz.
    pub irq_frequency: f64,
    /// One-way: one message per interval (sporadic).
    pub interval: Option<Duration>,
    /// One-way: messages per window.
    pub window: Option<u64>,
    /// One-way: timed messages per figure.
    pub messages: Option<u64>,
    /// Rate: the offered rates (default: a sweep until saturation).
    pub rates: Option<Rates>,
    /// A fault injected in the peer (tests of ipcmark itself).
    pub fault: Option<InjectedFault>,
    /// Where the report goes.
    pub sinks: Sinks,
    /// Each figure measured on each of these pairs of CPUs in turn.
    pub pairs: Option<Pairs>,
    /// Figures from a source of their own instead of `names`.
    pub external: Option<ExternalFigures>,
}

/// timer-failures' default tolerance (a wake-up later than half the period fails).
pub const DEFAULT_TOLERANCE: f64 = 0.5;
/// timer-failures' default frequencies, Hz.
pub const DEFAULT_FREQUENCIES: [f64; 5] = [60.0, 250.0, 1000.0, 2000.0, 4000.0];
/// timer-irq-overhead's default interrupt frequency, Hz.
pub const DEFAULT_IRQ_FREQUENCY: f64 = 1000.0;

impl Default for RunRequest {
    /// `ipcmark run` with no name and no flag.
    fn default() -> Self {
        RunRequest {
            names: Vec::new(),
            preset: None,
            mode: None,
            dbus_address: None,
            sizes: None,
            cold: false,
            cpus: None,
            same_cpu: false,
            rt: None,
            peer: PeerChoice::Process,
            cpu_latency: None,
            budget: Budget::default(),
            load: Load::default(),
            load_sweep: None,
            remote: None,
            remote_cpu: None,
            direction: None,
            link_speed: None,
            token_file: None,
            timer: Timer::default(),
            tolerance: DEFAULT_TOLERANCE,
            frequencies: FrequencyList(DEFAULT_FREQUENCIES.to_vec()),
            irq_frequency: DEFAULT_IRQ_FREQUENCY,
            interval: None,
            window: None,
            messages: None,
            rates: None,
            fault: None,
            sinks: Sinks::default(),
            pairs: None,
            external: None,
        }
    }
}

impl RunRequest {
    /// The named items at `sizes`, everything else as `ipcmark run` has it.
    pub fn of(names: Vec<String>, sizes: Vec<usize>) -> RunRequest {
        RunRequest {
            names,
            sizes: Some(SizeList {
                sizes,
                sweep: false,
            }),
            ..RunRequest::default()
        }
    }
}
