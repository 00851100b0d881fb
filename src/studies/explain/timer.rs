//! The anatomy of a timer's wake-up latency (`ipcmark explain
//! timer-latency`): a separate pass of stamped wake-ups at the figure's
//! period and placement, traced in a private tracefs instance (as root) and
//! cut into the timer interrupt's delay and handler, the wake-up, the
//! return to user space and the task's own time
//! (`analysis::explain_wakeup`), or read from per-task counters (without).

use super::Captured;
use crate::analysis::explain::tail::TailSelect;
use crate::analysis::explain::{self as anatomy, RoundTrip};
use crate::analysis::explain_wakeup as wakeup;
use crate::benchmarks::Benchmark;
use crate::engine::models::periodic::{Model, PeriodicSettings};
use crate::engine::run::load::Held;
use crate::engine::run::runner::run_stamped_wakeups;
use crate::record::FigureRecord;
use crate::record::explain::{Anatomy, ExplainRecord, PartRecord, RoundTripRecord};
use std::time::Duration;

/// The longest traced pass: `--round-trips` wake-ups, fewer where that many
/// periods would last longer.
const LONGEST_PASS: Duration = Duration::from_secs(30);

/// Whether `name` is a periodic benchmark whose figures are all wake-ups at
/// deadlines (its plan, under the command line's defaults, says so).
pub(super) fn explains(name: &str) -> bool {
    let Some(Benchmark::Periodic(b)) = crate::benchmarks::find(name) else {
        return false;
    };
    let defaults = PeriodicSettings {
        period: Duration::from_millis(1),
        duration: None,
        tolerance: 0.5,
        frequencies: vec![1000.0],
        irq_frequency: 1000.0,
        quick: true,
    };
    let plan = b.plan(&defaults);
    !plan.is_empty() && plan.iter().all(|m| matches!(m, Model::Wakeups { .. }))
}

/// The benchmarks [`explains`], in registry order.
pub(super) fn ids() -> Vec<&'static str> {
    crate::benchmarks::ids()
        .into_iter()
        .filter(|id| explains(id))
        .collect()
}

/// The wake-ups a traced pass of `period` holds: `asked`, at most
/// [`LONGEST_PASS`] of periods, at least 10.
fn wake_ups(period: Duration, asked: usize) -> usize {
    let fit = (LONGEST_PASS.as_nanos() / period.as_nanos().max(1)) as usize;
    asked.min(fit).max(10)
}

/// The anatomy of one wake-up figure: traced as root (`full`), coarse
/// without; beside it the figure's own latency (the same population: every
/// wake-up, from its histogram). With `tail`, the slowest wake-ups' too
/// (traced only: the counters have no wake-up of their own).
pub(super) fn explain_figure(
    fig: &FigureRecord,
    c: &Captured,
    asked: usize,
    tail: Option<TailSelect>,
    full: bool,
) -> Result<ExplainRecord, String> {
    let Some(p) = &fig.periodic else {
        return Err("the figure has no period".into());
    };
    let period = Duration::from_nanos(p.period_ns.max(1));
    let count = wake_ups(period, asked);
    let untraced = fig.latency_ns.as_ref().and_then(|l| {
        Some(RoundTripRecord {
            mean: l.single_mean,
            median: l.p50?,
        })
    });
    let mut ex = if full {
        traced(period, count, c, tail)?
    } else {
        let mut ex = coarse(period, count, c)?;
        let counts = ex.note.take().unwrap_or_default();
        let no_tail = super::tail::untraced_tail_line(tail.is_some(), false)
            .map_or_else(String::new, |l| format!("\n  {l}"));
        ex.note = Some(format!(
            "{}\n  {counts}{no_tail}",
            not_root(&fig.benchmark, p.period_ns)
        ));
        ex
    };
    if count < asked {
        let line = format!(
            "{count} wake-ups traced of the {asked} asked: a pass lasts at most {} s",
            LONGEST_PASS.as_secs()
        );
        ex.note = Some(match ex.note.take() {
            Some(n) => format!("{n}\n{line}"),
            None => line,
        });
    }
    ex.untraced_round_trip_ns = untraced;
    Ok(ex)
}

