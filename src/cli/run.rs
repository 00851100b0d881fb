//! `ipcmark run`: validate everything, then measure every mechanism × size,
//! saving the JSON after each mechanism so an interrupted run keeps its results.

use super::{Failure, FaultArg, PeerArg, RunArgs, print_stdout};
use crate::engine::channel::Mechanism;
use crate::engine::environment::{self, Environment};
use crate::engine::interrupt;
use crate::engine::objects::ObjectNamer;
use crate::engine::peer::{Fault, PeerKind};
use crate::engine::pingpong::Budget;
use crate::engine::placement::{SidePlacement, probe_rt};
use crate::engine::runner::{self, FigureResult, Outcome, RunSettings};
use crate::mechanisms;
use crate::output::json::{self, Report, ResultRecord, Settings};
use crate::output::progress::Progress;
use crate::output::table;
use std::process::ExitCode;
use std::time::Duration;

/// Sizes of a default run.
pub const DEFAULT_SIZES: [usize; 6] = [1, 64, 1024, 4096, 16384, 65536];

fn resolve_mechanisms(names: &[String]) -> Result<Vec<&'static dyn Mechanism>, Failure> {
    if names.is_empty() {
        return Ok(mechanisms::REGISTRY.to_vec());
    }
    let mut out: Vec<&'static dyn Mechanism> = Vec::new();
    for name in names {
        let m = mechanisms::find(name).ok_or_else(|| {
            Failure::usage(format!(
                "unknown mechanism '{name}'; choose from: {}",
                mechanisms::ids().join(", ")
            ))
        })?;
        if !out.iter().any(|o| o.info().id == m.info().id) {
            out.push(m);
        }
    }
    Ok(out)
}

/// Client and server placement, and a remark when the machine forces one.
fn placement(
    args: &RunArgs,
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
    let side = |cpu| SidePlacement {
        cpu: Some(cpu),
        rt_priority: args.rt,
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
        histogram_time: Duration::from_millis(if quick { 50 } else { 200 }),
        verify_rounds: 16,
        timeout: args.timeout,
    }
}

pub(super) fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

pub fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    // Everything is validated before anything is measured or written.
    let mechs = resolve_mechanisms(&args.mechanisms)?;
    let sizes = match (&args.sizes, args.quick) {
        (Some(s), _) => s.0.clone(),
        (None, true) => vec![64],
        (None, false) => DEFAULT_SIZES.to_vec(),
    };
    let (client, server, placement_note, cpus_available) = placement(&args)?;
    super::check_json_path(args.json.as_deref())?;

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
        fault: args.fault.map(|f| match f {
            FaultArg::Corrupt => Fault::Corrupt,
            FaultArg::Die => Fault::Die(50),
            FaultArg::Hang => Fault::Hang(50),
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
            rt_priority: args.rt,
            peer: settings.peer,
            quick: args.quick,
            budget: settings.budget,
            placement_note: placement_note.clone(),
        },
        results: Vec::new(),
    };

    let plan: Vec<(&dyn Mechanism, Vec<usize>)> = mechs
        .iter()
        .map(|&m| (m, runner::sizes_for(m, &sizes)))
        .collect();
    let progress = Progress::new(plan.iter().map(|(_, s)| s.len()).sum());
    let names = ObjectNamer::new();
    let mut results: Vec<FigureResult> = Vec::new();
    let save = |report: &Report| -> Result<(), Failure> {
        match &args.json {
            Some(path) => json::write_atomic(path, report)
                .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display()))),
            None => Ok(()),
        }
    };

    'mechanisms: for (mech, mech_sizes) in &plan {
        for &size in mech_sizes {
            if interrupt::stop_requested().is_some() {
                break 'mechanisms;
            }
            progress.start(&format!("{} {}", mech.info().id, table::format_size(size)));
            let r = runner::run_figure(*mech, size, &settings, &names);
            progress.done_one();
            report.results.push(ResultRecord::from_figure(&r));
            results.push(r);
        }
        save(&report)?;
    }
    progress.finish();

    let stopped = interrupt::stop_requested();
    report.complete = stopped.is_none();
    report.finished_at = Some(now_rfc3339());
    save(&report)?;

    print_stdout(&format!(
        "{}\n{}\n{}\n",
        header(&env, &report.settings),
        table::render(&results),
        "one-way = round trip / 2, loop overhead subtracted; median of samples; p99 of single round trips; MB/s = size / one-way (10^6 B/s)"
    ))?;

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

fn header(env: &Environment, s: &Settings) -> String {
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    let mut h = format!(
        "ipcmark {} | Linux {} | {} | {} CPUs | virt: {} | clock: {}\nclient CPU {}, server CPU {}, peer {}{}",
        env!("CARGO_PKG_VERSION"),
        env.kernel,
        env.cpu_model,
        env.logical_cpus,
        env.virtualization,
        env.clocksource,
        cpu(s.client_cpu),
        cpu(s.server_cpu),
        match s.peer {
            PeerKind::Process => "process",
            PeerKind::Thread => "thread",
        },
        s.rt_priority
            .map_or(String::new(), |p| format!(", SCHED_FIFO {p}")),
    );
    if let Some(n) = &s.placement_note {
        h.push_str(&format!("\nnote: {n}"));
    }
    h
}
