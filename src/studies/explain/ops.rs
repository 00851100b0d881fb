//! The anatomy of an op-mode benchmark's operation (`ipcmark explain
//! syscall-getpid`, `sched-yield`, `rhealstone-task-switch`, …): the operation prepared and
//! placed as `run` does, a stamped pass of `--round-trips` operations
//! traced in a private tracefs instance (as root), or read from per-task
//! counters (without), cut per operation (`analysis::op_anatomy`).

use super::Captured;
use crate::analysis::explain::{self as anatomy};
use crate::analysis::op_anatomy::{self, OpTasks};
use crate::benchmarks::Benchmark;
use crate::engine::op::Operation;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::load::Held;
use crate::engine::run::runner::run_op_stamped_pass;
use crate::record::FigureRecord;
use crate::record::explain::{Anatomy, ExplainRecord, PartRecord, RoundTripRecord};

/// The anatomy of one op-mode figure: traced as root (`full`), coarse
/// without; beside it the figure's own time per operation.
pub(super) fn explain_figure(
    fig: &FigureRecord,
    c: &Captured,
    ops: usize,
    names: &ObjectNamer,
    full: bool,
) -> Result<ExplainRecord, String> {
    let Some(Benchmark::Op(bench)) = crate::benchmarks::find(&fig.benchmark) else {
        return Err(format!("'{}' is not an op-mode benchmark", fig.benchmark));
    };
    let mut ex = if full {
        traced(bench, c, ops, names)?
    } else {
        let mut ex = coarse(bench, c, ops, names)?;
        let counts = ex.note.take().unwrap_or_default();
        ex.note = Some(format!("{}\n  {counts}", not_root(&fig.benchmark)));
        ex
    };
    ex.untraced_round_trip_ns = untraced(fig);
    ex.kind = Some(Anatomy::Operation);
    Ok(ex)
}

/// The figure's time per operation as `run` measured it, from the same
/// population as its centre: each sample is a batch's mean time per
/// operation less the loop overhead (and, for a figure per event, less the
/// baseline and divided by the events per operation). Here the division
/// and the baseline are undone: the traced operation does the whole
/// operation, the baseline's work included.
fn untraced(fig: &FigureRecord) -> Option<RoundTripRecord> {
    let per_op = fig
        .events
        .as_ref()
        .map_or(1.0, |e| f64::from(e.per_op.max(1)));
    let base = fig.baseline_ns.unwrap_or(0.0);
    let v: Vec<f64> = fig
        .samples_ns
        .as_deref()?
        .iter()
        .map(|s| s * per_op + base)
        .collect();
    if v.is_empty() {
        return None;
    }
    Some(RoundTripRecord {
        mean: v.iter().sum::<f64>() / v.len() as f64,
        median: crate::stats::median(&v),
    })
}

/// Why an anatomy without root is coarse, and the command that gives the full one.
fn not_root(name: &str) -> String {
    format!(
        "coarse: without root the kernel's tracepoints cannot be read (tracefs), so these \
         are per-task counters over the whole pass (/proc/<tid>/schedstat, /proc/<tid>/status, \
         /proc/interrupts, /proc/softirqs, /proc/stat): means only, a system call is not told \
         from user time, nor a wake-up's idle exit from sleep, and the other threads' time on \
         a CPU overlaps the measuring thread's run-queue wait or sleep (the residual may be \
         below zero); `sudo ipcmark explain {name}` gives the full anatomy"
    )
}

/// The CPUs to trace: the measuring thread's (its helpers share it), or
/// every CPU allowed when it is not pinned.
fn cpus_of(c: &Captured) -> Result<Vec<usize>, String> {
    match c.settings.client.cpu {
        Some(cpu) => Ok(vec![cpu]),
        None => crate::sys::sched::allowed_cpus()
            .map_err(|e| format!("cannot read the CPUs allowed: {e}")),
    }
}

/// The traced pass of one figure and its anatomy.
fn traced(
    bench: &dyn Operation,
    c: &Captured,
    ops: usize,
    names: &ObjectNamer,
) -> Result<ExplainRecord, String> {
    let cpus = cpus_of(c)?;
    // A system call is two events of about 40 bytes; a switch to another
    // thread a few more, and the CPUs' other tasks' switches and
    // interrupts: 2 KiB per operation per CPU, at least 4 MiB, times the
    // switches an operation is made of (a ring of 8 is 8 of them, each a
    // write, a read, a wake-up and a switch). A pass that loses events
    // shows what it needed and is run again in that (`traced_pass`).
    let per_op = bench.events().map_or(1, |e| e.per_op.max(1)) as usize;
    let buffer_kb = (ops * 2 * per_op).max(4096);
    let held = c.load.as_ref().map(Held::start).transpose()?;
    let t = super::traced_pass(&cpus, buffer_kb, None, |hook| {
        run_op_stamped_pass(bench, &c.settings, names, ops, hook)
    })?;
    let pass = &t.pass;
    let trips = op_anatomy::decompose_ops(
        &t.trace.events,
        &pass.stamps,
        OpTasks {
            thread: pass.thread,
            others: pass.others.clone(),
            load: held.as_ref().map(Held::pids).unwrap_or_default(),
        },
        pass.cpus.first().copied().or(c.settings.client.cpu),
        &anatomy::syscall_name,
    );
    drop(held);
    let (centre, parts) = anatomy::summarise(&trips);
    let note = (!pass.others.is_empty()).then(|| {
        format!(
            "the operation's other threads and processes: {} task(s), traced with it",
            pass.others.len()
        )
    });
    Ok(t.record(parts, centre, trips.len(), note, Some(Anatomy::Operation)))
}

