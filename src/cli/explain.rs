//! `ipcmark explain`: where a ping-pong figure's round trip goes. Each
//! figure is measured untraced exactly as `ipcmark run` measures it (the
//! run is `run`'s, its page and report too); then, with the same placement
//! and load, a separate pass of `--round-trips` stamped round trips is
//! traced in a private tracefs instance, and the analysis cuts each round
//! trip into parts (`analysis::explain`). Tracing is never inside the
//! figure: the traced and untraced medians are both reported, and their
//! ratio is the tracing's overhead (docs/explain.md).

use super::plan::RunPlan;
use super::{Failure, RunArgs, flags, heading, parse, print_stdout};
use crate::analysis::explain::{self as anatomy, Tasks};
use crate::engine::channel::Topology as Shape;
use crate::engine::os::load::LoadPlan;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::tracefs::Instance;
use crate::engine::run::load::Held;
use crate::engine::run::runner::{RunSettings, run_stamped_pass};
use crate::record::explain::{ExplainRecord, RoundTripRecord};
use crate::record::{Mode, RunRecord, Status};
use clap::Args;
use std::cell::RefCell;
use std::process::ExitCode;

/// Arguments of `ipcmark explain`: `run`'s placement, budget, load and
/// output flags, and the traced pass's length.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Ping-pong mechanisms to explain (pipe, unix-stream, shm-futex, …).
    /// See `ipcmark list`.
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
    /// Round trips in each figure's traced pass.
    #[arg(long, value_name = "N", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(10..=200_000),
          help_heading = heading::SELECTION)]
    round_trips: u64,
}

/// Refuses a name that is not a mechanism (a benchmark or a group).
fn check_names(names: &[String]) -> Result<(), Failure> {
    for name in names {
        if crate::mechanisms::find(name).is_none() {
            return Err(Failure::usage(format!(
                "explain explains ping-pong mechanisms; '{name}' is not one (mechanisms: {})",
                crate::mechanisms::ids().join(", ")
            )));
        }
    }
    Ok(())
}

/// What the run's plan placed and loaded its figures with, kept for the
/// traced passes.
#[derive(Clone)]
struct Captured {
    settings: RunSettings,
    load: Option<LoadPlan>,
}

/// Runs `ipcmark explain`.
pub fn explain(args: ExplainArgs) -> Result<ExitCode, Failure> {
    check_names(&args.names)?;
    let round_trips = args.round_trips as usize;
    let json = args.output.json.path.clone();
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
        ..RunArgs::defaults()?
    };
    let captured: RefCell<Option<Captured>> = RefCell::new(None);
    let capture = |plan: &mut RunPlan| {
        *captured.borrow_mut() = Some(Captured {
            settings: plan.session.settings.clone(),
            load: plan.session.levels.first().and_then(|l| l.load.clone()),
        });
    };
    let after = |report: &RunRecord| -> Result<(), Failure> {
        let Some(c) = captured.borrow().clone() else {
            return Err(Failure::run("explain: the run made no plan"));
        };
        let mut report = report.clone();
        let full = crate::sys::process::geteuid() == 0;
        let names = ObjectNamer::new();
        let mut out = String::new();
        let mut failed = Vec::new();
        for fig in report.results.iter_mut() {
            if fig.mode != Mode::PingPong || fig.status != Status::Ok {
                continue;
            }
            if crate::engine::os::interrupt::stop_requested().is_some() {
                break;
            }
            let Some(mech) = crate::mechanisms::find(&fig.benchmark) else {
                continue;
            };
            // The figure's one-way samples, doubled: its round trip as
            // `run` reports it (loop overhead subtracted).
            let untraced = fig
                .samples_ns
                .as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| RoundTripRecord {
                    mean: 2.0 * v.iter().sum::<f64>() / v.len() as f64,
                    median: 2.0 * crate::stats::median(v),
                });
            let explained = if full {
                traced(mech, fig.size_bytes, &c, round_trips, &names)
            } else {
                Err(not_root(&fig.benchmark, fig.size_bytes))
            };
            match explained {
                Ok((mut ex, load_note)) => {
                    ex.untraced_round_trip_ns = untraced;
                    out.push_str(&crate::output::explain::render(
                        &fig.benchmark,
                        fig.size_bytes,
                        &ex,
                        load_note.as_deref(),
                        long,
                    ));
                    fig.explain = Some(ex);
                }
                Err(e) => failed.push(format!("{} {} B: {e}", fig.benchmark, fig.size_bytes)),
            }
        }
        print_stdout(&out)?;
        if let Some(path) = &json {
            crate::output::json::write_atomic(path, &report)
                .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
        }
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

