//! The figures timed in one process, with no channel and no peer: an
//! operation (modes `op` and `event`), the periodic model and the score
//! model, each prepared, placed, measured and released.

use super::{PassHook, RunSettings};
use crate::engine::channel::ChannelError;
use crate::engine::measure::Measurement;
use crate::engine::models::oploop;
use crate::engine::models::periodic::{self, Model};
use crate::engine::models::score::{self, ScoreContext, ScoreSettings, Scored};
use crate::engine::op::{OpContext, Operation};
use crate::engine::os::interrupt::ChildExitsHeld;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::placement::{PlacementGuard, SidePlacement, probe_rt};
use crate::engine::os::probe;
use crate::engine::run::figure::{Facts, FigureResult, OpProof, Outcome, Scheduling};
use crate::sys::process;

/// The measuring thread's placement for a benchmark that needs SCHED_FIFO:
/// the run's CPU, SCHED_FIFO at `--rt` or the benchmark's base priority
/// (lowered to leave room for its helpers) when the system permits it.
fn realtime_placement(
    need: &crate::engine::op::RealTime,
    client: &SidePlacement,
) -> (SidePlacement, Scheduling) {
    let base = client
        .rt_priority
        .unwrap_or(need.base_priority)
        .clamp(1, 99 - need.helpers_above);
    match probe_rt(base) {
        Ok(()) => (
            SidePlacement {
                cpu: client.cpu,
                rt_priority: Some(base),
            },
            Scheduling {
                policy: "SCHED_FIFO",
                base_priority: Some(base),
                fifo_refused: None,
            },
        ),
        Err(e) => (
            SidePlacement {
                cpu: client.cpu,
                rt_priority: None,
            },
            Scheduling {
                policy: "SCHED_OTHER",
                base_priority: None,
                fifo_refused: Some(format!(
                    "SCHED_FIFO priority {base} refused ({e}): ran under SCHED_OTHER, so {}",
                    need.without_fifo
                )),
            },
        ),
    }
}

/// Runs one operation benchmark on the client's placement. Never panics on a
/// failure: it is reported in the result.
pub fn run_op_figure(bench: &dyn Operation, s: &RunSettings, names: &ObjectNamer) -> FigureResult {
    let info = bench.info();
    let facts = if bench.self_timed() {
        Facts::Event(None)
    } else {
        Facts::Op(None)
    };
    let mut result = FigureResult::new(info.id, facts, info.bytes);
    if let Some(reason) = bench.unavailable() {
        result.outcome = Outcome::Skipped(reason);
        return result;
    }
    result.outcome = match measure_op_figure(bench, s, names, &mut result) {
        Ok(m) => Outcome::Ok(Box::new(m)),
        Err(e) => Outcome::Failed(e),
    };
    result
}

/// What an op-mode stamped pass gave ([`run_op_stamped_pass`]).
#[derive(Debug, Clone)]
pub struct OpStampedPass {
    /// CLOCK_MONOTONIC before each operation, and after the last.
    pub stamps: Vec<u64>,
    /// The measuring thread's id.
    pub thread: i32,
    /// The operation's other threads and child processes as the pass
    /// began, made by its `prepare` (a ring's members, Rhealstone's tasks;
    /// none for a system call; never a held load's processes).
    pub others: Vec<i32>,
    /// The CPU the measuring thread ran on.
    pub cpus: Vec<usize>,
}

/// This process's threads other than `me`, and the children of each of
/// its threads (`/proc/self/task/<tid>/children`): less those that ran
/// before `prepare`, the tasks an operation prepared. Children forked and
/// reaped inside an operation come and go and are not among them.
fn own_tasks(me: i32) -> Vec<i32> {
    let mut tids = Vec::new();
    let listed = std::fs::read_dir("/proc/self/task").into_iter().flatten();
    for t in listed.flatten() {
        let Ok(tid) = t.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if tid != me {
            tids.push(tid);
        }
        let children =
            std::fs::read_to_string(format!("/proc/self/task/{tid}/children")).unwrap_or_default();
        tids.extend(
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok()),
        );
    }
    tids.sort_unstable();
    tids.dedup();
    tids
}

