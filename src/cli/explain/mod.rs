//! `ipcmark explain`: where a ping-pong figure's round trip goes. Each
//! figure is measured untraced exactly as `ipcmark run` measures it (the
//! run is `run`'s, its page and report too); then, with the same placement
//! and load, a separate pass of `--round-trips` stamped round trips is
//! traced in a private tracefs instance, and the analysis cuts each round
//! trip into parts (`analysis::explain`). Tracing is never inside the
//! figure: the traced and untraced medians are both reported, and their
//! ratio is the tracing's overhead (docs/explain.md). A periodic figure of
//! wake-ups at deadlines (`timer-latency`) gets the anatomy of its wake-up
//! latency instead, from a traced pass of wake-ups (`timer`).

use super::plan::RunPlan;
use super::{Failure, RunArgs, flags, heading, parse, print_stdout};
use crate::engine::os::load::LoadPlan;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::runner::RunSettings;
use crate::record::{Mode, RunRecord, Status};
use clap::Args;

mod ping_pong;
mod timer;
use std::cell::RefCell;
use std::process::ExitCode;

/// Arguments of `ipcmark explain`: `run`'s placement, budget, load and
/// output flags, and the traced pass's length.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Ping-pong mechanisms to explain (pipe, unix-stream, shm-futex, …), or
    /// a timer's wake-up latency (timer-latency). See `ipcmark list`.
    #[arg(value_name = "NAME", required = true)]
    names: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    /// CPUs for client and server ("0,1"); one CPU puts both sides on it.
    #[arg(long, value_name = "A,B", value_parser = parse::cpu_list_arg,
          help_heading = heading::PLACEMENT)]
    cpus: Option<parse::CpuList>,
    /// Pin client and server to the same CPU (the first of --cpus).
    #[arg(long, help_heading = heading::PLACEMENT)]
    same_cpu: bool,
    /// Run both sides under SCHED_FIFO at this priority (1-99).
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99),
          help_heading = heading::PLACEMENT)]
    rt: Option<i32>,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten)]
    output: flags::Output,
    #[command(flatten)]
    load: flags::Load,
    #[command(flatten)]
    timer: flags::Timer,
    /// Round trips in each figure's traced pass (wake-ups, for a timer's
    /// wake-up latency: at most 30 s of them).
    #[arg(long, value_name = "N", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(10..=200_000),
          help_heading = heading::SELECTION)]
    round_trips: u64,
}

/// Refuses a name that is neither a mechanism nor a periodic benchmark
/// whose figures are wake-ups at deadlines (a benchmark or a group).
fn check_names(names: &[String]) -> Result<(), Failure> {
    for name in names {
        if crate::mechanisms::find(name).is_none() && !timer::explains(name) {
            return Err(Failure::usage(format!(
                "explain explains ping-pong mechanisms and timer wake-ups; '{name}' is not one \
                 (mechanisms: {}; wake-ups: {})",
                crate::mechanisms::ids().join(", "),
                timer::ids().join(", ")
            )));
        }
    }
    Ok(())
}

/// What the run's plan placed and loaded its figures with, kept for the
/// traced passes.
#[derive(Clone)]
pub(super) struct Captured {
    pub(super) settings: RunSettings,
    pub(super) load: Option<LoadPlan>,
}

/// Runs `ipcmark explain`.
pub fn explain(args: ExplainArgs) -> Result<ExitCode, Failure> {
    check_names(&args.names)?;
    let round_trips = args.round_trips as usize;
    let long = args.output.long;
    let run = RunArgs {
        names: args.names,
        sizes: args.sizes,
        cpus: args.cpus,
        same_cpu: args.same_cpu,
        rt: args.rt,
        cpu_latency: args.cpu_latency,
        budget: args.budget,
        output: args.output,
        load: args.load,
        timer: args.timer,
        ..RunArgs::defaults()?
    };
    let captured: RefCell<Option<Captured>> = RefCell::new(None);
    let capture = |plan: &mut RunPlan| {
        *captured.borrow_mut() = Some(Captured {
            settings: plan.session.settings.clone(),
            load: plan.session.levels.first().and_then(|l| l.load.clone()),
        });
    };
    // The anatomies go into the run's report, which `run_with` then saves
    // where the run was saved: the history (so `show`, `compare` and
    // `report --html` read them) and `--json`.
    let after = |report: &mut RunRecord| -> Result<(), Failure> {
        let Some(c) = captured.borrow().clone() else {
            return Err(Failure::run("explain: the run made no plan"));
        };
        let full = crate::sys::process::geteuid() == 0;
        let names = ObjectNamer::new();
        let mut out = String::new();
        let mut failed = Vec::new();
        for fig in report.results.iter_mut() {
            if fig.status != Status::Ok {
                continue;
            }
            if crate::engine::os::interrupt::stop_requested().is_some() {
                break;
            }
            let explained = match fig.mode {
                Mode::PingPong => ping_pong::explain_figure(
                    fig,
                    &report.cost_models,
                    &c,
                    round_trips,
                    &names,
                    full,
                ),
                Mode::Periodic if timer::explains(&fig.benchmark) => {
                    timer::explain_figure(fig, &c, round_trips, full)
                }
                _ => continue,
            };
            match explained {
                Ok(ex) => {
                    out.push_str(&crate::output::explain::render(
                        &fig.benchmark,
                        fig.size_bytes,
                        &ex,
                        long,
                    ));
                    fig.explain = Some(ex);
                }
                Err(e) if fig.mode == Mode::Periodic => {
                    failed.push(format!("{}: {e}", fig.benchmark))
                }
                Err(e) => failed.push(format!("{} {} B: {e}", fig.benchmark, fig.size_bytes)),
            }
        }
        print_stdout(&out)?;
        if !failed.is_empty() {
            return Err(Failure::run(format!(
                "explain: no anatomy for {}",
                failed.join("; ")
            )));
        }
        Ok(())
    };
    super::run::run_with(run, Some(&capture), Some(&after))
}
