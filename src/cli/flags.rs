//! The flags several commands share, each declared once, and the help
//! headings every command's flags are listed under (after ripgrep's
//! `doc_category()`): `--help`, the man page and the completions all come
//! from these definitions, so a flag reads the same wherever it appears.
//!
//! A group is a `#[derive(Args)]` struct that commands `#[command(flatten)]`.
//! Its help text is written to hold for every command that takes it; where
//! one command means something narrower (`compare --json`) or waits longer
//! (`mpi --timeout 30s`), that command rewords the help (with the wording
//! kept here, beside the flag's own) or sets the default with
//! `#[command(mut_arg(ID, …))]` rather than declaring the flag again, so the
//! name, the type and the parser stay one.
//!
//! clap keeps the heading a flatten sets for the fields after it, so a
//! command gives each of its own fields an explicit `help_heading`.

use super::parse;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The headings, in the order `ipcmark run --help` lists them.
pub mod heading {
    /// What is measured and how: a preset, the timing mode.
    pub const SELECTION: &str = "Selection";
    /// Message sizes and buffers.
    pub const SIZES: &str = "Sizes";
    /// CPUs, scheduling and the peer; the CPU wake-up latency held.
    pub const PLACEMENT: &str = "Placement";
    /// How long and how precisely each figure is sampled, and how long a
    /// stalled peer is waited for.
    pub const BUDGET: &str = "Budget";
    /// Where the results go: files, the page, the history.
    pub const OUTPUT: &str = "Output and history";
    /// A load held while measuring.
    pub const LOAD: &str = "Load";
    /// Figures against an agent on another host.
    pub const REMOTE: &str = "Remote";
    /// Options of the timer group (and thread-metric's period).
    pub const TIMER: &str = "Timer group";
    /// Options of `--mode oneway`.
    pub const ONE_WAY: &str = "One-way";
    /// Options of `--mode rate`.
    pub const RATE: &str = "Rate";
    /// A workload's own parameters (`ipcmark workload`).
    pub const WORKLOAD: &str = "Workload parameters";
}

/// `--dbus-address`: the bus the `dbus` mechanism calls through.
#[derive(Debug, Clone, Default, Args)]
pub struct DbusBus {
    /// The D-Bus bus the dbus mechanism's calls go through (unix:path=… or
    /// unix:abstract=…, as in $DBUS_SESSION_BUS_ADDRESS); default: a private
    /// dbus-daemon that ipcmark starts and stops for each figure.
    #[arg(long = "dbus-address", value_name = "ADDRESS", help_heading = heading::SELECTION)]
    pub address: Option<String>,
}

/// `--db`: the history database a command reads or saves runs in.
#[derive(Debug, Clone, Default, Args)]
pub struct Db {
    /// The history database (default: $XDG_DATA_HOME/ipcmark/history.sqlite,
    /// see `ipcmark history`).
    #[arg(id = "db", long = "db", value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub path: Option<PathBuf>,
}

impl Db {
    /// The path given, if any.
    pub fn as_deref(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }
}

/// `--db` and `--no-save`: where a command that measures saves its run.
#[derive(Debug, Clone, Default, Args)]
pub struct Save {
    #[command(flatten)]
    pub db: Db,
    /// Do not save this run in the history.
    #[arg(long, conflicts_with = "db")]
    pub no_save: bool,
}

/// `--selftest-runs`: whether the runs `ipcmark selftest` made are read
/// (`watch`, `advise`). Left out by default: they are real figures of the
/// host, but at a short budget, and a selftest makes forty in minutes.
#[derive(Debug, Clone, Default, Args)]
pub struct SelftestRuns {
    /// Also read the runs `ipcmark selftest` made (left out by default:
    /// --quick budgets, many runs in a few minutes).
    #[arg(id = "selftest-runs", long = "selftest-runs")]
    pub include: bool,
}

/// `--json FILE`: the report written as JSON.
#[derive(Debug, Clone, Default, Args)]
pub struct Json {
    /// Write the results as JSON to this file, rewritten after each figure
    /// (or workload run), so an interrupted command keeps what it measured.
    #[arg(id = "json", long = "json", value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub path: Option<PathBuf>,
}