/// What a coarse anatomy reads before and after the pass: each task's
/// counters, the kernel's interrupt counts, each CPU's steal.
struct Counters {
    /// The measuring thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, read by
    /// it): exact where its schedstat run time lags until the next tick or
    /// switch.
    cpu_ns: Option<u64>,
    tasks: Vec<Option<crate::machine::schedstat::TaskCounters>>,
    kernel: crate::engine::os::load::account::KernelCounters,
    steal: std::collections::BTreeMap<usize, u64>,
}

/// The coarse anatomy of one figure without tracing: the same stamped
/// pass, with the measuring thread's CPU time and the measuring thread's
/// and the operation's other tasks' scheduler counters and the measured CPU's interrupt, softirq and steal
/// counts read before and after it.
fn coarse(
    bench: &dyn Operation,
    c: &Captured,
    ops: usize,
    names: &ObjectNamer,
) -> Result<ExplainRecord, String> {
    use crate::engine::os::load::account::{self, KernelCounters};
    use crate::machine::schedstat::TaskCounters;
    use crate::machine::sysroot::SysRoot;
    let root = SysRoot::host();
    let read = |tids: &[i32], cpu_ns: Option<u64>| Counters {
        cpu_ns,
        tasks: tids.iter().map(|&t| TaskCounters::read(&root, t)).collect(),
        kernel: KernelCounters::read(),
        steal: account::parse_cpu_times(&root.read_raw("/proc/stat").unwrap_or_default())
            .1
            .into_iter()
            .map(|(cpu, t)| (cpu, t.steal))
            .collect(),
    };
    let mut tids: Vec<i32> = Vec::new();
    let mut before: Option<Counters> = None;
    let mut after: Option<Counters> = None;
    let pass = run_op_stamped_pass(bench, &c.settings, names, ops, &mut |on| {
        match on {
            // The thread's own CPU time is read nearest the pass: after
            // the counters before it, before them after it.
            Some(t) => {
                tids = t.to_vec();
                let mut c = read(&tids, None);
                c.cpu_ns = crate::sys::clock::thread_cputime_ns().ok();
                before = Some(c);
            }
            None => {
                let cpu_ns = crate::sys::clock::thread_cputime_ns().ok();
                after = Some(read(&tids, cpu_ns));
            }
        }
        Ok(())
    })?;
    let (Some(b), Some(a)) = (before, after) else {
        return Err("the pass's counters were not read".into());
    };
    let stamps = &pass.stamps;
    let n = (stamps.len() - 1).max(1) as f64;
    let total = stamps.last().zip(stamps.first()).map_or(0, |(l, f)| l - f) as f64;
    let mean = total / n;
    let part = |name: &str, ns: f64| PartRecord {
        name: name.into(),
        mean_ns: ns / n,
        median_ns: None,
        p99_ns: None,
        share: if mean > 0.0 { ns / n / mean } else { 0.0 },
    };
    let mut parts = Vec::new();
    let mut switches = String::new();
    let mut others_ns = 0u64;
    for (i, (tb, ta)) in b.tasks.iter().zip(&a.tasks).enumerate() {
        let (Some(tb), Some(ta)) = (tb, ta) else {
            if i == 0 {
                return Err("the measuring thread's /proc/<tid>/schedstat cannot be read".into());
            }
            // A child that ended during the pass: its time is not known.
            continue;
        };
        let d = ta.since(tb);
        if i == 0 {
            let run_ns = match (b.cpu_ns, a.cpu_ns) {
                (Some(b), Some(a)) => a.saturating_sub(b),
                _ => d.run_ns,
            };
            parts.push(part("on a CPU", run_ns as f64));
            parts.push(part("run-queue wait", d.wait_ns as f64));
            switches = format!(
                "{:.3} voluntary and {:.3} involuntary switches of the measuring thread",
                d.voluntary as f64 / n,
                d.involuntary as f64 / n
            );
        } else {
            others_ns += d.run_ns;
        }
    }
    if tids.len() > 1 {
        parts.push(part("other threads on a CPU", others_ns as f64));
    }
    let tick_ns = 1e9 / crate::sys::clock::ticks_per_second() as f64;
    let stolen: u64 = pass
        .cpus
        .iter()
        .map(|cpu| {
            let s0 = b.steal.get(cpu).copied().unwrap_or(0);
            a.steal.get(cpu).copied().unwrap_or(0).saturating_sub(s0)
        })
        .sum();
    parts.push(part("steal (10 ms ticks)", stolen as f64 * tick_ns));
    let named: f64 = parts.iter().map(|p| p.mean_ns).sum();
    parts.push(part(anatomy::RESIDUAL, (mean - named) * n));
    Ok(super::coarse_record(
        stamps,
        parts,
        format!(
            "per operation: {switches}; interrupts and softirqs on the measured CPU: {}",
            super::interrupt_counts(&b.kernel, &a.kernel, &pass.cpus, n)
        ),
        Some(Anatomy::Operation),
    ))
}
