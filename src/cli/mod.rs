//! The command line: arguments, validation, and the commands that tie the
//! registry, the engine and the output together.

mod advise;
mod check;
mod clean;
mod compare;
mod completions;
mod doctor;
mod explain;
mod flags;
mod fleet;
mod generated;
mod history;
mod list;
mod man;
mod map;
#[cfg(feature = "mpi")]
mod mpi;
mod report;
mod run;
mod selftest;
mod serve;
mod tax;
#[cfg(test)]
pub(crate) mod test_support;
mod testbed;
mod watch;
mod workload;

pub(crate) use crate::output::terminal::say;
pub use crate::run::Failure;
use crate::run::failure::check_output_path;
use crate::run::request::{InjectedFault, PeerChoice, RunMode, RunRequest, StreamDirection};
/// The command line's value parsers are the request's (`run::values`).
pub use crate::run::values as parse;
use clap::{Args, Parser, Subcommand, ValueEnum};
use flags::heading;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Measures what the operating system's IPC and synchronisation primitives cost.
// The version names the commit and the features, so that a bug report
// identifies the exact build (see `output::json::build`). The doc comment
// above is the about line (a bare `about` would take Cargo.toml's
// description instead).
#[derive(Debug, Parser)]
#[command(
    name = "ipcmark",
    version = crate::output::json::build::VERSION_LINE,
    propagate_version = true,
    subcommand_value_name = "COMMAND"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run benchmarks (the IPC mechanisms by default) and print a table.
    Run(Box<RunArgs>),
    /// List every mechanism and benchmark with what it measures and its limits.
    List(ListArgs),
    /// Remove OS objects left behind by ipcmark runs that were killed.
    Clean,
    /// Check whether this machine is fit to measure on: frequency, SMT,
    /// isolation, interrupts, steal, clock, quotas, pressure, load, idle
    /// states…, each with what it found, what it costs here and the fix.
    Doctor(doctor::DoctorArgs),
    /// Compare two runs (from the history, or `run --json` reports):
    /// medians, difference, significance; or two `tax --json` reports:
    /// each layer's cost in one against the other.
    Compare(CompareArgs),
    /// Find where the history's figures changed level (change points by
    /// E-divisive means and a t test, as Apache Otava), grouped by run, with
    /// what changed on the machine beside them.
    Watch(watch::WatchArgs),
    /// A gate for CI: exit 1 when a figure of RUN is significantly slower than
    /// in BASELINE by more than --max-regression, beyond the machine's common shift.
    Check(check::CheckArgs),
    /// Rank the mechanisms measured on this host for a stated need (a
    /// message size and bounds on p50, p99, rate, CPU per message), each
    /// prediction with the run it came from; --verify measures the top two.
    Advise(advise::AdviseArgs),
    /// Test compare's test on this machine: A/A pairs of a short suite run
    /// back to back, its false-positive rate against α and the machine's
    /// run-to-run shift (exit 1 when the rate is over α + 2 points).
    Selftest(selftest::SelftestArgs),
    /// What isolation costs: the same figures bare and under each layer a
    /// container applies (a cgroup, a CPU quota, seccomp filters,
    /// namespaces, speculation controls, all at once), passes interleaved,
    /// each layer's difference per figure with its interval.
    Tax(tax::TaxArgs),
    /// Which hosts of a fleet are not like the others, and why: the newest
    /// run of each host (report files, or the history), hosts grouped by
    /// class of machine, each host's ratio to its class's median per
    /// figure, the outliers and the settings in which they differ.
    Fleet(fleet::FleetArgs),
    /// Write an offline HTML report of runs: charts against message size,
    /// latency distributions, the comparison of two runs, the environment.
    Report(report::ReportArgs),
    /// Run a whole workload of several processes (philosophers,
    /// generator-calculator, shared-counter) in one or more placements.
    #[command(after_help = workload::after_help())]
    Workload(Box<workload::WorkloadArgs>),
    /// Print a shell completion script (bash, zsh, fish) for ipcmark's
    /// commands, flags and the names of its mechanisms, benchmarks, groups,
    /// presets and workloads.
    #[command(after_help = completions::AFTER_HELP)]
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff) to standard output: `ipcmark man | man -l -`.
    Man,
    /// Where a ping-pong figure's round trip goes: each figure measured as
    /// `run` does, then a separate traced pass cut into parts (user time,
    /// system calls by name, the wake-up's idle exit, run-queue wait and
    /// interrupts, a residual) from the kernel's tracepoints (root).
    Explain(Box<explain::ExplainArgs>),
    /// Map what a ping-pong costs between every pair of CPUs: a matrix per
    /// mechanism in topology order, and each class's (same core, same
    /// last-level cache, other node, …) median.
    Map(Box<map::MapArgs>),
    /// List the runs kept in the history, or delete some (--prune).
    History(history::HistoryArgs),
    /// Print a stored run's page (or a JSON report's).
    Show(history::ShowArgs),
    /// Write a stored run as its JSON report or as CSV.
    Export(history::ExportArgs),
    /// Add JSON reports (`run --json`, `workload --json`) to the history.
    Import(history::ImportArgs),
    /// Make or remove a two-host testbed on this machine: two network
    /// namespaces joined by a veth pair shaped to a link speed (10 Mbit/s).
    Testbed(testbed::TestbedArgs),
    /// Run the agent that remote figures (`run --remote`) measure against,
    /// on the far host: one client at a time, loopback only unless given a
    /// token (--token-file).
    Serve(serve::ServeArgs),
    /// Open one session with an agent and close it (tests, firewalls).
    #[command(hide = true)]
    AgentCheck(serve::AgentCheckArgs),
    /// Figures between the ranks of an MPI job: run under `mpirun -n 2`
    /// (or `srun`); rank 0 prints and saves them.
    #[cfg(feature = "mpi")]
    Mpi(mpi::MpiArgs),
}

