//! The results page of `ipcmark run`: the machine and placement header, one
//! table per timing model with its footnote, a preset's study-shaped table
//! and the cost models, in that order. Compact by default (figures at
//! several sizes as a matrix with the cost model beside it, notes as
//! footnotes, the precision on one line); `--long`: every figure's row with
//! its interval and notes, and the cost models' own table.

use crate::engine::models::score;
use crate::output::table::cells::{PAGE_WIDTH, fit_fields, short_cpu_name};
use crate::output::table::{self, Look};
use crate::output::terminal;
use crate::record::environment::{EnvironmentRecord, MpiRecord};
use crate::record::{FigureRecord, Mode, Peer, RunRecord};

/// How the page is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Every figure's row, with its interval and notes (`--long`).
    pub long: bool,
    /// Style the tables (colour and bold).
    pub colour: bool,
}

impl Options {
    /// The page for standard output: in colour when it is a terminal and
    /// `NO_COLOR` is unset or empty (<https://no-color.org>).
    pub fn for_stdout(long: bool) -> Self {
        Options {
            long,
            colour: terminal::colour_on(terminal::is_users_terminal(&std::io::stdout())),
        }
    }
}

/// The whole page of a run, from its report alone: what `ipcmark run`
/// prints once the run is over and `ipcmark show` prints of the run kept.
/// A run with `--load-sweep` has the page of its levels ([`render_levels`]).
pub fn render(report: &RunRecord, options: Options) -> String {
    if report.settings.load_sweep.is_some() {
        return render_levels(report);
    }
    if report.settings.map.is_some() {
        // A map's figures are one mechanism at many pairs: its matrices
        // and classes, not the run's tables.
        let mut out = header(report, false, false);
        out.push_str(&crate::output::map::render(
            report,
            options.long,
            options.colour,
        ));
        return out;
    }
    let results = &report.results;
    let has = |m: Mode| results.iter().any(|r| r.mode == m);
    let mut out = header(
        report,
        has(Mode::PingPong) || has(Mode::OneWay) || has(Mode::Stream) || has(Mode::Rate),
        has(Mode::Op) || has(Mode::Event) || has(Mode::Periodic),
    );
    if let Some(ss) = &report.settings.scores {
        out.push_str(&format!(
            "\nthread-metric: each test's threads and its reporter on CPU {}, {}; period {:?} in {} reports",
            ss.cpu.map_or("any".into(), |c| c.to_string()),
            match &ss.fifo_refused {
                None => format!(
                    "{}, reporter {}",
                    crate::benchmarks::thread_metric::PRIORITY_RULE,
                    score::REPORTER_FIFO
                ),
                Some(e) => format!("SCHED_OTHER (SCHED_FIFO refused: {e})"),
            },
            std::time::Duration::from_nanos(ss.period_ns),
            ss.intervals
        ));
    }
    out.push('\n');
    for t in table::RESULT_TABLES {
        let figures: Vec<FigureRecord> = results
            .iter()
            .filter(|r| t.modes().contains(&r.mode))
            .cloned()
            .collect();
        if figures.is_empty() {
            continue;
        }
        let look = Look {
            cost_models: &report.cost_models,
            colour: options.colour,
        };
        match t.short(&figures, &look).filter(|_| !options.long) {
            Some(short) => out.push_str(&short),
            None => out.push_str(&format!(
                "{}\n{}\n{}",
                t.render(&figures),
                t.footnote(),
                t.after(&figures)
            )),
        }
    }
    if let Some(l) = crate::output::machine::level_line(report) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(&table::load::render(results));
    out.push_str(&table::remote::render(results));
    if let Some(p) = report
        .settings
        .preset
        .as_deref()
        .and_then(crate::presets::find)
    {
        out.push_str(&table::render_preset(p, results));
    }
    // The compact page shows each model beside its figures.
    if options.long && !report.cost_models.is_empty() {
        out.push_str(&crate::output::cost_model::render(&report.cost_models));
    }
    if options.long
        && let Some(v) = &report.verification
    {
        out.push_str(&crate::output::cost_model::verification(v));
    }
    if options.long {
        out.push_str(&crate::output::machine::long(report, options.colour));
    }
    out
}

/// The page of a run with `--load-sweep` (or a load study): the header,
/// the levels, one table per figure with the levels as columns, and a load
/// study's own tables. Each level's figures are those measured at its load
/// (`load.specs`), in the order the levels ran.
fn render_levels(report: &RunRecord) -> String {
    let levels: Vec<(String, Vec<FigureRecord>)> = report
        .settings
        .load_sweep
        .iter()
        .flatten()
        .map(|level| {
            let figures = report
                .results
                .iter()
                .filter(|r| r.load.as_ref().is_some_and(|l| l.specs == level.specs))
                .cloned()
                .collect();
            (level.label.clone().unwrap_or_default(), figures)
        })
        .collect();
    let study = report
        .settings
        .preset
        .as_deref()
        .and_then(crate::presets::find_load_study);
    let mut out = header(report, false, true);
    let labels: Vec<&str> = levels.iter().map(|(l, _)| l.as_str()).collect();
    out.push_str(&format!(
        "\nload levels: {} (each level adds its interrupt source to the load above)\n",
        labels.join(", ")
    ));
    let width = comfy_table::Table::new().width().map_or(100, usize::from);
    out.push_str(&table::load::render_sweep(&levels, width));
    if let Some(st) = study {
        out.push_str(&table::load::render_study(st, &levels));
    }
    out
}

