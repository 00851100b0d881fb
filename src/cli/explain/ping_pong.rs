//! The anatomy of a ping-pong figure: a stamped pass traced in a private
//! tracefs instance (as root), or read from per-task counters (without).

use super::Captured;
use crate::analysis::explain::{self as anatomy, Tasks};
use crate::engine::channel::Topology as Shape;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::tracefs::Instance;
use crate::engine::run::load::Held;
use crate::engine::run::runner::run_stamped_pass;
use crate::record::FigureRecord;
use crate::record::explain::{ExplainRecord, RoundTripRecord};

/// The anatomy of one ping-pong figure: traced as root (`full`), coarse
/// without; its untraced round trip, its copy's cost where the run has a
/// size sweep, and a held load's line.
pub(super) fn explain_figure(
    fig: &FigureRecord,
    cost_models: &[crate::record::summary::CostModel],
    c: &Captured,
    round_trips: usize,
    names: &ObjectNamer,
    full: bool,
) -> Result<ExplainRecord, String> {
    let Some(mech) = crate::mechanisms::find(&fig.benchmark) else {
        return Err(format!("'{}' is not a mechanism", fig.benchmark));
    };
    // The figure's one-way samples, doubled: its round trip as `run`
    // reports it (loop overhead subtracted).
    let untraced = fig
        .samples_ns
        .as_deref()
        .filter(|v| !v.is_empty())
        .map(|v| RoundTripRecord {
            mean: 2.0 * v.iter().sum::<f64>() / v.len() as f64,
            median: 2.0 * crate::stats::median(v),
        });
    let (mut ex, load_note) = if full {
        traced(mech, fig.size_bytes, c, round_trips, names)?
    } else {
        let mut ex = coarse(mech, fig.size_bytes, c, round_trips, names)?;
        let counts = ex.note.take().unwrap_or_default();
        ex.note = Some(format!(
            "{}\n  {counts}",
            not_root(&fig.benchmark, fig.size_bytes)
        ));
        (ex, None)
    };
    ex.untraced_round_trip_ns = untraced;
    ex.copy = copy_cost(cost_models, &fig.benchmark, fig.size_bytes);
    // The load's line is kept with the anatomy, so a stored run shows it as
    // the run did.
    if let Some(l) = load_note {
        ex.note = Some(match ex.note.take() {
            Some(n) => format!("{l}\n{n}"),
            None => l,
        });
    }
    Ok(ex)
}
/// The copy's cost at `size` from `benchmark`'s warm cost model (a size
/// sweep's): the slope of the range holding the size, times the size, a
/// message each way. None without a model or outside its ranges.
fn copy_cost(
    models: &[crate::record::summary::CostModel],
    benchmark: &str,
    size: usize,
) -> Option<crate::record::explain::CopyRecord> {
    let m = models
        .iter()
        .find(|m| m.benchmark == benchmark && !m.cold)?;
    let seg = m
        .segments
        .iter()
        .find(|g| (g.from_bytes..=g.to_bytes).contains(&size))?;
    Some(crate::record::explain::CopyRecord {
        per_byte_ns: seg.per_byte_ns,
        round_trip_ns: 2.0 * seg.per_byte_ns * size as f64,
        from_bytes: seg.from_bytes,
        to_bytes: seg.to_bytes,
    })
}

/// Why an anatomy without root is coarse, and the command that gives the full one.
fn not_root(name: &str, size: usize) -> String {
    format!(
        "coarse: without root the kernel's tracepoints cannot be read (tracefs), so these \
         are per-task counters over the whole pass (/proc/<tid>/schedstat, /proc/<tid>/status, \
         /proc/interrupts, /proc/softirqs, /proc/stat): means only, the two sides' CPU time \
         overlaps across CPUs (the residual may be below zero), a wake-up's idle exit is not \
         told from sleep, and a system call from user time; `sudo ipcmark explain {name} \
         --sizes {size}` gives the full anatomy"
    )
}

/// What a coarse anatomy reads before and after the pass: each side's
/// counters, the kernel's interrupt counts, each CPU's times.
type Counters = (
    Vec<(i32, Option<crate::engine::os::schedstat::TaskCounters>)>,
    crate::engine::os::load::account::KernelCounters,
    std::collections::BTreeMap<usize, crate::engine::os::load::account::CpuTimes>,
);

