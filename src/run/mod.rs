//! A run asked for in code: a typed [`RunRequest`] becomes a [`RunPlan`]
//! (every check that can refuse it, `plan/`), the CPU wake-up latency is
//! held, and the engine's session measures the plan while the caller's
//! observer (a progress bar) and the report's recorder watch; the
//! [`Outcome`] holds the report, saved as it grew (`--json`, the history),
//! and what the caller needs to print it and say how the run went.
//!
//! `ipcmark run` is one caller; the studies (`explain`, `map`, `selftest`,
//! `advise --verify`) and `ipcmark mpi` build their own requests. Nothing
//! here prints a page: the caller does, from the outcome.

pub mod failure;
pub mod plan;
pub mod request;
pub mod save;
pub mod values;
pub mod workload;

pub use failure::Failure;
pub use request::RunRequest;

use crate::analysis::warnings::Warning;
use crate::engine::os::interrupt;
use crate::engine::os::load::LoadPlan;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::placement::SidePlacement;
use crate::engine::run::figure::Outcome as FigureOutcome;
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::{self, Item, Level, PairPlacement, RunObserver};
use crate::machine::cpu_latency::{self, HeldLatency, LatencyRequest};
use crate::machine::doctor;
use crate::machine::environment;
use crate::machine::sysroot::SysRoot;
use crate::output::json;
use crate::output::recorder::{Recorder, now_rfc3339};
use crate::presets::LoadStudy;
use crate::record::RunRecord;
use crate::record::map::MapFigureRecord;
use crate::record::run::VerificationRecord;
use plan::remote::RemoteRun;
use plan::{Machine, RunPlan};
use request::{ExternalFigures, Pairs};

/// What a run left: its report (saved where the request said, as it grew),
/// the warnings on it, how many figures failed, whether a signal stopped
/// it, and what its plan placed and loaded the figures with (for a study
/// that measures more under the same conditions, `explain`'s traced
/// passes). The CPU wake-up latency stays held, and a testbed the run
/// built stays up, while the outcome lives.
pub struct Outcome {
    recorder: Recorder,
    failed: usize,
    stopped: Option<i32>,
    /// Placement, peer and budget of the run's figures.
    pub settings: RunSettings,
    /// The load held during the run's (first) level, if any.
    pub load: Option<LoadPlan>,
    _latency: HeldLatency,
    _remote: Option<RemoteRun>,
}

impl Outcome {
    /// The run's report as saved.
    pub fn report(&self) -> &RunRecord {
        &self.recorder.report
    }

    /// Replaces the report with `report` (a study's additions, such as
    /// anatomies) and saves it where the run was saved, the history included.
    pub fn amend(&mut self, report: RunRecord) {
        if report != self.recorder.report {
            self.recorder.amend(report);
        }
    }

    /// The warnings on the run's figures and machine.
    pub fn warnings(&self) -> &[Warning] {
        &self.recorder.warnings
    }

    /// How many figures failed.
    pub fn failed(&self) -> usize {
        self.failed
    }

    /// How many of the report's places it could not be saved to.
    pub fn unsaved(&self) -> usize {
        self.recorder.unsaved().len()
    }

    /// The signal that stopped the run early, if one did.
    pub fn stopped(&self) -> Option<i32> {
        self.stopped
    }
}