/// Arguments of `ipcmark compare`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::COMPARE_HELP)))]
#[command(mut_arg("export_junit", |a| a.help(flags::Junit::COMPARE_HELP)))]
pub struct CompareArgs {
    /// The baseline: a run of the history (an id, `last`, `last~N`, `last@HOST`) or a
    /// JSON report.
    #[arg(value_name = "A", value_hint = clap::ValueHint::FilePath)]
    a: String,
    /// The run compared with it, named the same ways.
    #[arg(value_name = "B", value_hint = clap::ValueHint::FilePath)]
    b: String,
    #[command(flatten)]
    db: flags::Db,
    #[command(flatten)]
    alpha: flags::Alpha,
    #[command(flatten)]
    json: flags::Json,
    #[command(flatten)]
    dashboards: flags::Dashboards,
    #[command(flatten)]
    junit: flags::Junit,
}

/// Arguments of `ipcmark list`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::JsonStdout::LIST_HELP)))]
pub struct ListArgs {
    /// What to list: everything that can run (default), or the presets.
    #[arg(value_enum)]
    what: Option<ListWhat>,
    #[command(flatten)]
    json: flags::JsonStdout,
}

/// What `ipcmark list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Mechanisms, benchmarks and groups.
    Benchmarks,
    /// Ready-made runs reproducing the studies' experiments.
    Presets,
}

