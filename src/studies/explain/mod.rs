//! The study behind `ipcmark explain`: where a ping-pong figure's round trip goes. Each
//! figure is measured untraced exactly as `ipcmark run` measures it (the
//! run is a `run::RunRequest`, its page and report `run`'s too); then, with the same placement
//! and load, a separate pass of `--round-trips` stamped round trips is
//! traced in a private tracefs instance, and the analysis cuts each round
//! trip into parts (`analysis::explain`). Tracing is never inside the
//! figure: the traced and untraced medians are both reported, and their
//! ratio is the tracing's overhead (docs/explain.md). An op-mode
//! benchmark (the `syscall` and `sched` groups, Rhealstone's loop-timed
//! metrics) is explained the same way per operation (`ops.rs`).
//! A periodic figure of wake-ups at deadlines (`timer-latency`) gets the
//! anatomy of its wake-up latency instead, from a traced pass of wake-ups
//! (`timer.rs`).

use crate::engine::os::load::LoadPlan;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::runner::RunSettings;
use crate::record::explain::ExplainRecord;
use crate::record::{Mode, Status};
use crate::run::{Failure, Outcome};

mod ops;
mod ping_pong;
mod soak;
mod tail;
mod timer;

/// The groups whose op-mode benchmarks have an anatomy: one operation
/// between two stamps of the measuring thread.
const OP_GROUPS: &[&str] = &[
    crate::benchmarks::syscall::GROUP,
    crate::benchmarks::sched::GROUP,
    crate::benchmarks::rhealstone::GROUP,
];

/// Why `name` has no anatomy, if it has none: it is neither a mechanism
/// nor an op-mode benchmark of [`OP_GROUPS`].
fn no_anatomy(name: &str) -> Option<String> {
    use crate::benchmarks::Benchmark;
    if crate::mechanisms::find(name).is_some() {
        return None;
    }
    let why = match crate::benchmarks::find(name) {
        Some(Benchmark::Op(b)) if b.self_timed() => {
            "its threads time their own events (mode event): there is no operation between \
             two stamps of one thread to cut into parts"
        }
        Some(Benchmark::Op(b)) if OP_GROUPS.contains(&b.info().group) => return None,
        Some(Benchmark::Op(_)) => "its group has no anatomy",
        Some(Benchmark::Periodic(_)) if timer::explains(name) => return None,
        Some(Benchmark::Periodic(_)) => {
            "it is a periodic benchmark (wake-ups at deadlines, a loop under a timer): \
             no operation is stamped"
        }
        Some(Benchmark::Scored(_)) => {
            "it is a scored benchmark (operations counted in a period): no operation is \
             timed alone"
        }
        None if crate::benchmarks::group(name).is_some() => "it is a group: name its members",
        None => {
            return Some(format!(
                "explain explains ping-pong mechanisms, op-mode benchmarks and timer wake-ups; \
                 '{name}' is not one (mechanisms: {}; op-mode benchmarks: {}; wake-ups: {})",
                crate::mechanisms::ids().join(", "),
                explainable_ops().join(", "),
                timer::ids().join(", ")
            ));
        }
    };
    Some(format!(
        "explain cannot explain '{name}': {why}; it explains ping-pong mechanisms (see \
         `ipcmark list`), these op-mode benchmarks: {} and these wake-ups: {}",
        explainable_ops().join(", "),
        timer::ids().join(", ")
    ))
}

/// The op-mode benchmarks explain accepts, in registry order.
fn explainable_ops() -> Vec<&'static str> {
    crate::benchmarks::REGISTRY
        .iter()
        .filter(|b| has_anatomy(**b))
        .map(|b| b.id())
        .collect()
}

fn has_anatomy(b: crate::benchmarks::Benchmark) -> bool {
    matches!(b, crate::benchmarks::Benchmark::Op(op)
        if !op.self_timed() && OP_GROUPS.contains(&op.info().group))
}

/// Refuses a name that has no anatomy (a periodic, scored or self-timed
/// benchmark, a group, or nothing at all).
pub fn check_names(names: &[String]) -> Result<(), Failure> {
    match names.iter().find_map(|n| no_anatomy(n)) {
        Some(why) => Err(Failure::usage(why)),
        None => Ok(()),
    }
}

/// What a study asks of the anatomies of a run's figures.
#[derive(Debug, Clone, Default)]
pub struct ExplainOptions {
    /// Round trips (operations, wake-ups) in each figure's traced pass.
    pub round_trips: usize,
    /// The slowest round trips' anatomy too (a mechanism's figures, a
    /// timer's wake-ups).
    pub tail: Option<crate::analysis::explain::tail::TailSelect>,
    /// A directory to save each mechanism figure's traced pass in, as the
    /// kernel prints it (`NAME-SIZE.trace`) beside its anatomy's stretches
    /// (`NAME-SIZE.parts.tsv`): the anatomy checked against the kernel's
    /// own text.
    pub save_trace: Option<std::path::PathBuf>,
    /// With `tail`: a soak of a mechanism's figures this long, in segments
    /// of `round_trips` (`soak.rs`).
    pub soak: Option<std::time::Duration>,
}