/// Why there is no full anatomy without root, and the command that gives it.
fn not_root(name: &str, size: usize) -> String {
    format!(
        "tracing the kernel's tracepoints needs root (tracefs); run \
         `sudo ipcmark explain {name} --sizes {size}` for the anatomy"
    )
}

/// The traced pass of one figure and its anatomy; with a load, a line on
/// what the load's own handlers took per round trip.
fn traced(
    mech: &dyn crate::engine::channel::Mechanism,
    size: usize,
    c: &Captured,
    round_trips: usize,
    names: &ObjectNamer,
) -> Result<(ExplainRecord, Option<String>), String> {
    let s = &c.settings;
    let mut cpus: Vec<usize> = [s.client.cpu, s.server.cpu].into_iter().flatten().collect();
    if mech.info().topology == Shape::SelfLoop {
        cpus.truncate(1);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        cpus = crate::sys::sched::allowed_cpus()
            .map_err(|e| format!("cannot read the CPUs allowed: {e}"))?;
    }
    // About 40 events of 40 bytes per round trip, and the traced CPUs'
    // other tasks' switches and interrupts: 2 KiB per round trip per CPU,
    // at least 4 MiB.
    let buffer_kb = (round_trips * 2).max(4096);
    let inst = Instance::create(&cpus, buffer_kb)?;
    let mut held = c.load.as_ref().map(Held::start).transpose()?;
    let mark = held.as_mut().map(Held::before).transpose()?;
    let pass = run_stamped_pass(mech, size, s, names, round_trips, &mut |on| match on {
        Some(tasks) => inst.start(tasks),
        None => inst.stop(),
    })?;
    let load = match (held.as_mut(), &mark) {
        (Some(h), Some(m)) => Some(h.after(m, &pass.cpus)?),
        _ => None,
    };
    let trace = inst.read()?;
    let events = inst.events.clone();
    let instance = inst.dir().display().to_string();
    drop(inst);
    let trips = anatomy::decompose(
        &trace.events,
        &pass.stamps,
        Tasks {
            client: pass.client_tid,
            server: pass.server_tid,
        },
        &anatomy::syscall_name,
    );
    let (centre, parts) = anatomy::summarise(&trips);
    // The load's handler time per round trip: its rate over the window it
    // was held (the pass and its set-up) times the traced round trip.
    let load_note = load.filter(|l| l.window_ns > 0).map(|l| {
        let (count, handler) = pass.cpus.iter().fold((0, 0), |(n, h), &cpu| {
            let (cn, ch, _) = l.sources_on(cpu);
            (n + cn, h + ch)
        });
        format!(
            "load: its interrupt sources on CPUs {:?} handled {count} interrupts in {:.1} ms, \
             {:.0} ns of handler time per traced round trip (stamped in the handler)",
            pass.cpus,
            l.window_ns as f64 / 1e6,
            handler as f64 / l.window_ns as f64 * centre.mean
        )
    });
    Ok((
        ExplainRecord {
            method: "full".into(),
            parts,
            traced_round_trip_ns: centre,
            untraced_round_trip_ns: None,
            round_trips: trips.len() as u64,
            lost_events: trace.lost,
            instance: Some(instance),
            events,
            note: None,
        },
        load_note,
    ))
}