impl Json {
    /// `compare --json`: the comparison, written once.
    pub const COMPARE_HELP: &str = "Also write the comparison as JSON to this file";
    /// `watch --json`: the change points, written once.
    pub const WATCH_HELP: &str =
        "Also write the change points and their groups as JSON (ipcmark.watch/1) to this file";
    /// `advise --json`: the ranking, written once.
    pub const ADVISE_HELP: &str = "Also write the ranking and where each prediction came from as JSON (ipcmark.advise/1) to this file";
    /// `check --json`: the verdict, written once.
    pub const CHECK_HELP: &str =
        "Also write the check as JSON (ipcmark.check/1) to this file, whatever its verdict";
    /// `tax --json`: the ledger, written once at the end.
    pub const TAX_HELP: &str = "Also write the ledger as JSON (ipcmark.tax/1) to this file (when stopped, with the passes done)";
    /// `fleet --json`: the fleet, written once.
    pub const FLEET_HELP: &str = "Also write the fleet (its classes, each host's ratios, the outliers and their settings) as JSON (ipcmark.fleet/1) to this file";
    /// `selftest --json`: its record, written once at the end.
    pub const SELFTEST_HELP: &str = "Also write the selftest as JSON (ipcmark.selftest/1) to this file, whatever its verdict (and when stopped, with the pairs done)";
}

/// `--export-bmf` and `--export-gab`: the figures as dashboards read them
/// (`run`, `compare`, `check`, `watch`), each file written once, at the end.
#[derive(Debug, Clone, Default, Args)]
pub struct Dashboards {
    /// Also write the figures (compare: B's, check: RUN's, watch: each
    /// series' newest) as Bencher Metric Format JSON to this file
    /// (`bencher run --adapter json --file FILE`): each figure named by its
    /// identity (pipe/pingpong/64), its latency in ns with the 95% interval
    /// of its median, a stream figure's throughput in messages a second.
    #[arg(id = "export_bmf", long = "export-bmf", value_name = "FILE",
          value_hint = clap::ValueHint::FilePath)]
    pub bmf: Option<PathBuf>,
    /// Also write the same figures' latencies as github-action-benchmark's
    /// customSmallerIsBetter JSON to this file (`tool: customSmallerIsBetter`):
    /// name, unit ns, value, range (± the interval of the median), extra.
    #[arg(id = "export_gab", long = "export-gab", value_name = "FILE",
          value_hint = clap::ValueHint::FilePath)]
    pub gab: Option<PathBuf>,
}

impl Dashboards {
    /// Whether a file was asked for.
    pub fn any(&self) -> bool {
        self.bmf.is_some() || self.gab.is_some()
    }

    /// The flags given, by name.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.bmf.is_some() {
            given.push("--export-bmf");
        }
        if self.gab.is_some() {
            given.push("--export-gab");
        }
        given
    }

    /// Checks, before any work, that the files asked for can be written.
    pub fn check(&self) -> Result<(), super::Failure> {
        for (flag, path) in [("--export-bmf", &self.bmf), ("--export-gab", &self.gab)] {
            if let Some(p) = path {
                super::check_output_path(flag, p)?;
            }
        }
        Ok(())
    }

    /// Writes `figures` into the files asked for.
    pub fn write(&self, figures: &[crate::output::export::Measured]) -> Result<(), super::Failure> {
        use crate::output::export::{bmf, gab};
        if let Some(p) = &self.bmf {
            write_file(p, &bmf::render(figures))?;
        }
        if let Some(p) = &self.gab {
            write_file(p, &gab::render(figures))?;
        }
        Ok(())
    }
}

/// `--export-junit FILE`: the verdicts as JUnit XML (`check`, `compare`).
#[derive(Debug, Clone, Default, Args)]
pub struct Junit {
    /// Also write the verdicts as JUnit XML to this file: a testcase per
    /// figure (classname the benchmark, name its mode and size), a failure
    /// where it fails, skipped where it was not judged.
    #[arg(id = "export_junit", long = "export-junit", value_name = "FILE",
          value_hint = clap::ValueHint::FilePath)]
    pub path: Option<PathBuf>,
}