/// The machine on one line, then where each kind of figure ran.
fn header(report: &RunRecord, pingpong: bool, ops: bool) -> String {
    let (env, s) = (&report.header.environment, &report.settings);
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    let rt = s
        .rt_priority
        .map_or(String::new(), |p| format!(", SCHED_FIFO {p}"));
    let mut h = machine_line(&report.header.ipcmark_version, env);
    if let Some(r) = &report.remote {
        let host = r
            .agent_hostname()
            .map_or(String::new(), |h| format!(" on {h}"));
        h.push_str(&format!(
            "\nclient CPU {}; agent at {}{host} (ipcmark {}{}), its CPU {}",
            cpu(s.client_cpu),
            r.agent,
            r.agent_version,
            if r.authenticated { ", token" } else { "" },
            cpu(r.agent_cpu),
        ));
    } else if pingpong {
        h.push_str(&format!(
            "\nclient CPU {}, server CPU {}, peer {}{rt}",
            cpu(s.client_cpu),
            cpu(s.server_cpu),
            match s.peer {
                Peer::Process => "process",
                Peer::Thread => "thread",
            },
        ));
    }
    if ops {
        h.push_str(&format!(
            "\nsingle-process benchmarks on CPU {}{rt}",
            cpu(s.client_cpu)
        ));
    }
    if let Some(l) = &s.load {
        let cpus: Vec<String> = l.cpus.iter().map(|c| c.to_string()).collect();
        h.push_str(&format!(
            "\nload: {} on CPU {}, held during every figure",
            if l.specs.is_empty() {
                "none (interrupt accounting only)".to_string()
            } else {
                l.specs.join(", ")
            },
            cpus.join(",")
        ));
    }
    if let Some(n) = &s.placement_note {
        h.push_str(&format!("\nnote: {n}"));
    }
    if let Some(job) = &env.mpi {
        h.push_str(&mpi_ranks(job));
    }
    if let Some(line) = crate::output::machine::checks_line(report) {
        h.push('\n');
        h.push_str(&line);
    }
    h
}

/// The machine as the page's first line: wrapped within [`PAGE_WIDTH`]
/// columns and the CPU's name shortened, whatever the host calls itself.
fn machine_line(version: &str, env: &EnvironmentRecord) -> String {
    let fields = [
        format!("ipcmark {version}"),
        format!("Linux {} ({})", env.kernel, env.preemption),
        short_cpu_name(&env.cpu_model),
        format!("{} CPUs", env.logical_cpus),
        format!("virt: {}", env.virtualization),
        format!("clock: {}", env.clocksource),
        format!(
            "governor: {}",
            env.frequency_governor.as_deref().unwrap_or("none")
        ),
    ];
    fit_fields(&fields, PAGE_WIDTH)
}

/// The MPI job's library and a line per rank, as `mpirun
/// --report-bindings` shows them: host (node number), pid, the CPUs it is
/// bound to and the one it was on.
pub fn mpi_ranks(job: &MpiRecord) -> String {
    let nodes = &job.nodes;
    let library = job.library.split(',').next().unwrap_or(&job.library);
    let mut out = format!(
        "\nMPI: {library} (standard {}), {} ranks on {} node{}",
        job.standard,
        job.ranks.len(),
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" }
    );
    for p in &job.ranks {
        out.push_str(&format!(
            "\n  rank {:<3} node {} {}  pid {}  bound to CPUs {}  on CPU {}",
            p.rank,
            p.node,
            p.host,
            p.pid,
            cpu_ranges(&p.allowed_cpus),
            p.cpu.map_or("?".to_string(), |c| c.to_string())
        ));
    }
    out
}