/// Why an anatomy without root is coarse, and the command that gives the full one.
fn not_root(name: &str, period_ns: u64) -> String {
    format!(
        "coarse: without root the kernel's tracepoints cannot be read (tracefs), so these are \
         the task's counters over the whole pass (/proc/<tid>/schedstat, /proc/interrupts, \
         /proc/softirqs, /proc/stat): means only; the timer interrupt's delay and handler, the \
         switch and the return to user space are all in the residual; `sudo ipcmark explain \
         {name} --period {}us` gives the full anatomy",
        period_ns as f64 / 1e3
    )
}

/// The CPUs to trace: the figure's, or every CPU it may run on.
fn traced_cpus(c: &Captured) -> Result<Vec<usize>, String> {
    match c.settings.client.cpu {
        Some(cpu) => Ok(vec![cpu]),
        None => crate::sys::sched::allowed_cpus()
            .map_err(|e| format!("cannot read the CPUs allowed: {e}")),
    }
}

/// How many wake-ups saw their interrupt, as a line for the note.
fn seen_line(trips: &[RoundTrip], switches_unseen: usize) -> String {
    let seen = trips
        .iter()
        .filter(|t| t.parts.contains_key(wakeup::IRQ_HANDLER))
        .count();
    let idle = trips
        .iter()
        .filter(|t| t.parts.contains_key(wakeup::IRQ_IDLE_EXIT))
        .count();
    let unseen = if switches_unseen > 0 {
        format!(
            "; after {switches_unseen} the task ran with no switch to it in the trace (the \
             kernel recorded none): their wake-up and return up to its system call's exit are one \
             part"
        )
    } else {
        String::new()
    };
    format!(
        "the waking interrupt was seen for {seen} of {} wake-ups ({idle} with the CPU idle at \
         the deadline){unseen}",
        trips.len()
    )
}

/// The traced pass of one figure and its anatomy.
fn traced(
    period: Duration,
    count: usize,
    c: &Captured,
    tail: Option<TailSelect>,
) -> Result<ExplainRecord, String> {
    let cpus = traced_cpus(c)?;
    // About ten events of 40 bytes per wake-up on its CPU, and whatever
    // else the traced CPUs do meanwhile, taken as an event every 10 µs of
    // period (4 bytes a µs, counted in µs: a 500 µs period is not 0 ms):
    // at least 4 MiB a CPU. A pass that loses events shows what it needed
    // and is run again in that (`traced_pass`).
    let per_bytes = 2048 + 4 * period.as_micros() as usize;
    let buffer_kb = (count * per_bytes / 1024).max(4096);
    // The load the figure ran under, held for the pass too.
    let held = c.load.as_ref().map(Held::start).transpose()?;
    let load_pids = held.as_ref().map(Held::pids).unwrap_or_default();
    let t = super::traced_pass(&cpus, buffer_kb, None, |hook| {
        run_stamped_wakeups(period, count, &c.settings, hook).map(|(pass, _ran_on)| pass)
    })?;
    let cut = wakeup::decompose(
        &t.trace.events,
        &t.pass.wakeups,
        t.pass.tid,
        &anatomy::syscall_name,
    );
    let trips = cut.trips;
    let (centre, parts) = anatomy::summarise(&trips);
    let note = Some(seen_line(&trips, cut.switches_unseen));
    let tail = tail.map(|select| super::tail::tail_of(&trips, select, &t.trace.labels, &load_pids));
    drop(held);
    let mut ex = t.record(
        parts,
        centre,
        trips.len(),
        note,
        Some(Anatomy::WakeUpLatency),
    );
    ex.tail = tail;
    Ok(ex)
}

