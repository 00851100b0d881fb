//! The anatomy of a ping-pong figure: a stamped pass traced in a private
//! tracefs instance (as root), or read from per-task counters (without).

use super::Captured;
use crate::analysis::explain::tail::TailSelect;
use crate::analysis::explain::{self as anatomy, Tasks};
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::load::Held;
use crate::engine::run::runner::run_stamped_pass;
use crate::record::FigureRecord;
use crate::record::explain::{ExplainRecord, LoadInterruptRecord, RoundTripRecord};

/// The anatomy of one ping-pong figure: traced as root (`full`), coarse
/// without; its untraced round trip, its copy's cost where the run has a
/// size sweep, and a held load's line.
pub(super) fn explain_figure(
    fig: &FigureRecord,
    cost_models: &[crate::record::summary::CostModel],
    c: &Captured,
    options: &super::ExplainOptions,
    names: &ObjectNamer,
    full: bool,
) -> Result<ExplainRecord, String> {
    let round_trips = options.round_trips;
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
    let mut ex = if let (true, Some(d), Some(select)) = (full, options.soak, options.tail) {
        let (keep, asked) = match select {
            TailSelect::Count(k) => (k, k.to_string()),
            TailSelect::Share(_) => (
                super::soak::SOAK_KEEP,
                format!(
                    "{} (a soak keeps a count: {} asked)",
                    super::soak::SOAK_KEEP,
                    select.words()
                ),
            ),
        };
        super::soak::soak(mech, fig.size_bytes, c, options, names, d, keep, asked)?
    } else if full {
        traced(
            mech,
            fig.size_bytes,
            c,
            round_trips,
            names,
            fig.load.as_ref(),
            options,
        )?
    } else {
        let mut ex = coarse(mech, fig.size_bytes, c, round_trips, names)?;
        let counts = ex.note.take().unwrap_or_default();
        let no_tail =
            super::tail::untraced_tail_line(options.tail.is_some(), options.soak.is_some())
                .map_or_else(String::new, |l| format!("\n  {l}"));
        ex.note = Some(format!(
            "{}\n  {counts}{no_tail}",
            not_root(&fig.benchmark, fig.size_bytes)
        ));
        ex
    };
    ex.untraced_round_trip_ns = untraced;
    ex.copy = copy_cost(cost_models, &fig.benchmark, fig.size_bytes);
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
    Vec<(i32, Option<crate::machine::schedstat::TaskCounters>)>,
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
    use crate::machine::schedstat::TaskCounters;
    use crate::machine::sysroot::SysRoot;
    let root = SysRoot::host();
    let steal = |root: &SysRoot| {
        account::parse_cpu_times(&root.read_raw("/proc/stat").unwrap_or_default()).1
    };
    let mut before: Option<Counters> = None;
    let mut after = None;
    // The load is held as it was for the figure (its processes are not
    // told from other tasks here: their time is in the run-queue waits).
    let _held = c.load.as_ref().map(Held::start).transpose()?;
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
    // The hook's tasks: the client, the server, then a broker's threads
    // (summed: one broker).
    let mut sums: Vec<(&str, [u64; 4])> = Vec::new();
    for (i, ((_, b), a)) in tasks.iter().zip(&now).enumerate() {
        let side = match i {
            0 => "client",
            1 => "server",
            _ => anatomy::BROKER,
        };
        let (Some(b), Some(a)) = (b, a) else {
            return Err(format!("the {side}'s /proc/<tid>/schedstat cannot be read"));
        };
        let d = a.since(b);
        let add = [d.run_ns, d.wait_ns, d.voluntary, d.involuntary];
        match sums.iter_mut().find(|(s, _)| *s == side) {
            Some((_, sum)) => sum.iter_mut().zip(add).for_each(|(s, a)| *s += a),
            None => sums.push((side, add)),
        }
    }
    let mut parts = Vec::new();
    let mut switches = Vec::new();
    for (side, [run, wait, voluntary, involuntary]) in sums {
        parts.push(part(format!("{side} on a CPU"), run as f64));
        parts.push(part(format!("{side} run-queue wait"), wait as f64));
        switches.push(format!(
            "{side} {:.2} voluntary and {:.3} involuntary switches",
            voluntary as f64 / n,
            involuntary as f64 / n
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
    Ok(super::coarse_record(
        &pass.stamps,
        parts,
        format!(
            "per round trip: {}; interrupts and softirqs on the measured CPUs: {}",
            switches.join("; "),
            super::interrupt_counts(&k0, &k1, &pass.cpus, n)
        ),
        None,
    ))
}

/// The traced pass of one figure and its anatomy; with a load, a line on
/// what the load's own handlers took per round trip.
fn traced(
    mech: &dyn crate::engine::channel::Mechanism,
    size: usize,
    c: &Captured,
    round_trips: usize,
    names: &ObjectNamer,
    figure: Option<&crate::record::load::LoadRecord>,
    options: &super::ExplainOptions,
) -> Result<ExplainRecord, String> {
    let saved = options.save_trace.as_ref().map(|dir| {
        let stem = format!("{}-{size}", mech.info().id);
        (
            dir.join(format!("{stem}.trace")),
            dir.join(format!("{stem}.parts.tsv")),
        )
    });
    let s = &c.settings;
    let cpus = super::traced_cpus(mech, s)?;
    let buffer_kb = super::buffer_kb(mech, round_trips);
    let mut held = c.load.as_ref().map(Held::start).transpose()?;
    let t = super::traced_pass(
        &cpus,
        buffer_kb,
        saved.as_ref().map(|s| s.0.as_path()),
        |hook| {
            // Marked again for each pass: a pass run again in a larger buffer
            // accounts for its own load alone.
            let mark = held.as_mut().map(Held::before).transpose()?;
            let pass = run_stamped_pass(mech, size, s, names, round_trips, hook)?;
            let load = match (held.as_mut(), &mark) {
                (Some(h), Some(m)) => Some(h.after(m, &pass.cpus)?),
                _ => None,
            };
            Ok((pass, load))
        },
    )?;
    let (pass, load) = &t.pass;
    let handlers = held.as_ref().map(Held::handler_pids).unwrap_or_default();
    let load_pids = held.as_ref().map(Held::pids).unwrap_or_default();
    let mut segments = Vec::new();
    let d = anatomy::decompose_into(
        &t.trace.events,
        &pass.stamps,
        Tasks {
            client: pass.client_tid,
            server: pass.server_tid,
            relays: pass.relay_tids.clone(),
            load: load_pids.clone(),
            handlers: handlers.clone(),
        },
        &anatomy::syscall_name,
        saved.is_some().then_some(&mut segments),
    );
    if let Some((_, tsv)) = &saved {
        super::tail::save_segments(tsv, &segments, pass)?;
    }
    let (centre, parts) = anatomy::summarise(&d.trips);
    let tail = options
        .tail
        .map(|select| super::tail::tail_of(&d.trips, select, &t.trace.labels, &load_pids));
    let interrupt = load
        .as_ref()
        .filter(|l| l.window_ns > 0 && !handlers.is_empty())
        .map(|l| load_interrupt(l, &pass.cpus, figure, centre.mean, &parts));
    let mut notes: Vec<String> = pass
        .relay
        .as_ref()
        .map(|r| broker_note(r, &pass.relay_tids, &t.trace.events))
        .into_iter()
        .collect();
    notes.extend(super::tail::wake_up_notes(
        &d,
        pass.stamps.len().saturating_sub(1),
    ));
    let note = (!notes.is_empty()).then(|| notes.join("\n"));
    let mut ex = t.record(parts, centre, d.trips.len(), note, None);
    ex.load = interrupt;
    ex.wake_ups = super::tail::wake_up_records(&d);
    ex.merged_round_trips = Some(d.merged_round_trips);
    ex.tail = tail;
    Ok(ex)
}

/// What the anatomy says of the task that relays each message: traced,
/// with what its parts are, or not, and where its time is then.
fn broker_note(
    relay: &crate::engine::channel::Relay,
    tids: &[i32],
    events: &[crate::machine::tracefs::decode::TraceEvent],
) -> String {
    let Some(pid) = relay.pid else {
        return format!(
            "broker: {}: not traced, so its time relaying each message is in the residual",
            relay.what
        );
    };
    let mut cpus: Vec<usize> = events
        .iter()
        .filter(|e| tids.contains(&e.pid))
        .map(|e| e.cpu)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let on = if cpus.is_empty() {
        "no event of it was seen".to_string()
    } else {
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        format!("seen on CPU {}", list.join(", "))
    };
    format!(
        "broker: {}, pid {pid} ({} thread{}), traced ({on}): each message goes client → \
         broker → server and back, and the \"{b}\" parts are its time holding it (its \
         wake-up, its system calls, its user time, interrupts meanwhile)",
        relay.what,
        tids.len(),
        if tids.len() == 1 { "" } else { "s" },
        b = anatomy::BROKER,
    )
}

/// A held load's interrupt time per traced round trip as the load accounts
/// it, beside the anatomy's interrupt parts. The load's accounting is the
/// one its corrected figures rest on (`run::correct`): the kernel's hard
/// and soft interrupt time on the measured CPUs plus its handler
/// processes' CPU time there, over the window, per CPU: f. The round trip
/// is on one CPU at a time, so interrupts landing evenly on its path take
/// f of it. The kernel's times are in ticks of /proc/stat, so the traced
/// pass's window is pooled with the untraced figure's (same load, same
/// CPUs) where the figure has one.
fn load_interrupt(
    pass_load: &crate::engine::run::load::FigureLoad,
    cpus: &[usize],
    figure: Option<&crate::record::load::LoadRecord>,
    round_trip_ns: f64,
    parts: &[crate::record::explain::PartRecord],
) -> LoadInterruptRecord {
    // The sources' CPU time is the scheduler's, to the ns: the traced
    // pass's own (tracing makes every activation dearer). The kernel's
    // interrupt time is in ticks of /proc/stat: pooled with the untraced
    // figure's window, same load, same CPUs.
    let n = cpus.len().max(1) as f64;
    let sources: u64 = cpus.iter().map(|&c| pass_load.sources_on(c).2).sum();
    let mut kernel_ns: f64 = cpus
        .iter()
        .map(|&c| pass_load.interrupt_ns_on(c) - pass_load.sources_on(c).2)
        .sum::<u64>() as f64;
    let mut window_ns = pass_load.window_ns as f64;
    if let Some(l) = figure {
        let on: Vec<_> = l.cpus.iter().filter(|c| cpus.contains(&c.cpu)).collect();
        if on.len() == cpus.len() {
            kernel_ns += on
                .iter()
                .map(|c| (c.irq_ns + c.softirq_ns) as f64)
                .sum::<f64>();
            window_ns += l.window_ms * 1e6;
        }
    }
    let fraction =
        sources as f64 / (pass_load.window_ns.max(1) as f64 * n) + kernel_ns / (window_ns * n);
    let stamped: u64 = cpus.iter().map(|&c| pass_load.sources_on(c).1).sum();
    let per_cpu = pass_load.window_ns as f64 * cpus.len().max(1) as f64;
    let sum = |f: &dyn Fn(&str) -> bool| -> f64 {
        parts.iter().filter(|p| f(&p.name)).map(|p| p.mean_ns).sum()
    };
    let parts_ns = sum(&anatomy::is_interrupt);
    let handler_parts_ns = sum(&anatomy::is_handler);
    let accounted_ns = fraction * round_trip_ns;
    LoadInterruptRecord {
        cpus: cpus.to_vec(),
        window_ms: window_ns / 1e6,
        fraction,
        accounted_ns,
        stamped_ns: if per_cpu > 0.0 {
            stamped as f64 / per_cpu * round_trip_ns
        } else {
            0.0
        },
        parts_ns,
        handler_parts_ns,
        ratio: (accounted_ns > 0.0).then(|| parts_ns / accounted_ns),
    }
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