/// The coarse anatomy of one figure without tracing: the same stamped
/// pass, with each side's scheduler counters and the measured CPUs'
/// interrupt, softirq and steal counts read before and after it.
fn coarse(
    mech: &dyn crate::engine::channel::Mechanism,
    size: usize,
    c: &Captured,
    round_trips: usize,
    names: &ObjectNamer,
) -> Result<ExplainRecord, String> {
    use crate::engine::os::load::account::{self, KernelCounters};
    use crate::engine::os::schedstat::TaskCounters;
    use crate::engine::os::sysroot::SysRoot;
    let root = SysRoot::host();
    let steal = |root: &SysRoot| {
        account::parse_cpu_times(&root.read_raw("/proc/stat").unwrap_or_default()).1
    };
    let mut before: Option<Counters> = None;
    let mut after = None;
    let pass = run_stamped_pass(mech, size, &c.settings, names, round_trips, &mut |on| {
        match on {
            Some(tids) => {
                let tasks = tids
                    .iter()
                    .map(|&t| (t, TaskCounters::read(&root, t)))
                    .collect();
                before = Some((tasks, KernelCounters::read(), steal(&root)));
            }
            None => {
                if let Some((tasks, _, _)) = &before {
                    let now: Vec<Option<TaskCounters>> = tasks
                        .iter()
                        .map(|(t, _)| TaskCounters::read(&root, *t))
                        .collect();
                    after = Some((now, KernelCounters::read(), steal(&root)));
                }
            }
        }
        Ok(())
    })?;
    let (Some((tasks, k0, s0)), Some((now, k1, s1))) = (before, after) else {
        return Err("the pass's counters were not read".into());
    };
    let n = (pass.stamps.len() - 1).max(1) as f64;
    let total = pass
        .stamps
        .last()
        .zip(pass.stamps.first())
        .map_or(0, |(l, f)| l - f) as f64;
    let mean = total / n;
    let part = |name: String, ns: f64| crate::record::explain::PartRecord {
        name,
        mean_ns: ns / n,
        median_ns: None,
        p99_ns: None,
        share: if mean > 0.0 { ns / n / mean } else { 0.0 },
    };
    let mut parts = Vec::new();
    let mut switches = Vec::new();
    for (i, ((_, b), a)) in tasks.iter().zip(&now).enumerate() {
        let side = if i == 0 { "client" } else { "server" };
        let (Some(b), Some(a)) = (b, a) else {
            return Err(format!("the {side}'s /proc/<tid>/schedstat cannot be read"));
        };
        let d = a.since(b);
        parts.push(part(format!("{side} on a CPU"), d.run_ns as f64));
        parts.push(part(format!("{side} run-queue wait"), d.wait_ns as f64));
        switches.push(format!(
            "{side} {:.2} voluntary and {:.3} involuntary switches",
            d.voluntary as f64 / n,
            d.involuntary as f64 / n
        ));
    }
    let tick_ns = 1e9 / crate::sys::clock::ticks_per_second() as f64;
    let stolen: u64 = pass
        .cpus
        .iter()
        .map(|cpu| {
            let b = s0.get(cpu).map_or(0, |t| t.steal);
            s1.get(cpu).map_or(0, |t| t.steal).saturating_sub(b)
        })
        .sum();
    parts.push(part("steal (10 ms ticks)".into(), stolen as f64 * tick_ns));
    let named: f64 = parts.iter().map(|p| p.mean_ns).sum();
    parts.push(part(anatomy::RESIDUAL.into(), (mean - named) * n));
    let mut counts = Vec::new();
    for d in account::delta(&k0, &k1, &pass.cpus) {
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
    let stamps = &pass.stamps;
    let mut rts: Vec<f64> = stamps.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    rts.sort_by(f64::total_cmp);
    Ok(ExplainRecord {
        method: "coarse".into(),
        parts,
        traced_round_trip_ns: RoundTripRecord {
            mean,
            median: if rts.is_empty() {
                0.0
            } else {
                crate::stats::quantile_sorted(&rts, 0.5)
            },
        },
        untraced_round_trip_ns: None,
        round_trips: (stamps.len() - 1) as u64,
        lost_events: 0,
        instance: None,
        events: Vec::new(),
        copy: None,
        kind: None,
        note: Some(format!(
            "per round trip: {}; interrupts and softirqs on the measured CPUs: {}",
            switches.join("; "),
            counts.join("; ")
        )),
    })
}

/// The traced pass of one figure and its anatomy; with a load, a line on
/// what the load's own handlers took per round trip.
fn traced(
    mech: &dyn crate::engine::channel::Mechanism,
    size: usize,
    c: &Captured,
    round_trips: usize,
    names: &ObjectNamer,
) -> Result<(ExplainRecord, Option<String>), String> {
    let s = &c.settings;
    let mut cpus: Vec<usize> = [s.client.cpu, s.server.cpu].into_iter().flatten().collect();
    if mech.info().topology == Shape::SelfLoop {
        cpus.truncate(1);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        cpus = crate::sys::sched::allowed_cpus()
            .map_err(|e| format!("cannot read the CPUs allowed: {e}"))?;
    }
    // About 40 events of 40 bytes per round trip, and the traced CPUs'
    // other tasks' switches and interrupts: 2 KiB per round trip per CPU,
    // at least 4 MiB.
    let buffer_kb = (round_trips * 2).max(4096);
    let inst = Instance::create(&cpus, buffer_kb)?;
    let mut held = c.load.as_ref().map(Held::start).transpose()?;
    let mark = held.as_mut().map(Held::before).transpose()?;
    let pass = run_stamped_pass(mech, size, s, names, round_trips, &mut |on| match on {
        Some(tasks) => inst.start(tasks),
        None => inst.stop(),
    })?;
    let load = match (held.as_mut(), &mark) {
        (Some(h), Some(m)) => Some(h.after(m, &pass.cpus)?),
        _ => None,
    };
    let trace = inst.read()?;
    let events = inst.events.clone();
    let instance = inst.dir().display().to_string();
    drop(inst);
    let trips = anatomy::decompose(
        &trace.events,
        &pass.stamps,
        Tasks {
            client: pass.client_tid,
            server: pass.server_tid,
            load: held.as_ref().map(Held::pids).unwrap_or_default(),
        },
        &anatomy::syscall_name,
    );
    let (centre, parts) = anatomy::summarise(&trips);
    // The load's handler time per round trip: its rate over the window it
    // was held (the pass and its set-up) times the traced round trip.
    let load_note = load.filter(|l| l.window_ns > 0).map(|l| {
        let (count, handler, cpu_time) = pass.cpus.iter().fold((0, 0, 0), |(n, h, t), &cpu| {
            let (cn, ch, ct) = l.sources_on(cpu);
            (n + cn, h + ch, t + ct)
        });
        let per_trip = |ns: u64| ns as f64 / l.window_ns as f64 * centre.mean;
        let (own, ran) = (per_trip(handler), per_trip(cpu_time));
        let sum = |f: fn(&str) -> bool| -> f64 {
            parts.iter().filter(|p| f(&p.name)).map(|p| p.mean_ns).sum()
        };
        let (behind, irq) = (sum(anatomy::is_load), sum(anatomy::is_interrupt));
        // The load's cost to a round trip is the interrupt that wakes its
        // process and the time the process then runs ahead of a side; its
        // handler time (stamped in its own loop) is the second's core.
        let ratio = |of: f64, to: f64, what: &str| {
            if to > 0.0 {
                format!("; {what}: ×{:.2}", of / to)
            } else {
                String::new()
            }
        };
        format!(
            "load: its sources on CPUs {:?} handled {count} interrupts in {:.1} ms: per traced \
             round trip {own:.0} ns of handler time (stamped in the handler) and {ran:.0} ns of \
             CPU time (the scheduler's, both CPUs together); parts behind its processes \
             {behind:.0} ns, interrupt parts {irq:.0} ns{}{}",
            pass.cpus,
            l.window_ns as f64 / 1e6,
            ratio(behind + irq, own, "load + interrupt parts ÷ handler time"),
            ratio(behind, ran, "load parts ÷ its CPU time"),
        )
    });
    Ok((
        ExplainRecord {
            method: "full".into(),
            parts,
            traced_round_trip_ns: centre,
            untraced_round_trip_ns: None,
            round_trips: trips.len() as u64,
            lost_events: trace.lost,
            instance: Some(instance),
            events,
            note: None,
            copy: None,
            kind: None,
        },
        load_note,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::summary::{CostModel, Segment};

    fn segment(from: usize, to: usize, per_byte: f64) -> Segment {
        Segment {
            from_bytes: from,
            to_bytes: to,
            setup_ns: 1000.0,
            per_byte_ns: per_byte,
            r2: 0.99,
            setup_ci_ns: [900.0, 1100.0],
            per_byte_ci_ns: [per_byte * 0.9, per_byte * 1.1],
            sizes: 5,
        }
    }

    #[test]
    fn the_copys_cost_is_the_slope_of_the_range_holding_the_size_each_way() {
        let models = [
            CostModel {
                benchmark: "pipe".into(),
                cold: true,
                segments: vec![segment(1, 65536, 9.0)],
            },
            CostModel {
                benchmark: "pipe".into(),
                cold: false,
                segments: vec![segment(1, 4096, 0.25), segment(4096, 65536, 0.5)],
            },
        ];
        let c = copy_cost(&models, "pipe", 8192).unwrap();
        assert_eq!((c.per_byte_ns, c.round_trip_ns), (0.5, 8192.0));
        assert_eq!((c.from_bytes, c.to_bytes), (4096, 65536));
        assert_eq!(copy_cost(&models, "pipe", 64).unwrap().round_trip_ns, 32.0);
        // Outside every range, or no model: none.
        assert_eq!(copy_cost(&models, "pipe", 1 << 20), None);
        assert_eq!(copy_cost(&models, "eventfd", 64), None);
    }
}