/// Measures `request`, telling `progress` (and the report's recorder) of
/// each step. Fails before measuring for a request that cannot be carried
/// out (exit 2, the reason named), or when the session cannot run (exit 1);
/// figures that fail are counted in the outcome, not failures of the run.
pub fn run(mut request: RunRequest, progress: &mut dyn RunObserver) -> Result<Outcome, Failure> {
    if let Some(path) = &request.sinks.csv {
        failure::check_output_path("--csv", path)?;
    }
    if request.sinks.hdr.is_some() && request.mode != Some(request::RunMode::Rate) {
        return Err(Failure::usage(
            "--hdr writes the interval logs of mode rate: give --mode rate",
        ));
    }
    if let Some(address) = &request.dbus_address {
        crate::mechanisms::set_bus_address(address).map_err(Failure::usage)?;
    }
    // Before the set-up, not before the first figure: a Ctrl-C while the
    // machine is probed stops the run (stored as stopped, 128+signal), not
    // the process with nothing said and nothing stored. The rest (SIGCHLD
    // above all) once the set-up's own commands have ended.
    interrupt::install_stop()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;
    let study = match request
        .preset
        .as_deref()
        .and_then(crate::presets::find_load_study)
    {
        Some(st) => {
            apply_study(&mut request, st)?;
            Some(st)
        }
        None => None,
    };
    // A network study's figures cross a 10 Mbit/s link: short samples keep
    // it to minutes, as its differences say.
    if request
        .preset
        .as_deref()
        .and_then(crate::presets::find)
        .is_some_and(|p| p.network)
    {
        request.budget.quick = true;
    }
    if request.load_sweep.is_some() && request.load.spec.is_none() {
        // The sweep's first level is the reference: no load at all.
        request.load.spec = Some(values::LoadArg(Vec::new()));
    }
    let machine = Machine::probe()?;
    let mut plan = RunPlan::from_request(&request, &machine)?;
    plan::levels::sweep(&mut plan, request.load_sweep.as_ref(), study);
    if let Some(st) = study {
        // `apply_study` cleared the preset; the page of the run (and of
        // `show`) finds the study's tables by its name.
        plan.settings.preset = Some(st.name.to_string());
    }
    plan::remote::check(&request, plan.preset.is_some_and(|p| p.network))?;
    // Held to the end of the run: a testbed it built is removed when dropped.
    let remote = plan::remote::attach(&request, &mut plan)?;
    if let Some(pairs) = &request.pairs {
        by_pairs(&mut plan, pairs);
    }
    if let Some(external) = &request.external {
        external_only(&mut plan, external);
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
        header: crate::record::header::Header {
            schema: crate::record::SCHEMA.into(),
            ipcmark_version: env!("CARGO_PKG_VERSION").into(),
            build: json::build::current(),
            started_at: now_rfc3339(),
            finished_at: None,
            complete: false,
            command_line: std::env::args().collect(),
            environment: (&machine_env).into(),
        },
        checks: Some(
            doctor::examine_at_run_start(&SysRoot::host(), &pair, &latency.state)
                .iter()
                .map(Into::into)
                .collect(),
        ),
        pass_checks: None,
        placement_probe: None,
        verification: verification(&plan.session.items),
        level: None,
        remote: remote.as_ref().map(|r| r.record.clone()),
        settings: plan.settings.clone(),
        results: Vec::new(),
        warnings: Vec::new(),
        cost_models: Vec::new(),
        map: None,
    };
    // The run goes into the history as it is measured (before anything is).
    let history = save::writer(
        request.sinks.db.as_deref(),
        request.sinks.no_save,
        crate::history::Report::Run(&report),
    )?;
    let mut recorder = Recorder::new(report, machine_env, plan.json.clone())
        .with_pass_checks(SysRoot::host(), pair.clone());
    if let Some(w) = history {
        recorder = recorder.with_sink(Box::new(w));
    }
    let names = ObjectNamer::new();
    let observers: &mut [&mut dyn RunObserver] = &mut [progress, &mut recorder];
    let session = session::run(&plan.session, &names, observers).map_err(Failure::run)?;
    if let Some(dir) = &request.sinks.hdr {
        crate::output::hlog::write_dir(dir, &session.results).map_err(|e| {
            Failure::run(format!("--hdr {}: cannot write a log: {e}", dir.display()))
        })?;
    }
    let failed = session
        .results
        .iter()
        .filter(|r| matches!(r.outcome, FigureOutcome::Failed(_)))
        .count();
    Ok(Outcome {
        recorder,
        failed,
        stopped: session.stopped,
        settings: plan.session.settings.clone(),
        load: plan.session.levels.first().and_then(|l| l.load.clone()),
        _latency: latency,
        _remote: remote,
    })
}

/// What the verify rounds' whole-content check costs per byte on this
/// machine, measured now (a few ms, before any figure and outside every
/// timed loop), for a run with figures that verify whole messages:
/// ping-pong, one-way, stream and rate figures over a channel; `None` for a
/// run without any.
fn verification(items: &[(Item, Vec<usize>)]) -> Option<VerificationRecord> {
    let verifies = |(item, sizes): &(Item, Vec<usize>)| {
        !sizes.is_empty()
            && matches!(
                item,
                Item::PingPong(..) | Item::OneWay(..) | Item::Stream(..) | Item::Rate(..)
            )
    };
    items
        .iter()
        .any(verifies)
        .then(|| (&crate::engine::verify_cost::measure()).into())
}