/// Arguments of `ipcmark run`, under the headings of [`flags::heading`]:
/// the groups other commands share are flattened from [`flags`], the flags
/// only `run` has are declared here, each with its heading.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Mechanisms, benchmarks or groups to run (ipc, syscall, sched, timer,
    /// thread-metric, rtos, all; default: ipc).
    /// See `ipcmark list`.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Run a study's experiment as it was done (see `ipcmark list presets`).
    #[arg(long, value_name = "NAME", help_heading = heading::SELECTION)]
    preset: Option<String>,
    /// How IPC mechanisms are timed: pingpong (default: one-way latency from
    /// round trips), oneway (a CLOCK_MONOTONIC stamp in each message, latency
    /// computed by the receiver), stream (throughput one way) or rate
    /// (latency under an offered load: messages on a fixed schedule at each
    /// rate of --rates, timed from their intended send).
    #[arg(long, value_enum, value_name = "MODE", help_heading = heading::SELECTION)]
    mode: Option<RunMode>,
    #[command(flatten)]
    dbus: flags::DbusBus,
    #[command(flatten)]
    sizes: flags::Sizes,
    /// Give every message a buffer not in cache: each message uses the next
    /// slot of a region twice the size of the last-level cache.
    #[arg(long, help_heading = heading::SIZES)]
    cold: bool,
    #[command(flatten)]
    pair: flags::Pair,
    /// Run the echo server as a forked process or a thread.
    #[arg(long, value_enum, default_value_t = PeerChoice::Process, help_heading = heading::PLACEMENT)]
    peer: PeerChoice,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten)]
    output: flags::Output,
    /// Also write the results as CSV to this file, one row per figure.
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath,
          help_heading = heading::OUTPUT)]
    csv: Option<PathBuf>,
    #[command(flatten, next_help_heading = heading::OUTPUT)]
    export: flags::Dashboards,
    #[command(flatten)]
    load: flags::Load,
    /// Measure the selected benchmarks once per level: under --load alone
    /// (none without it), then with an interrupt source at each frequency
    /// added (irq:60,250,1000,2000,4000); one table per benchmark with the
    /// levels as columns.
    #[arg(long, value_name = "irq:F1,F2,…", value_parser = parse::load_sweep_arg,
          help_heading = heading::LOAD)]
    load_sweep: Option<parse::LoadSweep>,
    /// Measure tcp and udp against `ipcmark serve` on another host
    /// (HOST[:PORT], port 7878 by default): ping-pong, --mode stream or
    /// oneway, each figure with the fraction of the link's best it reached.
    #[arg(long, value_name = "HOST[:PORT]", help_heading = heading::REMOTE)]
    remote: Option<String>,
    /// With --remote: the CPU the agent's side of each figure runs on.
    #[arg(long, value_name = "CPU", requires = "remote", help_heading = heading::REMOTE)]
    remote_cpu: Option<usize>,
    /// With --remote --mode stream: send (to the agent, the default) or
    /// receive (from it).
    #[arg(long, value_enum, requires = "remote", help_heading = heading::REMOTE)]
    direction: Option<StreamDirection>,
    /// With --remote: the link's speed in bits per second (10M, 1G), when
    /// the route's interface does not give it or gives the wrong one.
    #[arg(long, value_name = "RATE", requires = "remote",
          value_parser = crate::remote::link::parse_rate, help_heading = heading::REMOTE)]
    link_speed: Option<u64>,
    /// With --remote: the file holding the secret the agent was started
    /// with (`serve --token-file`); it never goes on the wire.
    #[arg(long, value_name = "FILE", requires = "remote",
          value_hint = clap::ValueHint::FilePath, help_heading = heading::REMOTE)]
    token_file: Option<PathBuf>,
    #[command(flatten)]
    timer: flags::Timer,
    /// timer-failures: a wake-up later than this fraction of the period is a
    /// failure (above 0, at most 1).
    #[arg(long, value_name = "FRACTION", value_parser = parse::tolerance,
          default_value = "0.5", allow_negative_numbers = true, help_heading = heading::TIMER)]
    tolerance: f64,
    /// timer-failures: event frequencies in Hz, comma-separated.
    #[arg(long, value_name = "LIST", value_parser = parse::frequency_list_arg,
          default_value = "60,250,1000,2000,4000", allow_negative_numbers = true,
          help_heading = heading::TIMER)]
    frequencies: parse::FrequencyList,
    /// timer-irq-overhead: frequency of the timer interrupt, Hz.
    #[arg(long, value_name = "HZ", value_parser = parse::frequency,
          default_value = "1000", allow_negative_numbers = true, help_heading = heading::TIMER)]
    irq_frequency: f64,
    /// Mode oneway: send one message per interval (sporadic, e.g. 1s, 10ms,
    /// 100us; at most 60s); without it, saturated.
    #[arg(long, value_name = "DURATION", value_parser = parse::interval,
          allow_hyphen_values = true, help_heading = heading::ONE_WAY)]
    interval: Option<Duration>,
    /// Mode oneway: messages per window of min / max / mean (default 100000;
    /// --quick 10000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000_000),
          help_heading = heading::ONE_WAY)]
    window: Option<u64>,
    /// Mode oneway: timed messages per figure (default: saturated 3 windows,
    /// --quick 2; sporadic 30, --quick 10). Saturated stops after 60 s
    /// (--quick 10 s) even if fewer were sent. At most 10 000 000 (with
    /// --remote 795 794: the agent's report of one stamp each must fit a
    /// control frame). Mode rate: timed messages of every offered rate (at
    /// most 4 000 000; default: 0.25 s of sending, --quick 0.1 s, at least
    /// 2000, --quick 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000),
          help_heading = heading::ONE_WAY)]
    messages: Option<u64>,
    /// Mode rate: the offered rates, messages a second, comma-separated, each
    /// with an optional k or M (e.g. 1k,10k,250k,1.5M; at most 16.384M); or
    /// sweep (the default): 1k, doubling until the channel saturates, then
    /// one rate between the two around the knee.
    #[arg(long, value_name = "LIST|sweep", value_parser = parse::rates_arg,
          help_heading = heading::RATE)]
    rates: Option<crate::run::request::Rates>,
    /// Mode rate: also write one HdrHistogram interval log per figure into
    /// this directory (MECHANISM-SIZE.hlog; each offered rate of each round
    /// two intervals, latency-rROUND-RATE from the intended send and
    /// service-rROUND-RATE from the actual send, in ns), for HdrHistogram's
    /// own log tools.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath,
          help_heading = heading::RATE)]
    hdr: Option<PathBuf>,
    /// Inject a fault in the echo server (for testing ipcmark itself).
    #[arg(long, value_enum, hide = true)]
    fault: Option<InjectedFault>,
}

