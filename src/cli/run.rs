//! `ipcmark run`: the arguments become a [`RunPlan`] (every check that can
//! refuse the run), the CPU wake-up latency is held, and the engine's
//! session measures the plan while the observers show progress and save
//! the JSON after every step; then the page is printed and the exit code
//! says how the run went.

use super::plan::{LatencyRequest, Machine, RunPlan};
use super::{Failure, RunArgs, print_stdout};
use crate::engine::os::environment;
use crate::engine::os::interrupt;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::figure::Outcome;
use crate::engine::run::session::{self, RunObserver};
use crate::output::json::build::BuildRecord;
use crate::output::json::{self, Report};
use crate::output::page;
use crate::output::progress::Progress;
use crate::output::recorder::{Recorder, now_rfc3339};
use std::process::ExitCode;

pub fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    let mut plan = RunPlan::from_args(&args, &Machine::probe()?)?;
    if let Some(n) = plan.settings.placement_note.as_deref()
        && n.contains("SCHED_FIFO")
    {
        eprintln!("warning: {n}");
    }
    // Held for the whole run; the kernel drops the request when it is closed.
    // By default CPUs are kept out of deep idle states when this user may ask
    // for it: on a guest or a power-saving host, waking a halted CPU costs tens
    // of µs, which every blocking hand-off would pay and which would drown the
    // cost being measured. Without the right, the run goes on and warns.
    let held = match plan.cpu_latency {
        LatencyRequest::Required(us) => Some(environment::hold_cpu_latency(us).map_err(|e| {
            Failure::usage(format!(
                "--cpu-latency {us}: cannot write /dev/cpu_dma_latency ({e}); run as root, or give --cpu-latency off"
            ))
        })?),
        LatencyRequest::Wanted(us) => environment::hold_cpu_latency(us).ok(),
        LatencyRequest::None => None,
    };
    if held.is_some() {
        plan.settings.cpu_latency_us = match plan.cpu_latency {
            LatencyRequest::Required(us) | LatencyRequest::Wanted(us) => Some(us),
            LatencyRequest::None => None,
        };
    }
    interrupt::install()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;

    let report = Report {
        schema: json::SCHEMA,
        ipcmark_version: env!("CARGO_PKG_VERSION"),
        build: BuildRecord::current(),
        started_at: now_rfc3339(),
        finished_at: None,
        complete: false,
        command_line: std::env::args().collect(),
        environment: environment::collect(),
        settings: plan.settings.clone(),
        results: Vec::new(),
        warnings: Vec::new(),
        cost_models: Vec::new(),
    };
    let mut recorder = Recorder::new(report, plan.json.clone());
    let mut progress = Progress::new(plan.session.figure_count());
    let names = ObjectNamer::new();
    let observers: &mut [&mut dyn RunObserver] = &mut [&mut progress, &mut recorder];
    let session = session::run(&plan.session, &names, observers).map_err(Failure::run)?;

    print_stdout(&page::render(
        &recorder.report,
        &session.results,
        plan.session.scores.as_ref(),
        plan.preset,
    ))?;
    for w in &recorder.warnings {
        eprintln!("warning: {w}");
    }
    let failed = session
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
        .count();
    if let Some(sig) = session.stopped {
        eprintln!(
            "ipcmark: interrupted by {}; results so far were kept",
            interrupt::signal_name(sig)
        );
        return Ok(ExitCode::from(128 + sig as u8));
    }
    if failed > 0 {
        eprintln!("ipcmark: {failed} figure(s) failed (see the table)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
