//! `ipcmark run`: the arguments become a [`RunPlan`] (every check that can
//! refuse the run), the CPU wake-up latency is held, and the engine's
//! session measures the plan while the observers show progress and save
//! the JSON after every step; then the page is printed and the exit code
//! says how the run went.

use super::plan::{Machine, RunPlan};
use super::{Failure, RunArgs, hold_cpu_latency, parse, print_stdout};
use crate::engine::os::interrupt;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::figure::Outcome;
use crate::engine::run::session::{self, RunObserver};
use crate::machine::doctor;
use crate::machine::environment;
use crate::machine::sysroot::SysRoot;
use crate::output::json;
use crate::output::page;
use crate::output::progress::Progress;
use crate::output::recorder::{Recorder, now_rfc3339};
use crate::presets::LoadStudy;
use crate::record::RunRecord;
use std::process::ExitCode;

/// Applies a load study's settings (`--preset rtos-load`) to `args`: its
/// benchmarks, its application load and interrupt levels, its period and
/// durations; what the user set explicitly stays.
fn apply_study(args: &mut RunArgs, st: &LoadStudy) -> Result<(), Failure> {
    if !args.names.is_empty() {
        return Err(Failure::usage(format!(
            "--preset {} chooses its own benchmarks; drop the names {}",
            st.name,
            args.names.join(" ")
        )));
    }
    args.preset = None;
    args.names = st
        .benchmarks
        .iter()
        .chain(st.once)
        .map(|s| s.to_string())
        .collect();
    if args.load.spec.is_none() {
        args.load.spec = Some(parse::load_arg(st.load).map_err(Failure::usage)?);
    }
    if args.load_sweep.is_none() {
        args.load_sweep = Some(parse::LoadSweep(st.frequencies.to_vec()));
    }
    args.timer.period.get_or_insert(st.period);
    args.timer.duration.get_or_insert(st.duration);
    args.frequencies = parse::FrequencyList(st.frequencies.to_vec());
    args.budget.quick = true;
    Ok(())
}

/// What a command writes of a run's report once its page is printed; what
/// it adds to the report (`explain`'s anatomies) is saved where the run
/// was, the history included.
pub type After<'a> = &'a dyn Fn(&mut RunRecord) -> Result<(), Failure>;

pub fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    run_with(args, None, None)
}

/// `ipcmark run`, with `items` changing the plan once it is made (and
/// checked): another command's figures measured, shown and saved as a
/// run's (`ipcmark mpi`, `ipcmark map`); `after` writes what that command
/// adds once the page is printed (`map --csv`).
pub fn run_with(
    mut args: RunArgs,
    items: Option<&dyn Fn(&mut RunPlan)>,
    after: Option<After>,
) -> Result<ExitCode, Failure> {
    if let Some(path) = &args.csv {
        super::check_output_path("--csv", path)?;
    }
    if let Some(address) = &args.dbus.address {
        crate::mechanisms::set_bus_address(address).map_err(Failure::usage)?;
    }
    let study = match args
        .preset
        .as_deref()
        .and_then(crate::presets::find_load_study)
    {
        Some(st) => {
            apply_study(&mut args, st)?;
            Some(st)
        }
        None => None,
    };
    // A network study's figures cross a 10 Mbit/s link: short samples keep
    // it to minutes, as its differences say.
    if args
        .preset
        .as_deref()
        .and_then(crate::presets::find)
        .is_some_and(|p| p.network)
    {
        args.budget.quick = true;
    }
    if args.load_sweep.is_some() && args.load.spec.is_none() {
        // The sweep's first level is the reference: no load at all.
        args.load.spec = Some(parse::LoadArg(Vec::new()));
    }
    let machine = Machine::probe()?;
    let mut plan = RunPlan::from_args(&args, &machine)?;
    super::plan::levels::sweep(&mut plan, args.load_sweep.as_ref(), study);
    if let Some(st) = study {
        // `apply_study` cleared `--preset`; the page of the run (and of
        // `show`) finds the study's tables by its name.
        plan.settings.preset = Some(st.name.to_string());
    }
    super::plan::remote::check(&args, plan.preset.is_some_and(|p| p.network))?;
    // Held to the end of the run: a testbed it built is removed when dropped.
    let remote = super::plan::remote::attach(&args, &mut plan)?;
    if let Some(change) = items {
        change(&mut plan);
    }
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

    let machine_env = environment::collect(latency.state.clone(), plan.mpi.as_ref());
    let report = RunRecord {
        schema: crate::record::SCHEMA.into(),
        ipcmark_version: env!("CARGO_PKG_VERSION").into(),
        build: json::build::current(),
        started_at: now_rfc3339(),
        finished_at: None,
        complete: false,
        command_line: std::env::args().collect(),
        environment: (&machine_env).into(),
        checks: Some(
            doctor::examine_at_run_start(&SysRoot::host(), &pair, &latency.state)
                .iter()
                .map(Into::into)
                .collect(),
        ),
        pass_checks: None,
        level: None,
        remote: remote.as_ref().map(|r| r.record.clone()),
        settings: plan.settings.clone(),
        results: Vec::new(),
        warnings: Vec::new(),
        cost_models: Vec::new(),
        map: None,
    };
    // The run goes into the history as it is measured (before anything is).
    let history = super::history::writer(
        args.output.save.db.path.as_deref(),
        args.output.save.no_save,
        crate::history::Report::Run(&report),
    )?;
    let mut recorder = Recorder::new(report, machine_env, plan.json.clone())
        .with_pass_checks(SysRoot::host(), pair.clone());
    if let Some(w) = history {
        recorder = recorder.with_sink(Box::new(w));
    }
    let names = ObjectNamer::new();
    let mut progress = Progress::new(plan.session.figure_count());
    let observers: &mut [&mut dyn RunObserver] = &mut [&mut progress, &mut recorder];
    let session = session::run(&plan.session, &names, observers).map_err(Failure::run)?;

    if !args.quiet {
        print_stdout(&page::render(
            &recorder.report,
            page::Options::for_stdout(args.output.long),
        ))?;
    }
    if let Some(path) = &args.csv {
        let text = crate::output::csv::render(&recorder.report).map_err(Failure::run)?;
        std::fs::write(path, text)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(after) = after {
        let mut report = recorder.report.clone();
        let done = after(&mut report);
        // Saved even when the command then fails: what it added so far.
        if report != recorder.report {
            recorder.amend(report);
        }
        done?;
    }
    if !args.quiet {
        eprint!(
            "{}",
            crate::output::warnings::render(
                &recorder.warnings,
                args.output.long,
                crate::output::terminal::colour_on(crate::output::terminal::is_users_terminal(
                    &std::io::stderr()
                ))
            )
        );
    }
    let failed = session
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
        .count();
    // Each place was named in a warning when it failed; the run measured
    // and showed everything, but what it saved is not the whole run.
    let unsaved = recorder.unsaved().len();
    if let Some(line) = super::history::unsaved_line(unsaved) {
        eprintln!("{line}");
    }
    if let Some(sig) = session.stopped {
        crate::cli::say(format_args!(
            "ipcmark: interrupted by {}; results so far were kept",
            interrupt::signal_name(sig)
        ));
        return Ok(ExitCode::from(128 + sig as u8));
    }
    if failed > 0 {
        crate::cli::say(format_args!(
            "ipcmark: {failed} figure(s) failed (see the table)"
        ));
    }
    if failed > 0 || unsaved > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