/// What the run's plan placed and loaded its figures with, kept for the
/// traced passes.
#[derive(Clone)]
struct Captured {
    settings: RunSettings,
    load: Option<LoadPlan>,
}

/// What explaining a run's figures gave: each anatomy (also written into
/// the run's report) with its figure, and the figures none could be made of.
pub struct Explained {
    /// (benchmark, size in bytes, anatomy), in the report's order.
    pub anatomies: Vec<(String, usize, ExplainRecord)>,
    /// "benchmark size: why" for each figure whose anatomy failed.
    pub failed: Vec<String>,
    /// The signal that stopped the anatomies (or the run before them), if
    /// one did: the report is then stored as stopped, not complete.
    pub stopped: Option<i32>,
}

/// Explains every figure of `outcome` that measured: with the run's
/// placement and load still held, a traced pass of `round_trips` round
/// trips (operations, wake-ups) each, cut into parts; the anatomies go into
/// the run's report, saved where the run was (the history, `--json`), so
/// `show`, `compare` and `report --html` read them. Stops between figures
/// when a stop was asked for.
pub fn explain_run(outcome: &mut Outcome, options: &ExplainOptions) -> Explained {
    let round_trips = options.round_trips;
    let c = Captured {
        settings: outcome.settings.clone(),
        load: outcome.load.clone(),
    };
    let mut report = outcome.report().clone();
    let full = crate::sys::process::geteuid() == 0;
    let names = ObjectNamer::new();
    let mut explained = Explained {
        anatomies: Vec::new(),
        failed: Vec::new(),
        stopped: None,
    };
    for fig in report.results.iter_mut() {
        if fig.status != Status::Ok {
            continue;
        }
        if crate::engine::os::interrupt::stop_requested().is_some() {
            break;
        }
        let done = match fig.mode {
            Mode::PingPong => {
                ping_pong::explain_figure(fig, &report.cost_models, &c, options, &names, full)
            }
            Mode::Op => ops::explain_figure(fig, &c, round_trips, &names, full),
            Mode::Periodic if timer::explains(&fig.benchmark) => {
                timer::explain_figure(fig, &c, round_trips, options.tail, full)
            }
            _ => continue,
        };
        match done {
            Ok(ex) => {
                explained
                    .anatomies
                    .push((fig.benchmark.clone(), fig.size_bytes, ex.clone()));
                fig.explain = Some(ex);
            }
            Err(e) if fig.mode == Mode::Periodic => {
                explained.failed.push(format!("{}: {e}", fig.benchmark))
            }
            Err(e) => explained
                .failed
                .push(format!("{} {} B: {e}", fig.benchmark, fig.size_bytes)),
        }
    }
    // A stop during a traced pass (or after the last, before the command
    // ends) stops the command: what was explained is kept, the run stored
    // as stopped, and a pass the signal cut short is no failed anatomy.
    explained.stopped = crate::engine::os::interrupt::stop_requested();
    if explained.stopped.is_some() {
        report.header.complete = false;
        explained.failed.clear();
    }
    // Saved even when some failed: what was explained so far.
    outcome.amend(report);
    explained
}

/// A coarse anatomy's record: the stamped pass's centre (its intervals'
/// mean and median), its parts from counters and the note on them.
fn coarse_record(
    stamps: &[u64],
    parts: Vec<crate::record::explain::PartRecord>,
    note: String,
    kind: Option<crate::record::explain::Anatomy>,
) -> crate::record::explain::ExplainRecord {
    let mut each: Vec<f64> = stamps.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    each.sort_by(f64::total_cmp);
    let mean = if each.is_empty() {
        0.0
    } else {
        each.iter().sum::<f64>() / each.len() as f64
    };
    crate::record::explain::ExplainRecord {
        method: "coarse".into(),
        parts,
        traced_round_trip_ns: crate::record::explain::RoundTripRecord {
            mean,
            median: if each.is_empty() {
                0.0
            } else {
                crate::stats::quantile_sorted(&each, 0.5)
            },
        },
        untraced_round_trip_ns: None,
        round_trips: each.len() as u64,
        lost_events: 0,
        instance: None,
        events: Vec::new(),
        note: Some(note),
        copy: None,
        load: None,
        kind,
        wake_ups: Vec::new(),
        merged_round_trips: None,
        tail: None,
        soak: None,
    }
}

