//! `ipcmark run`: validate everything, then measure every mechanism × size and
//! every operation benchmark, saving the JSON after each mechanism or
//! benchmark so an interrupted run keeps its results.

use super::parse::CpuLatency;
use super::{Failure, FaultArg, ModeArg, PeerArg, RunArgs, print_stdout};
use crate::benchmarks;
use crate::engine::channel::Mechanism;
use crate::engine::environment::{self, Environment};
use crate::engine::interrupt;
use crate::engine::objects::ObjectNamer;
use crate::engine::oneway::OneWayPlan;
use crate::engine::op::Operation;
use crate::engine::passes;
use crate::engine::peer::{Fault, PeerKind};
use crate::engine::periodic::{Periodic, PeriodicSettings};
use crate::engine::pingpong::Budget;
use crate::engine::placement::{SidePlacement, probe_rt};
use crate::engine::runner::{self, FigureResult, Mode, Outcome, RunSettings};
use crate::engine::sampling::Precision;
use crate::engine::score::{self, ScoreSettings, Scored};
use crate::engine::sweep;
use crate::mechanisms;
use crate::output::json::{self, Report, ResultRecord, Settings};
use crate::output::progress::Progress;
use crate::output::table;
use std::process::ExitCode;
use std::time::Duration;

/// Messages a faulty server (`--fault die|hang`) handles before it fails.
const FAULT_AFTER: u64 = 20;

/// Sizes of a default run.
pub const DEFAULT_SIZES: [usize; 6] = [1, 64, 1024, 4096, 16384, 65536];

