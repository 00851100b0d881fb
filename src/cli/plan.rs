//! `ipcmark run`'s arguments turned into the whole plan of the run, by one
//! function ([`RunPlan::from_args`]) over the arguments and what was read
//! of the machine ([`Machine`]): every check that can refuse a run (exit 2)
//! happens here, before anything is measured, held or written.

use super::parse::CpuLatency;
use super::{Failure, FaultArg, ModeArg, PeerArg, RunArgs};
use crate::benchmarks;
use crate::engine::measure::{Budget, Precision};
use crate::engine::models::oneway::OneWayPlan;
use crate::engine::models::periodic::PeriodicSettings;
use crate::engine::models::score::{self, ScoreSettings};
use crate::engine::os::peer::{Fault, PeerKind};
use crate::engine::os::placement::{self, SidePlacement};
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::{self, Item};
use crate::mechanisms;
use crate::output::json::Settings;
use crate::presets::Preset;
use std::path::PathBuf;
use std::time::Duration;

/// Messages a faulty server (`--fault die|hang`) handles before it fails.
const FAULT_AFTER: u64 = 20;

/// Sizes of a default run.
pub const DEFAULT_SIZES: [usize; 6] = [1, 64, 1024, 4096, 16384, 65536];

/// What the plan needs to know of the machine, read before it is built.
pub struct Machine {
    /// CPUs this process may run on.
    pub allowed_cpus: Vec<usize>,
    /// The highest SCHED_FIFO priority this process may take, or why it may
    /// take none.
    pub fifo: Result<i32, String>,
}

impl Machine {
    /// Reads the allowed CPUs and the SCHED_FIFO limit.
    pub fn probe() -> Result<Machine, Failure> {
        Ok(Machine {
            allowed_cpus: crate::sys::sched::allowed_cpus()
                .map_err(|e| Failure::run(format!("sched_getaffinity: {e}")))?,
            fifo: placement::max_fifo_priority().map_err(|e| e.to_string()),
        })
    }

    /// Why SCHED_FIFO at `priority` is refused here, if it is.
    fn fifo_refused(&self, priority: i32) -> Option<String> {
        match &self.fifo {
            Ok(max) if priority <= *max => None,
            Ok(max) => Some(format!(
                "priority {priority} is above this user's limit of {max} (RLIMIT_RTPRIO)"
            )),
            Err(e) => Some(e.clone()),
        }
    }
}

/// How the run asks the kernel to keep CPUs out of deep idle states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyRequest {
    /// `--cpu-latency N`: hold N µs or refuse the run.
    Required(i32),
    /// By default: hold 0 µs when permitted, else go on and say so.
    Wanted(i32),
    /// `--cpu-latency off`, or a preset measured with idle states.
    None,
}

/// Everything `ipcmark run` will do, decided before it starts.
pub struct RunPlan {
    /// What the session measures, and how.
    pub session: session::Plan,
    /// The settings as the report records them (`cpu_latency_us` is filled
    /// in once the request is held).
    pub settings: Settings,
    /// The preset whose study-shaped table the page adds.
    pub preset: Option<&'static Preset>,
    /// Where the JSON report goes.
    pub json: Option<PathBuf>,
    /// The CPU wake-up latency to hold while measuring.
    pub cpu_latency: LatencyRequest,
}