/// The interrupt and softirq counts on `cpus` between two readings, per
/// stamped interval (`n` of them), a line per CPU.
fn interrupt_counts(
    before: &crate::engine::os::load::account::KernelCounters,
    after: &crate::engine::os::load::account::KernelCounters,
    cpus: &[usize],
    n: f64,
) -> String {
    crate::engine::os::load::account::delta(before, after, cpus)
        .iter()
        .map(|d| {
            let lines: Vec<String> = d
                .interrupts
                .iter()
                .chain(d.softirqs.iter())
                .map(|(k, v)| format!("{k} {:.3}", *v as f64 / n))
                .collect();
            format!("CPU {}: {}", d.cpu, lines.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The CPUs a mechanism's traced pass traces: the two sides' (the
/// client's of a self-loop), and every CPU allowed where a side is not
/// placed or a broker relays.
pub(super) fn traced_cpus(
    mech: &dyn crate::engine::channel::Mechanism,
    s: &crate::engine::run::runner::RunSettings,
) -> Result<Vec<usize>, String> {
    let mut cpus: Vec<usize> = [s.client.cpu, s.server.cpu].into_iter().flatten().collect();
    if mech.info().topology == crate::engine::channel::Topology::SelfLoop {
        cpus.truncate(1);
    }
    // A broker is not placed: it runs wherever this process may (it
    // inherits the affinity the channel is opened with), so every such CPU
    // is traced, or its relaying would be a gap.
    if cpus.is_empty() || mech.relayed() {
        cpus.extend(
            crate::sys::sched::allowed_cpus()
                .map_err(|e| format!("cannot read the CPUs allowed: {e}"))?,
        );
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The trace buffer per CPU for `round_trips` of a mechanism, KiB: about
/// 40 events of 40 bytes per round trip, and the traced CPUs' other
/// tasks' switches and interrupts: 2 KiB per round trip per CPU, at least
/// 4 MiB; twice that where a broker's calls, as many again, are traced too.
pub(super) fn buffer_kb(mech: &dyn crate::engine::channel::Mechanism, round_trips: usize) -> usize {
    let relays = if mech.relayed() { 2 } else { 1 };
    (round_trips * 2).max(4096) * relays
}

/// What a traced pass gave: the pass's own result, the events the kernel
/// wrote and what it lost, the events enabled and the instance it was
/// traced in (removed by now), and the passes before it that lost events.
struct Traced<T> {
    pass: T,
    trace: crate::machine::tracefs::Trace,
    events: Vec<String>,
    instance: String,
    reruns: Vec<String>,
}

/// The most buffer a traced pass takes per CPU: 256 MiB, and at most half
/// the memory available (`MemAvailable`) over the traced CPUs.
fn max_buffer_kb(cpus: usize) -> usize {
    let available_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(usize::MAX);
    (256 * 1024).min(available_kb / 2 / cpus.max(1)).max(1024)
}

/// The buffer a pass that kept `kept` events and lost `lost` in `kb` a CPU
/// would have needed, with a quarter to spare: the pass itself measured the
/// events it makes (a full buffer held `kept`). `None` when that is no
/// more than `kb` or more than `max_kb` allows.
fn grown_buffer_kb(kb: usize, kept: usize, lost: u64, max_kb: usize) -> Option<usize> {
    let kept = kept.max(1) as f64;
    let needed = (kb as f64 * (kept + lost as f64) / kept * 1.25).ceil() as usize;
    let grown = needed.max(kb * 2).min(max_kb);
    (grown > kb).then_some(grown)
}

/// A buffer's size, in the unit that says it.
fn size(kb: usize) -> String {
    if kb < 1024 {
        format!("{kb} KiB")
    } else {
        format!("{} MiB", kb / 1024)
    }
}

/// Runs `pass` with a private tracefs instance on `cpus` (`buffer_kb` a
/// CPU to begin with), tracing only between the two calls of the hook it is
/// given, and reads what the instance holds; the instance is removed on
/// every path before this returns. A pass that lost events is run again in
/// a buffer as large as it showed it needs; one that loses events in the
/// largest buffer allowed is no anatomy (an error that says so): a round
/// trip whose bounds were lost cannot be cut, and an anatomy of the rest
/// would describe another population than the figure's.
fn traced_pass<T>(
    cpus: &[usize],
    buffer_kb: usize,
    text_to: Option<&std::path::Path>,
    mut pass: impl FnMut(&mut crate::engine::run::runner::PassHook) -> Result<T, String>,
) -> Result<Traced<T>, String> {
    let max_kb = max_buffer_kb(cpus.len());
    let mut kb = buffer_kb.min(max_kb);
    let mut reruns = Vec::new();
    loop {
        let mut inst = crate::machine::tracefs::Instance::create(cpus, kb)?;
        let out = pass(&mut |on| match on {
            Some(tasks) => inst.start(tasks),
            None => inst.stop(),
        })?;
        if let Some(to) = text_to {
            inst.save_text(to)?;
        }
        let trace = inst.read()?;
        let lost = trace.lost;
        if lost == 0 || crate::engine::os::interrupt::stop_requested().is_some() {
            return Ok(Traced {
                pass: out,
                trace,
                events: inst.events.clone(),
                instance: inst.dir().display().to_string(),
                reruns,
            });
        }
        let kept = trace.events.len();
        let Some(grown) = grown_buffer_kb(kb, kept, lost, max_kb) else {
            return Err(format!(
                "the kernel lost {lost} of {} events even in {} of trace buffer per CPU (the \
                 most explain takes here): no anatomy; fewer --round-trips make fewer events",
                kept as u64 + lost,
                size(kb)
            ));
        };
        reruns.push(format!(
            "a pass in {} a CPU lost {lost} of {} events and was run again in {}",
            size(kb),
            kept as u64 + lost,
            size(grown)
        ));
        kb = grown;
    }
}

impl<T> Traced<T> {
    /// The record of the full anatomy of its `intervals` cut into `parts`
    /// (centred at `centre`).
    fn record(
        self,
        parts: Vec<crate::record::explain::PartRecord>,
        centre: crate::record::explain::RoundTripRecord,
        intervals: usize,
        note: Option<String>,
        kind: Option<crate::record::explain::Anatomy>,
    ) -> crate::record::explain::ExplainRecord {
        crate::record::explain::ExplainRecord {
            method: "full".into(),
            parts,
            traced_round_trip_ns: centre,
            untraced_round_trip_ns: None,
            round_trips: intervals as u64,
            lost_events: self.trace.lost,
            instance: Some(self.instance),
            events: self.events,
            note: match (note, self.reruns.is_empty()) {
                (note, true) => note,
                (None, false) => Some(self.reruns.join("; ")),
                (Some(n), false) => Some(format!("{n}; {}", self.reruns.join("; "))),
            },
            copy: None,
            load: None,
            kind,
            wake_ups: Vec::new(),
            merged_round_trips: None,
            tail: None,
            soak: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmarks::{Benchmark, REGISTRY};

    #[test]
    fn a_pass_that_lost_events_is_rerun_in_the_buffer_it_showed_it_needs() {
        // Kept 1000, lost 3000 in 4 MiB: 16 MiB were needed, 20 with the spare.
        assert_eq!(grown_buffer_kb(4096, 1000, 3000, 1 << 20), Some(20480));
        // A small loss still at least doubles the buffer.
        assert_eq!(grown_buffer_kb(4096, 1000, 1, 1 << 20), Some(8192));
        // Up to the most allowed; at the most allowed, no rerun.
        assert_eq!(grown_buffer_kb(4096, 10, 1_000_000, 65536), Some(65536));
        assert_eq!(grown_buffer_kb(65536, 1000, 1, 65536), None);
        // Nothing kept at all (every page overwritten) still grows.
        assert_eq!(grown_buffer_kb(4096, 0, 5, 1 << 20), Some(30720));
        assert!(max_buffer_kb(2) >= 1024 && max_buffer_kb(2) <= 256 * 1024);
    }

    #[test]
    fn mechanisms_loop_timed_operations_and_wake_ups_have_an_anatomy_and_nothing_else() {
        for id in crate::mechanisms::ids() {
            assert_eq!(no_anatomy(id), None, "{id}");
        }
        for b in REGISTRY {
            let why = no_anatomy(b.id());
            match b {
                Benchmark::Op(op) if !op.self_timed() => assert_eq!(why, None, "{}", b.id()),
                Benchmark::Op(_) => assert!(why.unwrap().contains("time their own events")),
                Benchmark::Periodic(_) if timer::explains(b.id()) => assert_eq!(why, None),
                Benchmark::Periodic(_) => assert!(why.unwrap().contains("periodic")),
                Benchmark::Scored(_) => assert!(why.unwrap().contains("scored")),
            }
        }
        // What is refused says why and what is accepted.
        let why = no_anatomy(crate::benchmarks::syscall::GROUP).unwrap();
        assert!(
            why.contains("a group") && why.contains("op-mode benchmarks: "),
            "{why}"
        );
        let why = no_anatomy("no-such-thing").unwrap();
        assert!(
            why.contains("is not one") && why.contains("mechanisms: "),
            "{why}"
        );
        assert!(check_names(&["no-such-thing".into()]).is_err_and(|f| f.code == 2));
        assert!(!explainable_ops().is_empty());
    }
}