impl Junit {
    /// `compare --export-junit`: compare has no threshold.
    pub const COMPARE_HELP: &str = "Also write the comparison as JUnit XML to this file: a testcase per \
        figure, a failure where compare calls it significantly slower (beyond the common shift where \
        there is one; check, with its threshold, is the gate), skipped where only one run has it";
    /// `check --export-junit`: the check's verdicts.
    pub const CHECK_HELP: &str = "Also write the check as JUnit XML to this file, whatever its verdict: \
        a testcase per figure (classname the benchmark, name its mode and size), a failure where it \
        regressed or was lost, skipped where it was allowed or not checked; a case for the common \
        shift and the placement where they apply";

    /// Checks, before any work, that the file asked for can be written.
    pub fn check(&self) -> Result<(), super::Failure> {
        match &self.path {
            Some(p) => super::check_output_path("--export-junit", p),
            None => Ok(()),
        }
    }
}

/// `--export-otava FILE`: the history as Apache Otava reads it (`watch`).
#[derive(Debug, Clone, Default, Args)]
pub struct Otava {
    /// Also write the history as a CSV for Apache Otava (formerly Hunter):
    /// one row per run (time, run id, commit, tags), one column per figure
    /// the newest run measured (its centre, ns); and beside it, FILE's
    /// extension replaced by otava.yaml, the Otava configuration that reads
    /// it (`OTAVA_CONFIG=history.otava.yaml otava analyze ipcmark`).
    #[arg(id = "export_otava", long = "export-otava", value_name = "FILE",
          value_hint = clap::ValueHint::FilePath)]
    pub path: Option<PathBuf>,
}

impl Otava {
    /// Checks, before any work, that the file and its configuration's can
    /// be written.
    pub fn check(&self) -> Result<(), super::Failure> {
        match &self.path {
            Some(p) => {
                super::check_output_path("--export-otava", p)?;
                super::check_output_path(
                    "--export-otava",
                    &crate::output::export::otava::config_path(p),
                )
            }
            None => Ok(()),
        }
    }
}

/// Writes an export's `text` to `path` (replaced whole, a link there
/// replaced, never followed), or says why it could not.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), super::Failure> {
    crate::output::json::write_text_atomic(path, text)
        .map_err(|e| super::Failure::run(format!("cannot write {}: {e}", path.display())))
}

/// `--max-regression`: the largest slowdown of a figure `check` allows
/// (`check`, and `selftest`, which counts the A/A pairs check would fail).
#[derive(Debug, Clone, Args)]
pub struct MaxRegression {
    /// The largest slowdown of a figure allowed, beyond the machine's common
    /// shift (a percentage or a fraction): a figure significantly slower by
    /// more fails the check.
    #[arg(id = "max_regression", long = "max-regression", value_name = "PERCENT",
          default_value = "5%", value_parser = parse::relative_change)]
    pub fraction: f64,
}

impl MaxRegression {
    /// `selftest --max-regression`: the pairs judged as check would.
    pub const SELFTEST_HELP: &str = "The --max-regression each A/A pair is judged at as `ipcmark check` \
        judges it: any pair check fails is a false failure (its rate is reported, not the verdict)";
}

/// `--alpha`: the significance level of a comparison of two runs
/// (`compare`, `check`).
#[derive(Debug, Clone, Args)]
pub struct Alpha {
    /// Significance level of each figure's test (and 1 − confidence of its
    /// interval): Welch's t on the pass medians, or Mann–Whitney U on the samples.
    #[arg(
        id = "alpha",
        long = "alpha",
        value_name = "ALPHA",
        default_value_t = 0.05
    )]
    pub level: f64,
}

impl Alpha {
    /// `report --alpha`: the comparison drawn on the page.
    pub const REPORT_HELP: &str =
        "Significance level of the comparison (and 1 − confidence of its intervals)";

