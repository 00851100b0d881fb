//! `ipcmark run`'s arguments turned into the whole plan of the run, by one
//! function ([`RunPlan::from_request`]) over the arguments and what was read
//! of the machine ([`Machine`]): every check that can refuse a run (exit 2)
//! happens here, before anything is measured, held or written.

pub mod levels;
mod modes;
pub mod names;
// Called after `RunPlan::from_request`: it checks the remote flags, then
// reaches the agent (and builds a testbed) to make the plan's remote items.
pub mod remote;
mod settings;
#[cfg(test)]
mod tests;

use super::Failure;
use super::request::{InjectedFault, PeerChoice, RunMode, RunRequest};
use super::values::CpuLatency;
use crate::engine::models::periodic::PeriodicSettings;
use crate::engine::os::load::LoadPlan;
use crate::engine::os::peer::{Fault, PeerKind};
use crate::engine::os::placement;
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::{self, Item};
pub use crate::machine::cpu_latency::LatencyRequest;
use crate::mechanisms;
use crate::presets::Preset;
use crate::record::Settings;
use modes::{check_mode_flags, check_stream_args, oneway_plan, rate_items, rate_plan};
pub use names::resolve;
use settings::{PASSES, TIMER_PERIOD, budget, placement, score_settings};
use std::path::PathBuf;

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

/// How `--cpu-latency` asks the kernel to keep CPUs out of deep idle states:
/// `N` holds N µs or refuses the run, `off` asks for nothing, and by default
/// 0 µs is held when permitted (else the run goes on and says so).
pub fn latency_request(flag: Option<CpuLatency>) -> LatencyRequest {
    match flag {
        Some(CpuLatency::Hold(us)) => LatencyRequest::Required(us),
        Some(CpuLatency::Off) => LatencyRequest::None("--cpu-latency off".into()),
        None => LatencyRequest::Wanted(0),
    }
}

/// The load of a run (`--load`, `--load-cpus`): on the CPUs named, else on
/// the measured ones (`measured`: client and server, when pinned), else on
/// every allowed CPU. `--load-cpus` without `--load`, or a CPU this process
/// may not use, is refused.
pub fn load_plan(
    load: Option<&super::values::LoadArg>,
    cpus: Option<&super::values::CpuList>,
    measured: [Option<usize>; 2],
    allowed: &[usize],
) -> Result<Option<LoadPlan>, Failure> {
    let Some(load) = load else {
        return match cpus {
            Some(_) => Err(Failure::usage("--load-cpus places a load: give --load too")),
            None => Ok(None),
        };
    };
    let cpus = match cpus {
        Some(c) => {
            if let Some(bad) = c.0.iter().find(|c| !allowed.contains(c)) {
                return Err(Failure::usage(format!(
                    "--load-cpus: CPU {bad} is not one this process may use (allowed: {allowed:?})"
                )));
            }
            c.0.clone()
        }
        None => {
            let mut pinned: Vec<usize> = measured.into_iter().flatten().collect();
            pinned.dedup();
            if pinned.is_empty() {
                allowed.to_vec()
            } else {
                pinned
            }
        }
    };
    let plan = LoadPlan {
        specs: load.0.clone(),
        cpus,
    };
    if plan.process_count() > crate::engine::os::load::MAX_PROCESSES {
        return Err(Failure::usage(format!(
            "--load starts {} processes on {} CPUs; at most {}",
            plan.process_count(),
            plan.cpus.len(),
            crate::engine::os::load::MAX_PROCESSES
        )));
    }
    Ok(Some(plan))
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
    /// The MPI job the figures span, for the report's environment (`ipcmark
    /// mpi` sets it; `None` otherwise).
    pub mpi: Option<crate::machine::environment::MpiJob>,
}

