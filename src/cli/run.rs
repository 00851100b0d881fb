//! `ipcmark run`: the arguments become a [`RunPlan`] (every check that can
//! refuse the run), the CPU wake-up latency is held, and the engine's
//! session measures the plan while the observers show progress and save
//! the JSON after every step; then the page is printed and the exit code
//! says how the run went.

use super::plan::{Machine, RunPlan};
use super::{Failure, RunArgs, hold_cpu_latency, print_stdout};
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
    let machine = Machine::probe()?;
    let mut plan = RunPlan::from_args(&args, &machine)?;
    if let Some(n) = plan.settings.placement_note.as_deref()
        && n.contains("SCHED_FIFO")
    {
        eprintln!("warning: {n}");
    }
    // Held for the whole run (see `hold_cpu_latency`); the kernel drops the
    // request when it is closed. Without it, a wake-up is measured between
    // the two CPUs the figures use (the first two allowed when unpinned).
    let pair = match (plan.settings.client_cpu, plan.settings.server_cpu) {
        (Some(c), Some(s)) if c != s => vec![c, s],
        _ => machine.allowed_cpus.clone(),
    };
    let latency = hold_cpu_latency(&plan.cpu_latency, &pair)?;
    plan.settings.cpu_latency_us = latency.state.held_us();
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
        environment: environment::collect(latency.state.clone()),
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
        page::Options::for_stdout(args.long),
    ))?;
    eprint!(
        "{}",
        crate::output::warnings::render(
            &recorder.warnings,
            args.long,
            page::colour_on(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        )
    );
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