    /// The level, checked: strictly between 0 and 0.5.
    pub fn checked(&self) -> Result<f64, super::Failure> {
        if self.level > 0.0 && self.level < 0.5 {
            Ok(self.level)
        } else {
            Err(super::Failure::usage(format!(
                "--alpha {}: must lie strictly between 0 and 0.5",
                self.level
            )))
        }
    }
}

/// `--json[=PATH]`: the command's result as JSON instead of a table, on
/// standard output (no value, or `-`) or into PATH (`list`, `doctor`),
/// where [`Json`] always names a file. `list` takes a value only after `=`
/// (`list --json presets` lists the presets as JSON); `doctor`, which has no
/// positional argument, takes `--json PATH` too.
#[derive(Debug, Clone, Default, Args)]
pub struct JsonStdout {
    /// Print the result as JSON instead of a table: on standard output, or
    /// into PATH.
    #[arg(id = "json", long = "json", value_name = "PATH", num_args = 0..=1,
          default_missing_value = "-", require_equals = true,
          value_hint = clap::ValueHint::FilePath)]
    pub path: Option<PathBuf>,
}

impl JsonStdout {
    /// Whether JSON was asked for.
    pub fn on(&self) -> bool {
        self.path.is_some()
    }

    /// Checks, before any work, that a file asked for can be written.
    pub fn check(&self) -> Result<(), super::Failure> {
        match self.file() {
            Some(p) => super::check_output_path("--json", p),
            None => Ok(()),
        }
    }

    /// The file asked for (none for standard output).
    fn file(&self) -> Option<&std::path::Path> {
        self.path.as_deref().filter(|p| p.as_os_str() != "-")
    }

    /// Writes `text` where `--json` says: the file (replaced whole, a link
    /// there replaced, never followed), or standard output.
    pub fn emit(&self, text: &str) -> Result<(), super::Failure> {
        match self.file() {
            Some(p) => crate::output::json::write_text_atomic(p, text)
                .map_err(|e| super::Failure::run(format!("cannot write {}: {e}", p.display()))),
            None => super::print_stdout(text),
        }
    }

    /// `list --json`: one object per mechanism or benchmark.
    pub const LIST_HELP: &str = "Print the list as JSON (one object per mechanism or benchmark) instead of a table, on standard output or into PATH (--json=PATH)";
    /// `doctor --json`: the record `ipcmark.doctor/1`.
    pub const DOCTOR_HELP: &str = "Print the checks as JSON (schema ipcmark.doctor/1) instead of a table, on standard output (no PATH, or -) or into PATH";
}

/// `--timeout`: how long a command waits for progress before it fails.
#[derive(Debug, Clone, Args)]
pub struct Timeout {
    /// How long a silent peer is waited for before the figure fails.
    #[arg(id = "timeout", long = "timeout", value_name = "DURATION",
          value_parser = parse::duration, default_value = "5s")]
    pub limit: Duration,
}

impl Timeout {
    /// `workload --timeout`: processes, not a peer, and their start and end too.
    pub const WORKLOAD_HELP: &str = "How long the processes may go without any progress \
        (and may take to start, and to finish after a timed run) before the run fails";
    /// `mpi --timeout` (default 30s): rank 0's deadline on the whole job.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub const MPI_HELP: &str = "How long a figure may go without progress (a round trip, \
        a window) before rank 0 ends the job: MPI's blocking calls have no deadline of their own";
}

/// `--cpu-latency`: the PM QoS CPU wake-up latency limit held while measuring.
#[derive(Debug, Clone, Default, Args)]
pub struct CpuLatency {
    /// PM QoS CPU wake-up latency limit held while measuring, µs, or `off`
    /// (default 0 when /dev/cpu_dma_latency is writable: CPUs stay out of deep
    /// idle states, as in cyclictest; `off` measures with them).
    #[arg(id = "cpu_latency", long = "cpu-latency", value_name = "US|off",
          value_parser = parse::cpu_latency)]
    pub limit: Option<parse::CpuLatency>,
}