/// Applies a load study's settings (`--preset rtos-load`) to `request`: its
/// benchmarks, its application load and interrupt levels, its period and
/// durations; what the request set explicitly stays.
fn apply_study(request: &mut RunRequest, st: &LoadStudy) -> Result<(), Failure> {
    if !request.names.is_empty() {
        return Err(Failure::usage(format!(
            "--preset {} chooses its own benchmarks; drop the names {}",
            st.name,
            request.names.join(" ")
        )));
    }
    request.preset = None;
    request.names = st
        .benchmarks
        .iter()
        .chain(st.once)
        .map(|s| s.to_string())
        .collect();
    if request.load.spec.is_none() {
        request.load.spec = Some(values::load_arg(st.load).map_err(Failure::usage)?);
    }
    if request.load_sweep.is_none() {
        request.load_sweep = Some(values::LoadSweep(st.frequencies.to_vec()));
    }
    request.timer.period.get_or_insert(st.period);
    request.timer.duration.get_or_insert(st.duration);
    request.frequencies = values::FrequencyList(st.frequencies.to_vec());
    request.budget.quick = true;
    Ok(())
}

/// Replaces the plan's one level by one level per pair, each placing its
/// figures on its pair (and its pages on its home), under the plan's load.
fn by_pairs(plan: &mut RunPlan, pairs: &Pairs) {
    let base = plan.session.levels[0].clone();
    let rt_priority = plan.session.settings.client.rt_priority;
    let side = |cpu| SidePlacement {
        cpu: Some(cpu),
        rt_priority,
    };
    plan.session.levels = pairs
        .pairs
        .iter()
        .zip(&pairs.homes)
        .map(|(&(c, s), &home)| Level {
            label: format!("CPU {c} → CPU {s}"),
            placement: Some(PairPlacement {
                client: side(c),
                server: side(s),
                home,
            }),
            ..base.clone()
        })
        .collect();
    let mut map = pairs.map.clone();
    // Each pair's figures, in the order the session measures them.
    map.figures = base
        .items
        .iter()
        .flat_map(|&k| {
            let (item, sizes) = &plan.session.items[k];
            sizes.iter().map(move |&z| MapFigureRecord {
                benchmark: item.id().to_string(),
                size_bytes: z,
            })
        })
        .collect();
    plan.settings.client_cpu = None;
    plan.settings.server_cpu = None;
    plan.settings.map = Some(map);
}

/// Makes the plan measure the external figures only, at its sizes, where
/// whoever started them placed them: ipcmark pins nothing.
fn external_only(plan: &mut RunPlan, external: &ExternalFigures) {
    let sizes = plan.settings.sizes.clone();
    plan.session.items = vec![(
        Item::External(std::sync::Arc::clone(&external.figures)),
        sizes,
    )];
    plan.session.settings.client = SidePlacement::default();
    plan.session.settings.server = SidePlacement::default();
    plan.settings.client_cpu = None;
    plan.settings.server_cpu = None;
    plan.settings.placement_note = Some(external.placed_by.clone());
    plan.mpi = external.mpi.clone();
}

/// Carries out a command's CPU wake-up latency request (`ipcmark run` and
/// `ipcmark workload` alike), for the whole command: the limit is held while
/// the returned value lives. Held by default when this user may ask for it:
/// on a guest or a power-saving host, waking a halted CPU costs tens of µs,
/// which every blocking hand-off would pay and which would drown the cost
/// being measured. Without the right the command goes on, and what a
/// wake-up between `cpus` costs then is measured for its warning; a limit
/// given with `--cpu-latency N` that cannot be held refuses the command.
pub fn hold_cpu_latency(request: &LatencyRequest, cpus: &[usize]) -> Result<HeldLatency, Failure> {
    cpu_latency::request_cpu_latency(request, cpus).map_err(|e| {
        // Only a required limit fails.
        let flag = match request {
            LatencyRequest::Required(us) => format!("--cpu-latency {us}"),
            _ => "--cpu-latency".into(),
        };
        Failure::usage(format!(
            "{flag}: {e}; run as root, or give --cpu-latency off"
        ))
    })
}