/// An op-mode figure's operation prepared and placed as [`run_op_figure`]
/// does (SCHED_FIFO where the benchmark asks for it, SIGCHLD held, the same
/// warm-up), then one pass of `ops` stamped operations between
/// `around(Some(tasks))` and `around(None)` (a traced pass: the caller's
/// tracing is on only during it) instead of the figure's samples. `around`
/// is given the measuring thread's id first, then the operation's other
/// threads and processes.
pub fn run_op_stamped_pass(
    bench: &dyn Operation,
    s: &RunSettings,
    names: &ObjectNamer,
    ops: usize,
    around: &mut PassHook,
) -> Result<OpStampedPass, String> {
    if let Some(reason) = bench.unavailable() {
        return Err(reason);
    }
    crate::engine::os::interrupt::reset_for_figure();
    // What runs already (a held load's processes, the run's own threads)
    // is not the operation's.
    let me = process::gettid();
    let already = own_tasks(me);
    // As `measure_op_figure`: placed before `prepare` when the benchmark
    // needs SCHED_FIFO, and that placement restored after the operation
    // (its helpers) is dropped.
    let early = match bench.realtime() {
        Some(need) => {
            let (p, _) = realtime_placement(&need, &s.client);
            let guard = PlacementGuard::apply(&p).map_err(|e| e.to_string())?;
            Some((guard, p))
        }
        None => None,
    };
    let rt_priority = match &early {
        Some((_, p)) => p.rt_priority,
        None => s.client.rt_priority,
    };
    let prepared = bench
        .prepare(&OpContext {
            names,
            cpu: s.client.cpu,
            rt_priority,
        })
        .map_err(|e| format!("set-up: {e}"))?;
    let mut op = prepared.op;
    let _held = ChildExitsHeld::hold().map_err(|e| format!("block SIGCHLD: {e}"))?;
    let _placed = match early {
        Some(_) => None,
        None => Some(PlacementGuard::apply(&s.client).map_err(|e| e.to_string())?),
    };
    let mut others = Vec::new();
    let stamps = oploop::stamped_pass(op.as_mut(), &s.budget, ops, &mut |on| {
        let tasks = if on {
            others = own_tasks(me);
            others.retain(|t| !already.contains(t));
            Some([vec![me], others.clone()].concat())
        } else {
            None
        };
        around(tasks.as_deref()).map_err(ChannelError::Setup)
    })
    .map_err(|e| e.to_string())?;
    Ok(OpStampedPass {
        stamps,
        thread: me,
        others,
        cpus: crate::sys::sched::current_cpu().into_iter().collect(),
    })
}

fn measure_op_figure(
    bench: &dyn Operation,
    s: &RunSettings,
    names: &ObjectNamer,
    result: &mut FigureResult,
) -> Result<Measurement, String> {
    let info = bench.info();
    crate::engine::os::interrupt::reset_for_figure();
    // A benchmark that needs SCHED_FIFO is placed before it prepares: its
    // helpers start on the measuring thread's CPU beside a thread already at
    // the base priority (a SCHED_OTHER thread moved later onto a CPU where a
    // FIFO helper yields would wait for RT throttling), and are joined (the
    // operation dropped) before the placement is restored.
    let (early, scheduling) = match bench.realtime() {
        Some(need) => {
            let (p, sch) = realtime_placement(&need, &s.client);
            let guard = PlacementGuard::apply(&p).map_err(|e| e.to_string())?;
            (Some((guard, p)), Some(sch))
        }
        None => (None, None),
    };
    let rt_priority = match &early {
        Some((_, p)) => p.rt_priority,
        None => s.client.rt_priority,
    };
    if let Some(why) = scheduling.as_ref().and_then(|s| s.fifo_refused.clone()) {
        result.note = Some(why);
    }
    let prepared = bench
        .prepare(&OpContext {
            names,
            cpu: s.client.cpu,
            rt_priority,
        })
        .map_err(|e| format!("set-up: {e}"))?;
    result.note = match (result.note.take(), prepared.note) {
        (Some(a), Some(b)) => Some(format!("{b}; {a}")),
        (a, b) => b.or(a),
    };
    // Dropped last (declared first): the operation's files go after the
    // placement and the signal mask are restored.
    let mut op = prepared.op;
    let _held = ChildExitsHeld::hold().map_err(|e| format!("block SIGCHLD: {e}"))?;
    let _placed = match early {
        Some(_) => None,
        None => Some(PlacementGuard::apply(&s.client).map_err(|e| e.to_string())?),
    };
    result.cpus.extend(crate::sys::sched::current_cpu());

    let kernel_calls =
        probe::probe(op.as_mut(), &info, s.budget.timeout).map_err(|e| e.to_string())?;
    if let Some(missing) = kernel_calls
        .iter()
        .find(|k| k.must_enter && k.entered == Some(false))
    {
        return Err(format!(
            "the operation never made the {} system call: with it failed by seccomp, the operation still succeeded",
            missing.call
        ));
    }
    let avoided_but_entered: Vec<&str> = kernel_calls
        .iter()
        .filter(|k| !k.must_enter && k.entered == Some(true))
        .map(|k| k.call)
        .collect();
    if !avoided_but_entered.is_empty() {
        result.add_note(&format!(
            "{} entered the kernel",
            avoided_but_entered.join(", ")
        ));
    }
    let events = bench.events();
    // The proof is recorded now, so that a figure failing while timed still
    // shows which system calls it was proven to make.
    let proof = OpProof {
        kernel_calls,
        counter: None,
        events,
        baseline_ns: None,
        scheduling,
        findings: None,
    };
    result.facts = match result.facts {
        Facts::Event(_) => Facts::Event(Some(proof)),
        _ => Facts::Op(Some(proof)),
    };

    let timing = if bench.self_timed() {
        crate::engine::models::eventloop::measure(op.as_mut(), &s.budget, events)
    } else {
        oploop::measure(op.as_mut(), &s.budget, events)
    }
    .map_err(|e| e.to_string())?;
    let findings = op.findings();
    if let Some(f) = &findings {
        result.note = Some(match result.note.take() {
            Some(n) => format!("{}; {n}", f.note),
            None => f.note.clone(),
        });
    }
    if let Facts::Op(Some(p)) | Facts::Event(Some(p)) = &mut result.facts {
        p.counter = timing.counter;
        p.baseline_ns = timing.baseline_ns;
        p.findings = findings;
    }
    Ok(timing.measurement)
}