/// `--period` and `--duration`: the timer group's wake-ups (`run`, `explain`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = heading::TIMER)]
pub struct Timer {
    /// Two meanings, by group: timer: period of timer-latency's wake-ups
    /// (default 1ms); thread-metric: the counting period of each test, whose
    /// operations are its score (default 30s, 2s with --quick; at least 10ms).
    #[arg(id = "period", long = "period", value_name = "DURATION", value_parser = parse::duration)]
    pub period: Option<Duration>,
    /// Timer group: length of one figure (timer-latency 5s, timer-irq-overhead
    /// 3s; timer-failures: per frequency, 2000 periods within 1s..10s). With
    /// `explain --tail`: also the length of a mechanism's soak (its traced
    /// pass in segments, the slowest round trips kept).
    #[arg(id = "duration", long = "duration", value_name = "DURATION", value_parser = parse::duration)]
    pub duration: Option<Duration>,
}

/// `--load` and `--load-cpus`: a load held while measuring (`run`, `workload`).
/// Where a run's two sides go: `run` and `explain` alike.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = heading::PLACEMENT)]
pub struct Pair {
    /// CPUs for client and server ("0,1"); one CPU puts both sides on it.
    #[arg(id = "cpus", long = "cpus", value_name = "A,B", value_parser = parse::cpu_list_arg)]
    pub cpus: Option<parse::CpuList>,
    /// Pin client and server to the same CPU (the first of --cpus).
    #[arg(id = "same_cpu", long = "same-cpu")]
    pub same_cpu: bool,
    /// Run both sides under SCHED_FIFO at this priority (1-99).
    #[arg(id = "rt", long = "rt", value_name = "PRIO",
          value_parser = clap::value_parser!(i32).range(1..=99))]
    pub rt: Option<i32>,
}

#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = heading::LOAD)]
pub struct Load {
    /// Hold a load during every figure or run: irq:FREQ[:work=DUR] (a
    /// periodic timer whose handler works DUR, default 2us, on each load CPU),
    /// cpu:N[:bitcount|qsort|mixed] (N processes of checked kernels),
    /// net:RATE (UDP datagrams per second over loopback), comma-separated;
    /// `none` records the interrupt accounting without a load.
    #[arg(id = "load", long = "load", value_name = "SPEC[,SPEC…]", value_parser = parse::load_arg)]
    pub spec: Option<parse::LoadArg>,
    /// CPUs the load runs on, e.g. 0,1 or 0-3 (default: the CPUs measured
    /// on; every CPU this process may use when nothing is pinned, as in a
    /// workload).
    #[arg(id = "load_cpus", long = "load-cpus", value_name = "LIST", value_parser = parse::cpu_set_arg)]
    pub cpus: Option<parse::CpuList>,
}

/// `--sizes`: the message sizes of the figures (`run`, `mpi`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = heading::SIZES)]
pub struct Sizes {
    /// Message sizes, comma-separated, with optional K or M suffix; `sweep`
    /// for a dense sweep from 1 B to 64K (for the cost model).
    #[arg(id = "sizes", long = "sizes", value_name = "LIST", value_parser = parse::size_list_arg)]
    pub list: Option<parse::SizeList>,
}

/// How long and how precisely each figure is sampled (`run`, `mpi`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::BUDGET)]
pub struct Budget {
    /// Short samples at 64 bytes (unless --sizes says otherwise): the whole
    /// matrix in seconds.
    #[arg(long)]
    pub quick: bool,
    /// Samples every figure takes at least, in each pass (default 11; --quick 7).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: Option<u32>,
    /// Measure every ping-pong and operation figure this many times, each
    /// pass with fresh channels, peers and buffers, the passes spread over
    /// the run (default 5): `ipcmark compare` tests between-pass medians, so
    /// a run's own level does not read as a difference. The time budget is
    /// shared: each pass samples for --max-time / N at --precision × √N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub passes: Option<u32>,
    /// Keep sampling until the 95% bootstrap interval of the median is within
    /// ± this much of it (or --max-time runs out): a percentage or a fraction
    /// (default 2%; 1% with --sizes sweep, whose cost model needs it).
    #[arg(long, value_name = "PERCENT", value_parser = parse::precision)]
    pub precision: Option<f64>,
    /// The longest one figure's samples may take before it is reported as
    /// missing its precision (default 1s; --quick 250ms; 0: only --samples).
    #[arg(long, value_name = "DURATION", value_parser = parse::duration_or_zero)]
    pub max_time: Option<Duration>,
    /// Target duration of one sample.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    pub sample_time: Option<Duration>,
    #[command(flatten)]
    pub timeout: Timeout,
}