impl RunPlan {
    /// The plan of `args` on `machine`, or the usage error that refuses it.
    pub fn from_request(req: &RunRequest, machine: &Machine) -> Result<RunPlan, Failure> {
        // Everything is validated before anything is measured or written.
        let preset = match &req.preset {
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
            Some(p) if !req.names.is_empty() => {
                return Err(Failure::usage(format!(
                    "--preset {} chooses its own mechanisms; drop the names {}",
                    p.name,
                    req.names.join(" ")
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
                            Item::OneWay(m, oneway_plan(req, interval, messages))
                        }
                        crate::presets::ColumnMode::Stream => Item::Stream(m, c.cold),
                    }
                })
                .collect(),
            None => resolve(&req.names, req.cold)?,
        };
        check_mode_flags(req, preset)?;
        let oneway = req.mode == Some(RunMode::Oneway);
        let selected = if oneway {
            if req.cold {
                return Err(Failure::usage(
                    "--cold applies to --mode pingpong only: a one-way figure uses warm buffers",
                ));
            }
            let plan = oneway_plan(req, req.interval, None);
            selected
                .into_iter()
                .map(|sel| match sel {
                    Item::PingPong(m, _) | Item::Stream(m, _) => Ok(Item::OneWay(m, plan)),
                    Item::OneWay(..) => Ok(sel),
                    other => Err(other.id()),
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
        let selected = if req.mode == Some(RunMode::Stream) {
            check_stream_args(req, &selected)?;
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
        let rate = req.mode == Some(RunMode::Rate);
        let passes = match (req.budget.passes, rate && req.budget.quick) {
            (Some(n), _) => n as usize,
            // A rate curve's rounds are passes: with --quick, the fewest
            // whose interval is still a number.
            (None, true) => modes::QUICK_ROUNDS,
            (None, false) => PASSES,
        };
        let selected = if rate {
            rate_items(req, selected, &rate_plan(req))?
        } else {
            selected
        };
        let sizes = match (&req.sizes, preset, req.budget.quick) {
            (Some(s), _, _) => s.sizes.clone(),
            (None, Some(p), _) => p.sizes.to_vec(),
            (None, None, true) => vec![64],
            // A rate figure is a curve of many points, round after round:
            // one size, unless --sizes asks for more.
            (None, None, false) if rate => vec![64],
            // One-way messages carry an 8-byte stamp: 8 B stands in for 1 B.
            (None, None, false) if oneway => DEFAULT_SIZES.map(|s| s.max(8)).to_vec(),
            (None, None, false) => DEFAULT_SIZES.to_vec(),
        };
        let (mut client, server, mut placement_note, cpus_available) =
            placement(req, preset.and_then(|p| p.rt_priority), machine)?;
        if rate && client.rt_priority.is_some() {
            // The sender spins between messages: under SCHED_FIFO the
            // kernel's real-time bandwidth limit would stop it for 50 ms of
            // every second. The receiver takes the priority, so that no
            // other task of the machine delays its wake-up.
            client.rt_priority = None;
            let fact = "mode rate: SCHED_FIFO for the receiver only (a spinning SCHED_FIFO sender \
                        would be stopped by the kernel's real-time bandwidth limit)";
            placement_note = Some(match placement_note {
                Some(n) => format!("{n}; {fact}"),
                None => fact.to_string(),
            });
        }
        let scores = if selected.iter().any(|s| matches!(s, Item::Scored(_))) {
            Some(score_settings(req, &client, machine)?)
        } else {
            None
        };
        crate::run::failure::check_json_path(req.sinks.json.as_deref())?;
        let cpu_latency = match (req.cpu_latency, preset) {
            (None, Some(p)) if p.idle_states => LatencyRequest::None(format!(
                "--preset {} measures with the CPUs' idle states, as its study did",
                p.name
            )),
            (flag, _) => latency_request(flag),
        };
        let settings = RunSettings {
            client,
            server,
            peer: match req.peer {
                PeerChoice::Process => PeerKind::Process,
                PeerChoice::Thread => PeerKind::Thread,
            },
            budget: budget(req, preset),
            cpus_available,
            // After the 16 messages checked before timing, and before the 16
            // checked after it, however few the timed ones are: a figure whose
            // warm-up calibrated on one slow round trip may time only a handful.
            fault: req.fault.and_then(|f| match f {
                InjectedFault::Corrupt => Some(Fault::Corrupt),
                InjectedFault::Die => Some(Fault::Die(FAULT_AFTER)),
                InjectedFault::Hang => Some(Fault::Hang(FAULT_AFTER)),
                InjectedFault::Silent => Some(Fault::Silent),
                InjectedFault::Loopback => Some(Fault::Loopback),
                InjectedFault::SharedBuffer => Some(Fault::SharedBuffer),
                InjectedFault::Unfair => None,
            }),
            home: None,
        };
        let load = load_plan(
            req.load.spec.as_ref(),
            req.load.cpus.as_ref(),
            [client.cpu, server.cpu],
            &machine.allowed_cpus,
        )?;
        let periodic = PeriodicSettings {
            period: req.timer.period.unwrap_or(TIMER_PERIOD),
            duration: req.timer.duration,
            tolerance: req.tolerance,
            frequencies: req.frequencies.0.clone(),
            irq_frequency: req.irq_frequency,
            quick: req.budget.quick,
        };
        // Each selected item with the figures it makes.
        let items: Vec<_> = selected
            .into_iter()
            .map(|item| {
                let figures = item.figures(&sizes, &periodic);
                (item, figures)
            })
            .collect();
        let items_len = items.len();
        Ok(RunPlan {
            settings: Settings {
                sizes,
                client_cpu: client.cpu,
                server_cpu: server.cpu,
                rt_priority: client.rt_priority.or(server.rt_priority),
                peer: crate::output::json::run::peer(settings.peer),
                quick: req.budget.quick,
                passes,
                budget: (&settings.budget).into(),
                placement_note,
                cpu_latency_us: None,
                load: load.as_ref().map(Into::into),
                load_sweep: None,
                preset: req.preset.clone(),
                scores: scores.as_ref().map(|(ss, refused)| {
                    crate::record::run::ScoreSettingsRecord {
                        cpu: ss.cpu,
                        period_ns: ss.period.as_nanos() as u64,
                        intervals: ss.intervals,
                        fifo_refused: refused.clone(),
                    }
                }),
                map: None,
            },
            session: session::Plan {
                items,
                settings,
                passes,
                periodic,
                scores,
                levels: vec![session::Level::only(load, items_len)],
            },
            preset,
            json: req.sinks.json.clone(),
            cpu_latency,
            mpi: None,
        })
    }
}