/// One thing a run measures.
#[derive(Clone, Copy)]
enum Selected {
    /// An IPC mechanism at every size it runs at; `true`: cold buffers.
    Mechanism(&'static dyn Mechanism, bool),
    /// A benchmark timed in one process.
    Op(&'static dyn Operation),
    /// A benchmark of the periodic model, one figure per planned [`Model`].
    Periodic(&'static dyn Periodic),
    /// An IPC mechanism timed one way (mode `oneway`) at every size it runs at.
    OneWay(&'static dyn Mechanism, OneWayPlan),
    /// A benchmark of the score model: operations counted in a period.
    Scored(&'static dyn Scored),
}

impl Selected {
    /// What makes two selections the same figure set: id, cold, and the
    /// one-way pacing (0: not one-way; 1: saturated; 2 + ns: sporadic).
    fn key(&self) -> (&'static str, bool, u64) {
        match self {
            Selected::Mechanism(m, cold) => (m.info().id, *cold, 0),
            Selected::Op(b) => (b.info().id, false, 0),
            Selected::Periodic(b) => (b.info().id, false, 0),
            Selected::OneWay(m, plan) => (
                m.info().id,
                false,
                plan.interval.map_or(1, |d| 2 + d.as_nanos() as u64),
            ),
            Selected::Scored(b) => (b.info().id, false, 0),
        }
    }
}

impl From<benchmarks::Benchmark> for Selected {
    fn from(b: benchmarks::Benchmark) -> Self {
        match b {
            benchmarks::Benchmark::Op(b) => Selected::Op(b),
            benchmarks::Benchmark::Periodic(b) => Selected::Periodic(b),
            benchmarks::Benchmark::Scored(b) => Selected::Scored(b),
        }
    }
}

/// The one-way plan for a figure set: `--interval`, `--window`, `--messages`
/// and `--quick`, or a preset column's interval and count.
fn oneway_plan(
    args: &RunArgs,
    interval: Option<Duration>,
    preset_messages: Option<u64>,
) -> OneWayPlan {
    let quick = args.quick;
    let window = args.window.unwrap_or(if quick { 10_000 } else { 100_000 });
    let default_messages = match interval {
        Some(_) => preset_messages
            .filter(|_| !quick)
            .unwrap_or(if quick { 10 } else { 30 }),
        None => preset_messages.unwrap_or(window * if quick { 2 } else { 3 }),
    };
    OneWayPlan {
        interval,
        messages: args.messages.unwrap_or(default_messages),
        window,
        max_time: Duration::from_secs(if quick { 10 } else { 60 }),
    }
}

/// Checks the one-way flags against `--mode` and `--preset` (exit 2).
fn check_mode_flags(
    args: &RunArgs,
    preset: Option<&crate::presets::Preset>,
) -> Result<(), Failure> {
    if let Some(p) = preset {
        if args.mode.is_some() || args.interval.is_some() {
            return Err(Failure::usage(format!(
                "--preset {} sets each column's mode and interval; drop --mode and --interval",
                p.name
            )));
        }
        let has_oneway = p
            .columns
            .iter()
            .any(|c| matches!(c.mode, crate::presets::ColumnMode::OneWay { .. }));
        if !has_oneway && (args.window.is_some() || args.messages.is_some()) {
            return Err(Failure::usage(format!(
                "--window and --messages apply to mode oneway; preset {} has no one-way column",
                p.name
            )));
        }
        return Ok(());
    }
    if args.mode != Some(ModeArg::Oneway) {
        for (flag, given) in [
            ("--interval", args.interval.is_some()),
            ("--window", args.window.is_some()),
            ("--messages", args.messages.is_some()),
        ] {
            if given {
                return Err(Failure::usage(format!(
                    "{flag} applies to --mode oneway only (mode is {})",
                    match args.mode {
                        Some(ModeArg::Stream) => "stream",
                        Some(_) => "pingpong",
                        None => "pingpong by default",
                    }
                )));
            }
        }
    }
    Ok(())
}

/// Resolves the names given to `ipcmark run`: mechanism ids, benchmark ids and
/// group names, in the order given, each thing once. No name: the ipc group.
fn resolve(names: &[String], cold: bool) -> Result<Vec<Selected>, Failure> {
    let ipc = || {
        mechanisms::REGISTRY
            .iter()
            .map(move |&m| Selected::Mechanism(m, cold))
    };
    if names.is_empty() {
        return Ok(ipc().collect());
    }
    let mut out: Vec<Selected> = Vec::new();
    for name in names {
        let found: Vec<Selected> = if name == benchmarks::ALL {
            ipc()
                .chain(benchmarks::REGISTRY.iter().map(|&b| Selected::from(b)))
                .collect()
        } else if name == benchmarks::IPC {
            ipc().collect()
        } else if let Some(group) = benchmarks::group(name) {
            let members: Vec<Selected> = benchmarks::members(group.name)
                .into_iter()
                .map(Selected::from)
                .collect();
            if members.is_empty() {
                return Err(Failure::usage(format!(
                    "group '{name}' has no benchmarks yet; groups: {}, {}",
                    benchmarks::available_groups().join(", "),
                    benchmarks::ALL
                )));
            }
            members
        } else if let Some(m) = mechanisms::find(name) {
            vec![Selected::Mechanism(m, cold)]
        } else if let Some(b) = benchmarks::find(name) {
            vec![b.into()]
        } else {
            return Err(Failure::usage(format!(
                "unknown benchmark or group '{name}'; groups: {}, {}; benchmarks: {}, {}",
                benchmarks::available_groups().join(", "),
                benchmarks::ALL,
                mechanisms::ids().join(", "),
                benchmarks::ids().join(", ")
            )));
        };
        for sel in found {
            if !out.iter().any(|o| o.key() == sel.key()) {
                out.push(sel);
            }
        }
    }
    Ok(out)
}

/// Client and server placement, and a remark when the machine forces one.
/// `preset_rt`: the preset's SCHED_FIFO priority, used when permitted and
/// `--rt` is not given; when it is not permitted the run goes on under
/// SCHED_OTHER and the note says so.
fn placement(
    args: &RunArgs,
    preset_rt: Option<i32>,
) -> Result<(SidePlacement, SidePlacement, Option<String>, usize), Failure> {
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?;
    let show = |v: &[usize]| {
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut note = None;
    let cpus = match &args.cpus {
        Some(list) => {
            let list = &list.0;
            for &c in list {
                if !allowed.contains(&c) {
                    return Err(Failure::usage(format!(
                        "--cpus: CPU {c} does not exist or is not available to ipcmark; available CPUs: {}",
                        show(&allowed)
                    )));
                }
            }
            list.clone()
        }
        None if allowed.len() >= 2 => allowed[..2].to_vec(),
        None => {
            note = Some(format!(
                "only CPU {} is available: both sides share it",
                allowed[0]
            ));
            vec![allowed[0]]
        }
    };
    let client_cpu = cpus[0];
    let server_cpu = if args.same_cpu || cpus.len() == 1 {
        cpus[0]
    } else {
        cpus[1]
    };
    if let Some(prio) = args.rt {
        probe_rt(prio).map_err(|e| {
            Failure::usage(format!(
                "--rt {prio}: SCHED_FIFO is not permitted here ({e}); run as root or grant CAP_SYS_NICE"
            ))
        })?;
    }
    let mut rt = args.rt;
    if let (None, Some(prio)) = (args.rt, preset_rt) {
        match probe_rt(prio) {
            Ok(()) => rt = Some(prio),
            Err(e) => {
                let fact = format!(
                    "SCHED_FIFO {prio}, as in the study, is not permitted here ({e}): running under SCHED_OTHER"
                );
                note = Some(match note {
                    Some(n) => format!("{n}; {fact}"),
                    None => fact,
                });
            }
        }
    }
    let side = |cpu| SidePlacement {
        cpu: Some(cpu),
        rt_priority: rt,
    };
    Ok((side(client_cpu), side(server_cpu), note, allowed.len()))
}

fn budget(args: &RunArgs) -> Budget {
    let quick = args.quick;
    Budget {
        warmup: Duration::from_millis(if quick { 30 } else { 100 }),
        sample_time: args
            .sample_time
            .unwrap_or(Duration::from_millis(if quick { 15 } else { 40 })),
        samples: args
            .samples
            .map_or(if quick { 7 } else { 11 }, |n| n as usize),
        precision: Precision {
            target: args
                .precision
                .unwrap_or(if args.sizes.as_ref().is_some_and(|s| s.sweep) {
                    SWEEP_PRECISION
                } else {
                    PRECISION
                }),
            max_time: args.max_time.unwrap_or(Duration::from_millis(if quick {
                250
            } else {
                1000
            })),
        },
        histogram_time: Duration::from_millis(if quick { 50 } else { 200 }),
        verify_rounds: 16,
        timeout: args.timeout,
    }
}

/// Most figures one sweep interleaves. Results are saved after each sweep,
/// so this bounds what a stopped run loses (a sweep's figures are finished
/// together), while a sweep still spans several seconds of the machine's
/// drift.
const SWEEP_MAX_FIGURES: usize = 24;

/// What the run loop does next: plan entries (by index) measured alone, or
/// a sweep of consecutive ones.
enum Step {
    Alone(usize),
    Sweep(Vec<usize>),
}

/// What every step of a run's plan is run with.
struct StepContext<'a> {
    plan: &'a [(Selected, Vec<usize>)],
    names: &'a ObjectNamer,
    progress: &'a Progress,
    /// `--mode stream`: mechanisms stream instead of ping-ponging.
    stream: bool,
    periodic: &'a PeriodicSettings,
    scores: Option<&'a (ScoreSettings, Option<String>)>,
}

impl StepContext<'_> {
    /// Runs with settings `s` the figures of one step that `keep` (given
    /// each one's index in the step) selects: each with its index, in
    /// order, fewer if the run was asked to stop.
    fn run_step(
        &self,
        step: &Step,
        s: &RunSettings,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, FigureResult)> {
        let k = match step {
            Step::Alone(k) => *k,
            Step::Sweep(ks) => {
                let (index, figures): (Vec<usize>, Vec<(&dyn Mechanism, usize)>) = ks
                    .iter()
                    .flat_map(|&k| match self.plan[k].0 {
                        Selected::Mechanism(m, _) => self.plan[k].1.iter().map(move |&z| (m, z)),
                        _ => unreachable!("sweep_steps puts only mechanisms in a sweep"),
                    })
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .unzip();
                if figures.is_empty() {
                    return Vec::new();
                }
                self.progress
                    .start(&format!("{} figures, interleaved", figures.len()));
                let out = sweep::run(&figures, s, self.names);
                out.iter().for_each(|_| self.progress.done_one());
                return index.into_iter().zip(out).collect();
            }
        };
        let (sel, figure_sizes) = (&self.plan[k].0, &self.plan[k].1);
        // A periodic benchmark's figures, by index (`figure_sizes` holds 0..n).
        let models = match *sel {
            Selected::Periodic(b) => b.plan(self.periodic),
            _ => Vec::new(),
        };
        let mut out = Vec::with_capacity(figure_sizes.len());
        for (i, &size) in figure_sizes.iter().enumerate() {
            if interrupt::stop_requested().is_some() {
                break;
            }
            if !keep(i) {
                continue;
            }
            let r = match *sel {
                Selected::Mechanism(m, cold) => {
                    self.progress
                        .start(&format!("{} {}", m.info().id, table::format_size(size)));
                    if self.stream {
                        runner::run_stream_figure(m, size, cold, s, self.names)
                    } else {
                        runner::run_figure(m, size, cold, s, self.names)
                    }
                }
                Selected::Op(b) => {
                    self.progress.start(b.info().id);
                    runner::run_op_figure(b, s, self.names)
                }
                Selected::Periodic(b) => {
                    self.progress.start(b.info().id);
                    runner::run_periodic_figure(b.info().id, &models[size], s)
                }
                Selected::OneWay(m, plan) => {
                    self.progress.start(&format!(
                        "{} {} one-way",
                        m.info().id,
                        table::format_size(size)
                    ));
                    runner::run_oneway_figure(m, size, &plan, s, self.names)
                }
                Selected::Scored(b) => {
                    self.progress.start(b.info().id);
                    let (ss, refused) = self.scores.expect("settings made for score tests");
                    runner::run_score_figure(b, ss, refused.as_deref(), self.names)
                }
            };
            self.progress.done_one();
            out.push((i, r));
        }
        out
    }
}

/// Groups consecutive ping-pong mechanisms that may join a sweep into
/// sweeps of at most [`SWEEP_MAX_FIGURES`] figures (a mechanism's sizes stay
/// in one sweep, which may then hold more); the rest run alone, in order.
fn sweep_steps(plan: &[(Selected, Vec<usize>)], pingpong: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut count = 0;
    for (k, (sel, sizes)) in plan.iter().enumerate() {
        let joins =
            pingpong && matches!(*sel, Selected::Mechanism(m, cold) if sweep::joins(m, cold));
        if !group.is_empty() && (!joins || count + sizes.len() > SWEEP_MAX_FIGURES) {
            steps.push(Step::Sweep(std::mem::take(&mut group)));
            count = 0;
        }
        if joins {
            group.push(k);
            count += sizes.len();
        } else {
            steps.push(Step::Alone(k));
        }
    }
    if !group.is_empty() {
        steps.push(Step::Sweep(group));
    }
    steps
}

/// `--precision` when none is given.
const PRECISION: f64 = 0.02;

/// `--passes` when none is given. On a 2-vCPU guest a pass median moves by
/// 10–20% from one pass to the next (the host's load changes every few
/// seconds), so the test between runs needs several: with three, one pass
/// caught in a slow spell decides it; five detected pipe's −35% on one CPU
/// (p ≤ 0.002) in each of three tries while back-to-back runs differed in
/// 0–7 of 21 results. Each pass has a fifth of the budget, so a run takes
/// about as long as one pass did.
const PASSES: usize = 5;

/// Whether a plan entry is measured in every pass: ping-pong figures and
/// operations (their samples and histograms pool). Periodic, one-way,
/// stream and score figures are measured once: each already spans its own
/// long window of time.
fn repeats(sel: &Selected, pingpong: bool) -> bool {
    match sel {
        Selected::Mechanism(..) => pingpong,
        Selected::Op(_) => true,
        Selected::Periodic(_) | Selected::OneWay(..) | Selected::Scored(_) => false,
    }
}

/// The budget of one pass of `passes`: a share of the figure's time (its
/// warm-up, samples and single round trips), at the precision whose pool of
/// `passes` passes meets the run's target. A pass still takes a few samples
/// of its own, so that its median means something.
fn pass_budget(run: &Budget, passes: usize) -> Budget {
    let n = passes.max(1);
    Budget {
        warmup: run.warmup / n as u32,
        samples: run
            .samples
            .div_ceil(n)
            .max(MIN_PASS_SAMPLES)
            .min(run.samples),
        precision: Precision {
            target: passes::per_pass_target(run.precision.target, n),
            max_time: run.precision.max_time / n as u32,
        },
        histogram_time: run.histogram_time / n as u32,
        ..*run
    }
}

/// Fewest samples one pass takes (unless `--samples` asks for fewer).
const MIN_PASS_SAMPLES: usize = 3;

/// `--precision` with `--sizes sweep`: the cost model reads a nearly flat
/// range (small messages) from the differences between its sizes' medians,
/// a few per cent apart, which a ±2% median blurs (pipe's 1 B–8 KiB range:
/// R² 0.95–0.99 on a 2-vCPU VM at ±2%, 0.98–0.99 at ±1%, for about a fifth
/// more time: the sweep's short samples make the extra ones cheap).
const SWEEP_PRECISION: f64 = 0.01;

/// The timer group's `--period` when none is given.
const TIMER_PERIOD: Duration = Duration::from_millis(1);

/// Thread-Metric's counting period when `--period` is not given (its
/// `TM_TEST_DURATION`), and with `--quick`.
const SCORE_PERIOD: Duration = Duration::from_secs(30);
const SCORE_PERIOD_QUICK: Duration = Duration::from_secs(2);

/// Shortest counting period: each of its reports must hold operations.
const SCORE_PERIOD_MIN: Duration = Duration::from_millis(10);

/// The score model's settings, checked: `--period` of at least
/// [`SCORE_PERIOD_MIN`], and whether SCHED_FIFO is permitted (if not, why).
fn score_settings(
    args: &RunArgs,
    client: &SidePlacement,
) -> Result<(ScoreSettings, Option<String>), Failure> {
    let period = args.period.unwrap_or(if args.quick {
        SCORE_PERIOD_QUICK
    } else {
        SCORE_PERIOD
    });
    if period < SCORE_PERIOD_MIN {
        return Err(Failure::usage(format!(
            "--period {period:?} is too short for thread-metric: its counting period must be at least {SCORE_PERIOD_MIN:?}"
        )));
    }
    let refused = probe_rt(score::REPORTER_FIFO).err().map(|e| e.to_string());
    Ok((
        ScoreSettings {
            period,
            intervals: score::INTERVALS,
            cpu: client.cpu,
            fifo: refused.is_none(),
            timeout: args.timeout,
            unfair: args.fault == Some(FaultArg::Unfair),
        },
        refused,
    ))
}

pub(super) fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

pub fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    // Everything is validated before anything is measured or written.
    let preset = match &args.preset {
        Some(name) => Some(crate::presets::find(name).ok_or_else(|| {
            Failure::usage(format!(
                "unknown preset '{name}'; presets: {} (see ipcmark list presets)",
                crate::presets::names().join(", ")
            ))
        })?),
        None => None,
    };
    let selected = match preset {
        // A preset fixes what runs: its columns, each warm or cold.
        Some(p) if !args.names.is_empty() => {
            return Err(Failure::usage(format!(
                "--preset {} chooses its own mechanisms; drop the names {}",
                p.name,
                args.names.join(" ")
            )));
        }
        Some(p) => p
            .columns
            .iter()
            .map(|c| {
                let m = mechanisms::find(c.mechanism)
                    .expect("presets name registered mechanisms (tested)");
                match c.mode {
                    crate::presets::ColumnMode::PingPong => Selected::Mechanism(m, c.cold),
                    crate::presets::ColumnMode::OneWay { interval, messages } => {
                        Selected::OneWay(m, oneway_plan(&args, interval, messages))
                    }
                }
            })
            .collect(),
        None => resolve(&args.names, args.cold)?,
    };
    check_mode_flags(&args, preset)?;
    let oneway = args.mode == Some(ModeArg::Oneway);
    let selected = if oneway {
        if args.cold {
            return Err(Failure::usage(
                "--cold applies to --mode pingpong only: a one-way figure uses warm buffers",
            ));
        }
        let plan = oneway_plan(&args, args.interval, None);
        selected
            .into_iter()
            .map(|sel| match sel {
                Selected::Mechanism(m, _) => Ok(Selected::OneWay(m, plan)),
                Selected::Op(b) => Err(b.info().id),
                Selected::Periodic(b) => Err(b.info().id),
                Selected::Scored(b) => Err(b.info().id),
                Selected::OneWay(..) => Ok(sel),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|id| {
                Failure::usage(format!(
                    "--mode oneway times IPC mechanisms; '{id}' is a single-process benchmark"
                ))
            })?
    } else {
        selected
    };
    if args.mode == Some(ModeArg::Stream) {
        check_stream_args(&args, &selected)?;
    }
    let sizes = match (&args.sizes, preset, args.quick) {
        (Some(s), _, _) => s.sizes.clone(),
        (None, Some(p), _) => p.sizes.to_vec(),
        (None, None, true) => vec![64],
        // One-way messages carry an 8-byte stamp: 8 B stands in for 1 B.
        (None, None, false) if oneway => DEFAULT_SIZES.map(|s| s.max(8)).to_vec(),
        (None, None, false) => DEFAULT_SIZES.to_vec(),
    };
    let (client, server, placement_note, cpus_available) =
        placement(&args, preset.and_then(|p| p.rt_priority))?;
    if let Some(n) = placement_note.as_deref()
        && n.contains("SCHED_FIFO")
    {
        eprintln!("warning: {n}");
    }
    let scores = if selected.iter().any(|s| matches!(s, Selected::Scored(_))) {
        Some(score_settings(&args, &client)?)
    } else {
        None
    };
    super::check_json_path(args.json.as_deref())?;
    // Held for the whole run; the kernel drops the request when it is closed.
    // By default CPUs are kept out of deep idle states when this user may ask
    // for it: on a guest or a power-saving host, waking a halted CPU costs tens
    // of µs, which every blocking hand-off would pay and which would drown the
    // cost being measured. Without the right, the run goes on and warns.
    let (_cpu_latency, cpu_latency_us) = match args.cpu_latency {
        Some(CpuLatency::Hold(us)) => {
            let held = environment::hold_cpu_latency(us).map_err(|e| {
                Failure::usage(format!(
                    "--cpu-latency {us}: cannot write /dev/cpu_dma_latency ({e}); run as root, or give --cpu-latency off"
                ))
            })?;
            (Some(held), Some(us))
        }
        Some(CpuLatency::Off) => (None, None),
        None if preset.is_some_and(|p| p.idle_states) => (None, None),
        None => match environment::hold_cpu_latency(0) {
            Ok(held) => (Some(held), Some(0)),
            Err(_) => (None, None),
        },
    };

    interrupt::install()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;
    let settings = RunSettings {
        client,
        server,
        peer: match args.peer {
            PeerArg::Process => PeerKind::Process,
            PeerArg::Thread => PeerKind::Thread,
        },
        budget: budget(&args),
        cpus_available,
        // After the 16 messages checked before timing, and before the 16
        // checked after it, however few the timed ones are: a figure whose
        // warm-up calibrated on one slow round trip may time only a handful.
        fault: args.fault.and_then(|f| match f {
            FaultArg::Corrupt => Some(Fault::Corrupt),
            FaultArg::Die => Some(Fault::Die(FAULT_AFTER)),
            FaultArg::Hang => Some(Fault::Hang(FAULT_AFTER)),
            FaultArg::Unfair => None,
        }),
    };
    let env = environment::collect();
    let mut report = Report {
        schema: json::SCHEMA,
        ipcmark_version: env!("CARGO_PKG_VERSION"),
        started_at: now_rfc3339(),
        finished_at: None,
        complete: false,
        command_line: std::env::args().collect(),
        environment: env.clone(),
        settings: Settings {
            sizes: sizes.clone(),
            client_cpu: client.cpu,
            server_cpu: server.cpu,
            rt_priority: client.rt_priority,
            peer: settings.peer,
            quick: args.quick,
            passes: args.passes.map_or(PASSES, |n| n as usize),
            budget: settings.budget,
            placement_note: placement_note.clone(),
            cpu_latency_us,
        },
        results: Vec::new(),
        warnings: Vec::new(),
        cost_models: Vec::new(),
    };

    let periodic_settings = PeriodicSettings {
        period: args.period.unwrap_or(TIMER_PERIOD),
        duration: args.duration,
        tolerance: args.tolerance,
        frequencies: args.frequencies.0.clone(),
        irq_frequency: args.irq_frequency,
        quick: args.quick,
    };
    // Each selected thing with the sizes it runs at (one figure for an
    // operation); a periodic benchmark with its planned figures.
    let plan: Vec<(Selected, Vec<usize>)> = selected
        .iter()
        .map(|&sel| match sel {
            Selected::Mechanism(m, _) => (sel, runner::sizes_for(m, &sizes)),
            Selected::Op(b) => (sel, vec![b.info().bytes]),
            Selected::Periodic(b) => (sel, (0..b.plan(&periodic_settings).len()).collect()),
            Selected::OneWay(m, _) => (sel, runner::sizes_for(m, &sizes)),
            Selected::Scored(_) => (sel, vec![0]),
        })
        .collect();
    let pingpong = args.mode != Some(ModeArg::Stream);
    let passes = report.settings.passes;
    let repeated: usize = plan
        .iter()
        .filter(|(sel, _)| repeats(sel, pingpong))
        .map(|(_, sizes)| sizes.len())
        .sum();
    let progress =
        Progress::new(plan.iter().map(|(_, s)| s.len()).sum::<usize>() + (passes - 1) * repeated);
    let names = ObjectNamer::new();
    let mut results: Vec<FigureResult> = Vec::new();
    let save = |report: &Report| -> Result<(), Failure> {
        match &args.json {
            Some(path) => json::write_atomic(path, report)
                .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display()))),
            None => Ok(()),
        }
    };
    // Figures measured in every pass sample with a pass's share of the budget.
    let pass_settings = RunSettings {
        budget: pass_budget(&settings.budget, passes),
        ..settings.clone()
    };
    let target = settings.budget.precision.target;
    let steps = sweep_steps(&plan, pingpong);
    let ctx = StepContext {
        plan: &plan,
        names: &names,
        progress: &progress,
        stream: !pingpong,
        periodic: &periodic_settings,
        scores: scores.as_ref(),
    };
    // Where each step's figures sit in `results`, from the first pass.
    let mut first_slot: Vec<usize> = Vec::with_capacity(steps.len());

    'plan: for pass in 1..=passes {
        for (n, step) in steps.iter().enumerate() {
            if interrupt::stop_requested().is_some() {
                break 'plan;
            }
            let entry = match step {
                Step::Alone(k) => *k,
                Step::Sweep(ks) => ks[0],
            };
            let repeat = repeats(&plan[entry].0, pingpong);
            if pass == 1 {
                first_slot.push(results.len());
            } else if !repeat {
                continue;
            }
            let s = if repeat && passes > 1 {
                &pass_settings
            } else {
                &settings
            };
            // A later pass measures again only the figures measured so far: one
            // skipped here stays skipped, one that failed is reported failed.
            let figures = ctx.run_step(step, s, |i| {
                pass == 1 || matches!(results[first_slot[n] + i].outcome, Outcome::Ok(_))
            });
            if pass > 1 && interrupt::stop_requested().is_some() {
                // A pass cut short says nothing more about its figures.
                break 'plan;
            }
            for (i, r) in figures {
                if pass == 1 {
                    let scored = r.mode == Mode::Score;
                    report.results.push(ResultRecord::from_figure(&r));
                    results.push(r);
                    if scored {
                        // R = S / H for every score once the baseline has run, in
                        // whatever order the tests were named.
                        score::normalise(&mut results);
                        for (record, r) in report.results.iter_mut().zip(&results) {
                            if r.mode == Mode::Score {
                                *record = ResultRecord::from_figure(r);
                            }
                        }
                    }
                } else {
                    let slot = first_slot[n] + i;
                    passes::merge(&mut results[slot], r, pass, target);
                    report.results[slot] = ResultRecord::from_figure(&results[slot]);
                }
            }
            save(&report)?;
        }
    }
    progress.finish();