impl RunPlan {
    /// The plan of `args` on `machine`, or the usage error that refuses it.
    pub fn from_args(args: &RunArgs, machine: &Machine) -> Result<RunPlan, Failure> {
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
                        crate::presets::ColumnMode::PingPong => Item::PingPong(m, c.cold),
                        crate::presets::ColumnMode::OneWay { interval, messages } => {
                            Item::OneWay(m, oneway_plan(args, interval, messages))
                        }
                    }
                })
                .collect(),
            None => resolve(&args.names, args.cold)?,
        };
        check_mode_flags(args, preset)?;
        let oneway = args.mode == Some(ModeArg::Oneway);
        let selected = if oneway {
            if args.cold {
                return Err(Failure::usage(
                    "--cold applies to --mode pingpong only: a one-way figure uses warm buffers",
                ));
            }
            let plan = oneway_plan(args, args.interval, None);
            selected
                .into_iter()
                .map(|sel| match sel {
                    Item::PingPong(m, _) | Item::Stream(m, _) => Ok(Item::OneWay(m, plan)),
                    Item::Op(b) => Err(b.info().id),
                    Item::Periodic(b) => Err(b.info().id),
                    Item::Scored(b) => Err(b.info().id),
                    Item::OneWay(..) => Ok(sel),
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
        let selected = if args.mode == Some(ModeArg::Stream) {
            check_stream_args(args, &selected)?;
            selected
                .into_iter()
                .map(|item| match item {
                    Item::PingPong(m, cold) => Item::Stream(m, cold),
                    other => other,
                })
                .collect()
        } else {
            selected
        };
        let sizes = match (&args.sizes, preset, args.quick) {
            (Some(s), _, _) => s.sizes.clone(),
            (None, Some(p), _) => p.sizes.to_vec(),
            (None, None, true) => vec![64],
            // One-way messages carry an 8-byte stamp: 8 B stands in for 1 B.
            (None, None, false) if oneway => DEFAULT_SIZES.map(|s| s.max(8)).to_vec(),
            (None, None, false) => DEFAULT_SIZES.to_vec(),
        };
        let (client, server, placement_note, cpus_available) =
            placement(args, preset.and_then(|p| p.rt_priority), machine)?;
        let scores = if selected.iter().any(|s| matches!(s, Item::Scored(_))) {
            Some(score_settings(args, &client, machine)?)
        } else {
            None
        };
        super::check_json_path(args.json.as_deref())?;
        let cpu_latency = match args.cpu_latency {
            Some(CpuLatency::Hold(us)) => LatencyRequest::Required(us),
            Some(CpuLatency::Off) => LatencyRequest::None,
            None if preset.is_some_and(|p| p.idle_states) => LatencyRequest::None,
            None => LatencyRequest::Wanted(0),
        };
        let settings = RunSettings {
            client,
            server,
            peer: match args.peer {
                PeerArg::Process => PeerKind::Process,
                PeerArg::Thread => PeerKind::Thread,
            },
            budget: budget(args),
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
        let passes = args.passes.map_or(PASSES, |n| n as usize);
        let periodic = PeriodicSettings {
            period: args.period.unwrap_or(TIMER_PERIOD),
            duration: args.duration,
            tolerance: args.tolerance,
            frequencies: args.frequencies.0.clone(),
            irq_frequency: args.irq_frequency,
            quick: args.quick,
        };
        // Each selected item with the figures it makes.
        let items = selected
            .into_iter()
            .map(|item| {
                let figures = item.figures(&sizes, &periodic);
                (item, figures)
            })
            .collect();
        Ok(RunPlan {
            settings: Settings {
                sizes,
                client_cpu: client.cpu,
                server_cpu: server.cpu,
                rt_priority: client.rt_priority,
                peer: settings.peer,
                quick: args.quick,
                passes,
                budget: settings.budget,
                placement_note,
                cpu_latency_us: None,
            },
            session: session::Plan {
                items,
                settings,
                passes,
                periodic,
                scores,
            },
            preset,
            json: args.json.clone(),
            cpu_latency,
        })
    }
}

impl From<benchmarks::Benchmark> for Item {
    fn from(b: benchmarks::Benchmark) -> Self {
        match b {
            benchmarks::Benchmark::Op(b) => Item::Op(b),
            benchmarks::Benchmark::Periodic(b) => Item::Periodic(b),
            benchmarks::Benchmark::Scored(b) => Item::Scored(b),
        }
    }
}

/// What makes two selected items the same figure set: id, cold, and the
/// one-way pacing (0: not one-way; 1: saturated; 2 + ns: sporadic).
fn key(item: &Item) -> (&'static str, bool, u64) {
    match item {
        Item::PingPong(_, cold) | Item::Stream(_, cold) => (item.id(), *cold, 0),
        Item::OneWay(_, plan) => (
            item.id(),
            false,
            plan.interval.map_or(1, |d| 2 + d.as_nanos() as u64),
        ),
        Item::Op(_) | Item::Periodic(_) | Item::Scored(_) => (item.id(), false, 0),
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
pub(super) fn resolve(names: &[String], cold: bool) -> Result<Vec<Item>, Failure> {
    let ipc = || {
        mechanisms::REGISTRY
            .iter()
            .map(move |&m| Item::PingPong(m, cold))
    };
    if names.is_empty() {
        return Ok(ipc().collect());
    }
    let mut out: Vec<Item> = Vec::new();
    for name in names {
        let found: Vec<Item> = if name == benchmarks::ALL {
            ipc()
                .chain(benchmarks::REGISTRY.iter().map(|&b| Item::from(b)))
                .collect()
        } else if name == benchmarks::IPC {
            ipc().collect()
        } else if let Some(group) = benchmarks::group(name) {
            let members: Vec<Item> = benchmarks::members(group.name)
                .into_iter()
                .map(Item::from)
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
            vec![Item::PingPong(m, cold)]
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
            if !out.iter().any(|o| key(o) == key(&sel)) {
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
    machine: &Machine,
) -> Result<(SidePlacement, SidePlacement, Option<String>, usize), Failure> {
    let allowed = &machine.allowed_cpus;
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
                        show(allowed)
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
    if let Some(prio) = args.rt
        && let Some(e) = machine.fifo_refused(prio)
    {
        return Err(Failure::usage(format!(
            "--rt {prio}: SCHED_FIFO is not permitted here ({e}); run as root or grant CAP_SYS_NICE"
        )));
    }
    let mut rt = args.rt;
    if let (None, Some(prio)) = (args.rt, preset_rt) {
        match machine.fifo_refused(prio) {
            None => rt = Some(prio),
            Some(e) => {
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
    machine: &Machine,
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
    let refused = machine.fifo_refused(score::REPORTER_FIFO);
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

/// `--mode stream` streams IPC mechanisms only, and its board holds a
/// bounded number of samples.
fn check_stream_args(args: &RunArgs, selected: &[Item]) -> Result<(), Failure> {
    if let Some(p) = &args.preset {
        return Err(Failure::usage(format!(
            "--mode stream: --preset {p} reproduces a ping-pong study; drop one of them"
        )));
    }
    if let Some(other) = selected.iter().find_map(|s| match s {
        Item::PingPong(..) => None,
        Item::Stream(..) => None,
        Item::Op(b) => Some(b.info().id),
        Item::Periodic(b) => Some(b.info().id),
        Item::Scored(b) => Some(b.info().id),
        Item::OneWay(m, _) => Some(m.info().id),
    }) {
        return Err(Failure::usage(format!(
            "--mode stream: '{other}' is not an IPC mechanism; stream runs mechanisms only \
             (the ipc group: {})",
            mechanisms::ids().join(", ")
        )));
    }
    if let Some(n) = args.samples
        && n as usize > crate::engine::models::stream::MAX_SAMPLES
    {
        return Err(Failure::usage(format!(
            "--samples {n}: --mode stream takes at most {} samples",
            crate::engine::models::stream::MAX_SAMPLES
        )));
    }
    Ok(())
}