/// Runs one figure of the periodic model (`models::periodic`) for benchmark `id`
/// on the client's placement; SCHED_FIFO (`--rt`) only where the model
/// sleeps. Never panics on a failure: it is reported in the result.
pub fn run_periodic_figure(id: &'static str, model: &Model, s: &RunSettings) -> FigureResult {
    let mut result = FigureResult::new(id, Facts::Periodic(None), 0);
    crate::engine::os::interrupt::reset_for_figure();
    let placement = SidePlacement {
        cpu: s.client.cpu,
        rt_priority: s.client.rt_priority.filter(|_| model.may_run_rt()),
    };
    if s.client.rt_priority.is_some() && placement.rt_priority.is_none() {
        result.note = Some("busy loop: run under SCHED_OTHER despite --rt".into());
    }
    result.outcome = match PlacementGuard::apply(&placement) {
        Err(e) => Outcome::Failed(e.to_string()),
        Ok(_placed) => {
            result.cpus.extend(crate::sys::sched::current_cpu());
            match periodic::measure(model) {
                Ok((m, facts)) => {
                    result.facts = Facts::Periodic(Some(facts));
                    Outcome::Ok(Box::new(m))
                }
                Err(e) => Outcome::Failed(e.to_string()),
            }
        }
    };
    result
}

/// A traced pass of a wake-up figure ([`periodic::stamped_wakeups`]):
/// `count` wake-ups `period` apart on the client's placement, as
/// [`run_periodic_figure`] places a figure that sleeps (its CPU, SCHED_FIFO
/// under `--rt`); `around` is given the sleeping thread's id as the timed
/// wake-ups begin and `None` as they end. Returns the wake-ups and the CPU
/// the thread ran on.
pub fn run_stamped_wakeups(
    period: std::time::Duration,
    count: usize,
    s: &RunSettings,
    around: &mut PassHook,
) -> Result<(periodic::StampedWakeups, Vec<usize>), String> {
    crate::engine::os::interrupt::reset_for_figure();
    let placement = SidePlacement {
        cpu: s.client.cpu,
        rt_priority: s.client.rt_priority,
    };
    let _placed = PlacementGuard::apply(&placement).map_err(|e| e.to_string())?;
    let cpus: Vec<usize> = crate::sys::sched::current_cpu().into_iter().collect();
    let tid = [process::gettid()];
    let pass = periodic::stamped_wakeups(period, count, &mut |on| {
        around(on.then_some(tid.as_slice()))
    })
    .map_err(|e| e.to_string())?;
    Ok((pass, cpus))
}

/// Runs one figure of the score model (`models::score`): every thread of the test
/// and the reporter (this thread) on the client's CPU, under SCHED_FIFO with
/// the test's priorities when `ss.fifo`. Never panics on a failure: it is
/// reported in the result, with the counters read up to it.
pub fn run_score_figure(
    bench: &dyn Scored,
    ss: &ScoreSettings,
    fifo_refused: Option<&str>,
    names: &ObjectNamer,
) -> FigureResult {
    let info = bench.info();
    let mut result = FigureResult::new(info.id, Facts::Score(None), 0);
    if info.needs_fifo && !ss.fifo {
        result.outcome = Outcome::Skipped(format!(
            "needs strict priorities (SCHED_FIFO), refused here ({}): run as root or grant CAP_SYS_NICE",
            fifo_refused.unwrap_or("not permitted")
        ));
        return result;
    }
    if !ss.fifo {
        result.note = Some("SCHED_OTHER: priorities not applied".into());
    }
    crate::engine::os::interrupt::reset_for_figure();
    let test = match bench.prepare(&ScoreContext { names }) {
        Ok(t) => t,
        Err(e) => {
            result.outcome = Outcome::Failed(format!("set-up: {e}"));
            return result;
        }
    };
    let placement = SidePlacement {
        cpu: ss.cpu,
        rt_priority: ss.fifo.then_some(score::REPORTER_FIFO),
    };
    result.outcome = match PlacementGuard::apply(&placement) {
        Err(e) => Outcome::Failed(e.to_string()),
        Ok(_placed) => {
            result.cpus.extend(crate::sys::sched::current_cpu());
            match score::measure(&info, test, ss) {
                Ok((m, facts)) => {
                    result.facts = Facts::Score(Some(facts));
                    Outcome::Ok(Box::new(m))
                }
                Err(f) => {
                    result.facts = Facts::Score(f.facts.map(|b| *b));
                    Outcome::Failed(f.message)
                }
            }
        }
    };
    result
}