    let stopped = interrupt::stop_requested();
    let warnings = crate::output::warnings::collect(&env, &results);
    report.warnings = warnings.iter().map(Into::into).collect();
    passes::correct_between_passes(&mut results);
    for (record, r) in report.results.iter_mut().zip(&results) {
        if r.passes.is_some() {
            *record = ResultRecord::from_figure(r);
        }
    }
    report.cost_models = crate::output::cost_model::fit(&results);
    report.complete = stopped.is_none();
    report.finished_at = Some(now_rfc3339());
    save(&report)?;

    let (oneway_results, results_rest): (Vec<FigureResult>, Vec<FigureResult>) = results
        .iter()
        .cloned()
        .partition(|r| r.mode == Mode::OneWay);
    let (scored, results_rest): (Vec<FigureResult>, Vec<FigureResult>) = results_rest
        .into_iter()
        .partition(|r| r.mode == Mode::Score);
    let (periodic, results_rest): (Vec<FigureResult>, Vec<FigureResult>) = results_rest
        .into_iter()
        .partition(|r| r.mode == Mode::Periodic);
    let (streams, results_rest): (Vec<FigureResult>, Vec<FigureResult>) = results_rest
        .into_iter()
        .partition(|r| r.mode == Mode::Stream);
    let (pingpong, ops): (Vec<FigureResult>, Vec<FigureResult>) = results_rest
        .into_iter()
        .partition(|r| r.mode == Mode::PingPong);
    let mut out = header(
        &env,
        &report.settings,
        !pingpong.is_empty() || !oneway_results.is_empty() || !streams.is_empty(),
        !ops.is_empty() || !periodic.is_empty(),
    );
    if let Some((ss, refused)) = &scores {
        out.push_str(&format!(
            "\nthread-metric: each test's threads and its reporter on CPU {}, {}; period {:?} in {} reports",
            ss.cpu.map_or("any".into(), |c| c.to_string()),
            match refused {
                None => format!(
                    "SCHED_FIFO 40 − priority, reporter {}",
                    score::REPORTER_FIFO
                ),
                Some(e) => format!("SCHED_OTHER (SCHED_FIFO refused: {e})"),
            },
            ss.period,
            ss.intervals
        ));
    }
    out.push('\n');
    if !oneway_results.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n{}",
            table::render_oneway(&oneway_results),
            table::ONEWAY_FOOTNOTE,
            table::render_windows(&oneway_results),
        ));
    }
    if !pingpong.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            table::render(&pingpong),
            "one-way = round trip / 2, loop overhead subtracted; median of samples; p99 of single round trips; MB/s = size / one-way (10^6 B/s)"
        ));
    }
    if !streams.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            table::render_stream(&streams),
            table::STREAM_FOOTNOTE
        ));
    }
    if !ops.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            table::render_ops(&ops),
            table::OPS_FOOTNOTE
        ));
    }
    if !periodic.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            table::render_periodic(&periodic),
            table::PERIODIC_FOOTNOTE
        ));
    }
    if !scored.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            table::render_scores(&scored),
            table::SCORE_FOOTNOTE
        ));
    }
    if let Some(p) = preset {
        out.push_str(&table::render_preset(p, &results));
    }
    if !report.cost_models.is_empty() {
        out.push_str(&crate::output::cost_model::render(&report.cost_models));
    }
    print_stdout(&out)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }

    let failed = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
        .count();
    if let Some(sig) = stopped {
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

/// `--mode stream` streams IPC mechanisms only, and its board holds a
/// bounded number of samples.
fn check_stream_args(args: &RunArgs, selected: &[Selected]) -> Result<(), Failure> {
    if let Some(p) = &args.preset {
        return Err(Failure::usage(format!(
            "--mode stream: --preset {p} reproduces a ping-pong study; drop one of them"
        )));
    }
    if let Some(other) = selected.iter().find_map(|s| match s {
        Selected::Mechanism(..) => None,
        Selected::Op(b) => Some(b.info().id),
        Selected::Periodic(b) => Some(b.info().id),
        Selected::Scored(b) => Some(b.info().id),
        Selected::OneWay(m, _) => Some(m.info().id),
    }) {
        return Err(Failure::usage(format!(
            "--mode stream: '{other}' is not an IPC mechanism; stream runs mechanisms only \
             (the ipc group: {})",
            mechanisms::ids().join(", ")
        )));
    }
    if let Some(n) = args.samples
        && n as usize > crate::engine::stream::MAX_SAMPLES
    {
        return Err(Failure::usage(format!(
            "--samples {n}: --mode stream takes at most {} samples",
            crate::engine::stream::MAX_SAMPLES
        )));
    }
    Ok(())
}

/// The machine on one line, then where each kind of figure ran.
fn header(env: &Environment, s: &Settings, pingpong: bool, ops: bool) -> String {
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    let rt = s
        .rt_priority
        .map_or(String::new(), |p| format!(", SCHED_FIFO {p}"));
    let mut h = format!(
        "ipcmark {} | Linux {} ({}) | {} | {} CPUs | virt: {} | clock: {} | governor: {}",
        env!("CARGO_PKG_VERSION"),
        env.kernel,
        env.preemption,
        env.cpu_model,
        env.logical_cpus,
        env.virtualization,
        env.clocksource,
        env.frequency_governor.as_deref().unwrap_or("none"),
    );
    if pingpong {
        h.push_str(&format!(
            "\nclient CPU {}, server CPU {}, peer {}{rt}",
            cpu(s.client_cpu),
            cpu(s.server_cpu),
            match s.peer {
                PeerKind::Process => "process",
                PeerKind::Thread => "thread",
            },
        ));
    }
    if ops {
        h.push_str(&format!(
            "\nsingle-process benchmarks on CPU {}{rt}",
            cpu(s.client_cpu)
        ));
    }
    if let Some(n) = &s.placement_note {
        h.push_str(&format!("\nnote: {n}"));
    }
    h
}