/// The coarse anatomy without tracing: the same pass, with the task's
/// scheduler counters and its CPU's interrupt, softirq and steal counts
/// read before and after it. Of a wake-up's parts only the run-queue wait
/// (the scheduler's wait time per wake-up) and steal can be told apart.
fn coarse(period: Duration, count: usize, c: &Captured) -> Result<ExplainRecord, String> {
    use crate::engine::os::load::account::{self, KernelCounters};
    use crate::machine::schedstat::TaskCounters;
    use crate::machine::sysroot::SysRoot;
    let root = SysRoot::host();
    let steal = |root: &SysRoot| {
        account::parse_cpu_times(&root.read_raw("/proc/stat").unwrap_or_default()).1
    };
    type Read = (
        Option<TaskCounters>,
        KernelCounters,
        std::collections::BTreeMap<usize, account::CpuTimes>,
    );
    let mut before: Option<(i32, Read)> = None;
    let mut after: Option<Read> = None;
    let (pass, ran_on) = run_stamped_wakeups(period, count, &c.settings, &mut |on| {
        match on {
            Some(tids) => {
                let tid = tids.first().copied().unwrap_or(0);
                before = Some((
                    tid,
                    (
                        TaskCounters::read(&root, tid),
                        KernelCounters::read(),
                        steal(&root),
                    ),
                ));
            }
            None => {
                if let Some((tid, _)) = &before {
                    after = Some((
                        TaskCounters::read(&root, *tid),
                        KernelCounters::read(),
                        steal(&root),
                    ));
                }
            }
        }
        Ok(())
    })?;
    let (Some((_, (t0, k0, s0))), Some((t1, k1, s1))) = (before, after) else {
        return Err("the pass's counters were not read".into());
    };
    let (Some(t0), Some(t1)) = (t0, t1) else {
        return Err("the task's /proc/<tid>/schedstat cannot be read".into());
    };
    let n = pass.wakeups.len().max(1) as f64;
    let mut latencies: Vec<f64> = pass
        .wakeups
        .iter()
        .map(|&(d, w)| w.saturating_sub(d) as f64)
        .collect();
    let mean = latencies.iter().sum::<f64>() / n;
    latencies.sort_by(f64::total_cmp);
    let part = |name: &str, ns: f64| PartRecord {
        name: name.into(),
        mean_ns: ns / n,
        median_ns: None,
        p99_ns: None,
        share: if mean > 0.0 { ns / n / mean } else { 0.0 },
    };
    let d = t1.since(&t0);
    let tick_ns = 1e9 / crate::sys::clock::ticks_per_second() as f64;
    let stolen: u64 = ran_on
        .iter()
        .map(|cpu| {
            let b = s0.get(cpu).map_or(0, |t| t.steal);
            s1.get(cpu).map_or(0, |t| t.steal).saturating_sub(b)
        })
        .sum();
    let mut parts = vec![
        part(wakeup::RUN_QUEUE, d.wait_ns as f64),
        part("steal (10 ms ticks)", stolen as f64 * tick_ns),
    ];
    let named: f64 = parts.iter().map(|p| p.mean_ns).sum();
    parts.push(part(anatomy::RESIDUAL, (mean - named) * n));
    let mut counts = Vec::new();
    for d in account::delta(&k0, &k1, &ran_on) {
        let lines: Vec<String> = d
            .interrupts
            .iter()
            .map(|(k, v)| format!("{k} {:.3}", *v as f64 / n))
            .chain(
                d.softirqs
                    .iter()
                    .map(|(k, v)| format!("{k} {:.3}", *v as f64 / n)),
            )
            .collect();
        counts.push(format!("CPU {}: {}", d.cpu, lines.join(", ")));
    }
    Ok(ExplainRecord {
        method: "coarse".into(),
        parts,
        traced_round_trip_ns: RoundTripRecord {
            mean,
            median: if latencies.is_empty() {
                0.0
            } else {
                crate::stats::quantile_sorted(&latencies, 0.5)
            },
        },
        untraced_round_trip_ns: None,
        round_trips: pass.wakeups.len() as u64,
        lost_events: 0,
        instance: None,
        events: Vec::new(),
        copy: None,
        load: None,
        kind: Some(Anatomy::WakeUpLatency),
        note: Some(format!(
            "per wake-up: {:.2} voluntary and {:.3} involuntary switches; interrupts and \
             softirqs on the task's CPU: {}",
            d.voluntary as f64 / n,
            d.involuntary as f64 / n,
            counts.join("; ")
        )),
        wake_ups: Vec::new(),
        merged_round_trips: None,
        tail: None,
        soak: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_latency_is_explained_and_a_busy_loop_or_an_operation_is_not() {
        assert!(explains("timer-latency"));
        assert!(!explains("timer-irq-overhead"));
        assert!(!explains("getpid"));
        assert!(!explains("pipe"));
        assert!(ids().contains(&"timer-latency"));
    }

    #[test]
    fn a_pass_lasts_at_most_its_bound() {
        assert_eq!(wake_ups(Duration::from_millis(1), 2000), 2000);
        assert_eq!(wake_ups(Duration::from_millis(100), 2000), 300);
        assert_eq!(wake_ups(Duration::from_secs(60), 2000), 10);
    }
}