impl RunArgs {
    /// The request these arguments stand for, and how its page is printed.
    fn into_request(self) -> (RunRequest, run::Printing) {
        let printing = run::Printing {
            long: self.output.long,
            quiet: false,
        };
        let mut request = RunRequest {
            names: self.names,
            preset: self.preset,
            mode: self.mode,
            dbus_address: self.dbus.address,
            sizes: self.sizes.list,
            cold: self.cold,
            cpus: self.pair.cpus,
            same_cpu: self.pair.same_cpu,
            rt: self.pair.rt,
            peer: self.peer,
            cpu_latency: self.cpu_latency.limit,
            budget: self.budget.into_request(),
            load: self.load.into_request(),
            load_sweep: self.load_sweep,
            remote: self.remote,
            remote_cpu: self.remote_cpu,
            direction: self.direction,
            link_speed: self.link_speed,
            token_file: self.token_file,
            timer: self.timer.into_request(),
            tolerance: self.tolerance,
            frequencies: self.frequencies,
            irq_frequency: self.irq_frequency,
            interval: self.interval,
            window: self.window,
            messages: self.messages,
            rates: self.rates,
            fault: self.fault,
            ..RunRequest::default()
        };
        self.output.into_sinks(&mut request.sinks);
        request.sinks.csv = self.csv;
        request.sinks.hdr = self.hdr;
        (request, printing)
    }
}

/// Parses the command line and runs the command; returns the exit code.
pub fn main() -> ExitCode {
    #[cfg(not(feature = "mpi"))]
    if std::env::args_os().nth(1).is_some_and(|a| a == "mpi") {
        crate::cli::say(format_args!(
            "ipcmark: built without MPI: cargo build --release --features mpi"
        ));
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    let outcome = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::List(args) => list::list(args),
        Command::Clean => clean::clean(),
        Command::Doctor(args) => doctor::doctor(args),
        Command::Compare(args) => compare::compare(args),
        Command::Watch(args) => watch::watch(args),
        Command::Check(args) => check::check(args),
        Command::Advise(args) => advise::advise(args),
        Command::Selftest(args) => selftest::selftest(args),
        Command::Tax(args) => tax::tax(args),
        Command::Fleet(args) => fleet::fleet(args),
        Command::Report(args) => report::report(args),
        Command::Workload(args) => workload::workload(*args),
        Command::Completions(args) => completions::completions(args),
        Command::Man => man::man(),
        Command::Map(args) => map::map(*args),
        Command::Explain(args) => explain::explain(*args),
        Command::History(args) => history::history(args),
        Command::Show(args) => history::show(args),
        Command::Export(args) => history::export(args),
        Command::Import(args) => history::import(args),
        Command::Testbed(args) => testbed::testbed(args),
        Command::Serve(args) => serve::serve(args),
        Command::AgentCheck(args) => serve::agent_check(args),
        #[cfg(feature = "mpi")]
        Command::Mpi(args) => mpi::mpi(args),
    };
    // Whatever a release could not remove is named, whatever the outcome.
    for what in crate::engine::os::objects::take_left_behind() {
        crate::cli::say(format_args!(
            "ipcmark: warning: could not remove {what}; remove it by hand \
             (or with `ipcmark clean` once this run has ended)"
        ));
    }
    match outcome {
        Ok(code) => code,
        Err(f) => {
            crate::cli::say(format_args!("ipcmark: {}", f.message));
            ExitCode::from(f.code)
        }
    }
}

/// Prints clap's help and version as usual, and any other error as one line.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            // clap's message may continue on indented lines (the missing
            // argument's name, say) before a blank line and the usage: keep
            // all of it, on one line.
            let rendered = e.render().to_string();
            let message: Vec<&str> = rendered
                .lines()
                .skip_while(|l| l.trim().is_empty())
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let joined = message.join(" ");
            let first = joined.trim_start_matches("error: ");
            let first = if first.is_empty() {
                "invalid arguments"
            } else {
                first
            };
            crate::cli::say(format_args!("ipcmark: {first} (see ipcmark --help)"));
            ExitCode::from(2)
        }
    }
}

/// Writes to stdout; a closed pipe (`ipcmark list | head`) is not an error.
pub fn print_stdout(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::run(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::run_request;

    /// `RunRequest::default()` is what `ipcmark run` with no name and no
    /// flag asks for: the studies start from it, so a default changed in
    /// one place and not the other fails here.
    #[test]
    fn the_default_request_is_run_with_no_flag() {
        let parsed = run_request(&[]).expect("`ipcmark run` parses");
        assert_eq!(
            format!("{parsed:?}"),
            format!("{:?}", RunRequest::default())
        );
        // And a flag reaches the request.
        let quick = run_request(&["--quick", "--timeout", "7s", "pipe"]).unwrap();
        assert!(quick.budget.quick);
        assert_eq!(quick.budget.timeout, Duration::from_secs(7));
        assert_eq!(quick.names, vec!["pipe".to_string()]);
    }
}