/// CPUs as the kernel lists them: `0-3,6`; `?` for none.
fn cpu_ranges(cpus: &[usize]) -> String {
    match crate::machine::environment::format_cpu_list(cpus) {
        s if s.is_empty() => "?".into(),
        s => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first line names the machine in 120 columns whatever it calls
    /// itself: the Intel guest's "Intel(R) Xeon(R) Processor" made it 135.
    #[test]
    fn the_machine_line_fits_the_page_whatever_the_cpu_is_called() {
        use crate::machine::cpu_latency::CpuLatencyState;
        use crate::machine::environment;
        let mut env: EnvironmentRecord = (&environment::collect(
            CpuLatencyState {
                requested_us: None,
                not_held: None,
                wakeup: Err("not measured".into()),
            },
            None,
        ))
            .into();
        env.kernel = "6.18.44-fc-v657".into();
        env.preemption = "PREEMPT_DYNAMIC".into();
        env.virtualization = "kvm".into();
        env.clocksource = "tsc".into();
        env.frequency_governor = None;
        env.logical_cpus = 2;
        env.cpu_model = "Intel(R) Xeon(R) Processor".into();
        let line = machine_line("0.1.0", &env);
        assert!(!line.contains('\n'), "fits one line once shortened: {line}");
        assert!(line.contains("| Intel Xeon |"), "{line}");
        assert!(line.chars().count() <= PAGE_WIDTH, "{line}");

        env.cpu_model = "Intel(R) Xeon(R) Platinum 8480+ Sapphire Rapids Engineering \
                         Sample with a very long model string indeed @ 2.00GHz"
            .into();
        env.kernel = "6.12.0-0.rc7.20241115git1234567.60.fc42.x86_64+debug".into();
        let lines = machine_line("0.1.0", &env);
        assert!(lines.lines().count() > 1, "{lines}");
        assert!(
            lines.lines().all(|l| l.chars().count() <= PAGE_WIDTH),
            "{lines}"
        );
        assert!(
            lines.contains("governor: none"),
            "every field kept: {lines}"
        );
    }

    #[test]
    fn cpu_lists_read_as_the_kernel_writes_them() {
        assert_eq!(cpu_ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_ranges(&[1]), "1");
        assert_eq!(cpu_ranges(&[]), "?");
    }
}

#[cfg(test)]
mod golden {
    use super::*;

    /// Each report of tests/reports/ with the page `ipcmark run` printed for
    /// it (stdout, not a terminal) before the page was drawn from records.
    const PAGES: &[(&str, &str, &str)] = &[
        (
            "ipc-quick",
            include_str!("../../tests/reports/ipc-quick.json"),
            include_str!("../../tests/reports/ipc-quick.page"),
        ),
        (
            "op",
            include_str!("../../tests/reports/op.json"),
            include_str!("../../tests/reports/op.page"),
        ),
        (
            "oneway",
            include_str!("../../tests/reports/oneway.json"),
            include_str!("../../tests/reports/oneway.page"),
        ),
        (
            "event",
            include_str!("../../tests/reports/event.json"),
            include_str!("../../tests/reports/event.page"),
        ),
        (
            "periodic",
            include_str!("../../tests/reports/periodic.json"),
            include_str!("../../tests/reports/periodic.page"),
        ),
        (
            "passes",
            include_str!("../../tests/reports/passes.json"),
            include_str!("../../tests/reports/passes.page"),
        ),
        (
            "cost-model",
            include_str!("../../tests/reports/cost-model.json"),
            include_str!("../../tests/reports/cost-model.page"),
        ),
        (
            "load",
            include_str!("../../tests/reports/load.json"),
            include_str!("../../tests/reports/load.page"),
        ),
        (
            "load-sweep",
            include_str!("../../tests/reports/load-sweep.json"),
            include_str!("../../tests/reports/load-sweep.page"),
        ),
        (
            "score",
            include_str!("../../tests/reports/score.json"),
            include_str!("../../tests/reports/score.page"),
        ),
        (
            "stream",
            include_str!("../../tests/reports/stream.json"),
            include_str!("../../tests/reports/stream.page"),
        ),
        (
            "rate",
            include_str!("../../tests/reports/rate.json"),
            include_str!("../../tests/reports/rate.page"),
        ),
        (
            "map",
            include_str!("../../tests/reports/map.json"),
            include_str!("../../tests/reports/map.page"),
        ),
    ];

    /// The page drawn from a report's records is the page the run printed,
    /// byte for byte, for every mode: `ipcmark show` of a run prints what
    /// the run did.
    #[test]
    fn every_modes_page_is_drawn_from_its_report_alone() {
        let mut wrong = Vec::new();
        for (name, json, page) in PAGES {
            let record = RunRecord::parse(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            let drawn = render(
                &record,
                Options {
                    long: false,
                    colour: false,
                },
            );
            if let Some(at) = crate::record::first_difference(&drawn, page) {
                wrong.push(format!("{name}: drawn, differs from what ran at {at}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// `--long` prints the verification's cost where the report has it,
    /// once, after the cost models; the compact page and a report without
    /// it (an earlier build's) print nothing of it.
    #[test]
    fn the_long_page_says_what_the_verification_costs_only_where_measured() {
        let page = |json: &str, long| {
            let record = RunRecord::parse(json).unwrap();
            render(
                &record,
                Options {
                    long,
                    colour: false,
                },
            )
        };
        let with = include_str!("../../tests/reports/cost-model.json");
        let long = page(with, true);
        let line = "verification (untimed): comparing every byte costs 0.357 ns/B on this machine \
                    (the check timed at 4K and 256K";
        assert_eq!(long.matches(line).count(), 1, "{long}");
        assert!(long.find(line) > long.find("cost model: "), "{long}");
        assert!(!page(with, false).contains("verification"));
        let without = include_str!("../../tests/reports/passes.json");
        assert!(!page(without, true).contains("verification ("));
    }
}