/// Where a run's figures go (`run`, `mpi`): `--json`, `--long` and the history.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = heading::OUTPUT)]
pub struct Output {
    #[command(flatten)]
    pub json: Json,
    /// Print every figure's own row, with its p99, MB/s, interval and notes,
    /// and the cost models' table (default: one row per mechanism, one
    /// column per size).
    #[arg(long)]
    pub long: bool,
    #[command(flatten)]
    pub save: Save,
}

impl Budget {
    /// The request's budget these flags stand for.
    pub fn into_request(self) -> crate::run::request::Budget {
        crate::run::request::Budget {
            quick: self.quick,
            samples: self.samples,
            passes: self.passes,
            precision: self.precision,
            max_time: self.max_time,
            sample_time: self.sample_time,
            timeout: self.timeout.limit,
        }
    }
}

impl Load {
    /// The request's load these flags stand for.
    pub fn into_request(self) -> crate::run::request::Load {
        crate::run::request::Load {
            spec: self.spec,
            cpus: self.cpus,
        }
    }
}

impl Timer {
    /// The request's timer settings these flags stand for.
    pub fn into_request(self) -> crate::run::request::Timer {
        crate::run::request::Timer {
            period: self.period,
            duration: self.duration,
        }
    }
}

impl Output {
    /// Where these flags send a run's report (`--json`, `--db`, `--no-save`).
    pub fn into_sinks(self, sinks: &mut crate::run::request::Sinks) {
        sinks.json = self.json.path;
        sinks.db = self.save.db.path;
        sinks.no_save = self.save.no_save;
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn sources(dir: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src/cli") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }

    /// Where `--NAME` is declared in `src/cli`: an `#[arg(...)]` naming it
    /// (`long = "NAME"`), or a bare `long` on a field called NAME (with `-`
    /// as `_`). Attributes may span lines; the field follows them.
    fn declarations(name: &str) -> Vec<String> {
        let mut files = Vec::new();
        sources(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli"),
            &mut files,
        );
        let field = format!("{}:", name.replace('-', "_"));
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("source");
            let mut attr = String::new();
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.starts_with("#[arg(") || !attr.is_empty() && !attr.ends_with(")]") {
                    attr.push_str(line);
                    continue;
                }
                if line.starts_with("//") || line.starts_with("#[") {
                    continue;
                }
                let named = attr.contains(&format!("long = \"{name}\""));
                let bare = !attr.contains("long = ")
                    && attr.contains("long")
                    && line.trim_start_matches("pub ").starts_with(&field);
                if named || bare {
                    found.push(format!("{}:{}", file.display(), n + 1));
                }
                attr.clear();
            }
        }
        found
    }

    #[test]
    fn the_shared_flags_are_each_declared_once() {
        for name in [
            "db",
            "timeout",
            "load",
            "load-cpus",
            "cpu-latency",
            "sizes",
            "no-save",
            "alpha",
            "export-bmf",
            "export-gab",
            "export-junit",
            "export-otava",
            "max-regression",
        ] {
            let at = declarations(name);
            assert_eq!(at.len(), 1, "--{name} declared at {at:?}");
            assert!(at[0].contains("flags.rs"), "--{name} declared at {at:?}");
        }
        // `--json FILE` once; `list --json` and `doctor --json` are a
        // switch (print the result as JSON on stdout), another flag under
        // the same name, declared once too.
        let json = declarations("json");
        assert_eq!(json.len(), 2, "--json declared at {json:?}");
        assert!(json.iter().all(|d| d.contains("flags.rs")), "{json:?}");
    }
}
