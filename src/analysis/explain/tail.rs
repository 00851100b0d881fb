//! The slowest round trips of a traced pass (`explain --tail`): each one's
//! excess over the typical round trip split by part, with the culprit of
//! each part (the task that ran instead, the interrupt, the idle state),
//! and the slow round trips grouped by their largest excess and its
//! culprit (*signatures*), as `rtla timerlat -a` does for timer wake-ups.
//!
//! The typical round trip is the one at the middle rank: its parts are
//! one round trip's, so a slow one's excesses add up to its excess
//! exactly (medians taken part by part would not add up to anything).

use super::{Culprit, RESIDUAL, RoundTrip};
use crate::record::explain::{
    CulpritRecord, SignatureRecord, SlowRoundTripRecord, TailPartRecord, TailRecord,
};
use std::collections::BTreeMap;

/// Which round trips are the tail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TailSelect {
    /// The slowest `n`.
    Count(usize),
    /// The slowest share (0–1), at least [`MIN_TAIL`].
    Share(f64),
}

/// The fewest round trips a share keeps: fewer are no population to
/// group into signatures.
pub const MIN_TAIL: usize = 10;

impl TailSelect {
    /// How many of `n` round trips it keeps.
    pub fn count(self, n: usize) -> usize {
        match self {
            TailSelect::Count(k) => k.min(n),
            TailSelect::Share(p) => ((p * n as f64).ceil() as usize).max(MIN_TAIL).min(n),
        }
    }

    /// As the record says it: "0.1%" or "25".
    pub fn words(self) -> String {
        match self {
            TailSelect::Count(k) => k.to_string(),
            TailSelect::Share(p) => format!("{}%", p * 100.0),
        }
    }
}

/// How a culprit is named: the trace's words, and what is known of a task
/// beyond its command.
pub struct Naming<'a> {
    /// The label of a culprit's command or interrupt.
    pub word: &'a dyn Fn(u32) -> String,
    /// ", kernel thread", ", ipcmark's load" or "" for a task's id.
    pub task_kind: &'a dyn Fn(i32) -> String,
    /// An idle state's name ("C1", "state 1").
    pub idle_state: &'a dyn Fn(u32) -> String,
    /// The command of the process a thread belongs to, where that is
    /// another task (a pool's workers, a compiler's threads, each with a
    /// name of its own); `None` for a process's main thread or a task gone.
    pub process: &'a dyn Fn(i32) -> Option<String>,
}

impl Naming<'_> {
    /// The culprit as the record names it.
    pub fn culprit(&self, c: &Culprit) -> String {
        self.named(c, None)
    }

    /// The culprit named, a task with `pids` in place of its own id where
    /// given (a signature's tasks of one command, or the threads of one
    /// process: then named for the process).
    fn named(&self, c: &Culprit, pids: Option<&[i32]>) -> String {
        match *c {
            Culprit::Task { pid, .. } | Culprit::Outranked { pid, .. } if pid <= 0 => {
                "a task no event named".into()
            }
            Culprit::Task { pid, comm } | Culprit::Outranked { pid, comm } => {
                let word = (self.word)(comm);
                let kind = format!("{}{}", (self.task_kind)(pid), outranked(c));
                let process = (self.process)(pid);
                let ids = match (pids, &process) {
                    (Some(many), Some(p)) if many.len() > 1 => {
                        return format!("{p} [{} threads{kind}]", many.len());
                    }
                    (Some([one]), _) => format!("pid {one}"),
                    (Some(many), None) if many.len() > 1 => format!("{} pids", many.len()),
                    _ => format!("pid {pid}"),
                };
                let ids = match process {
                    Some(p) => format!("{ids}, a thread of {p}"),
                    None => ids,
                };
                if word.is_empty() {
                    format!("{ids}{kind}")
                } else {
                    format!("{word} [{ids}{kind}]")
                }
            }
            Culprit::Interrupt(l) => match (self.word)(l) {
                w if w.is_empty() => "an interrupt the kernel did not name".into(),
                w => w,
            },
            Culprit::Idle(Some(s)) => format!("idle state {}", (self.idle_state)(s)),
            Culprit::Idle(None) => "idle (no idle-state event)".into(),
            Culprit::Own => "its own work".into(),
            Culprit::Stopped => "stopped (a stop signal or a tracer)".into(),
            Culprit::NoEvent => "no event".into(),
        }
    }
}

/// What a task named behind a wait of a side of higher priority adds to
/// its name: the scheduler would not have run it first.
fn outranked(c: &Culprit) -> &'static str {
    match c {
        Culprit::Outranked { .. } => crate::record::explain::LOWER_PRIORITY,
        _ => "",
    }
}

/// How a signature reads: the part, then what it was spent behind.
fn signature(part: &str, culprit: &Culprit, named: &str) -> String {
    match culprit {
        Culprit::Task { .. } | Culprit::Outranked { .. } => format!("{part} behind {named}"),
        Culprit::Interrupt(_) => format!("{part} in {named}"),
        Culprit::Idle(_) => format!("{part} from {named}"),
        Culprit::Own | Culprit::NoEvent => format!("{part} ({named})"),
        Culprit::Stopped => part.to_string(),
    }
}

/// The tail of `trips`: the slowest by `select`, each split into its
/// excess by part with the culprits, and their signatures.
pub fn tail(trips: &[RoundTrip], select: TailSelect, naming: &Naming) -> TailRecord {
    let mut order: Vec<usize> = (0..trips.len()).collect();
    order.sort_by_key(|&i| (trips[i].total_ns, i));
    let n = select.count(trips.len());
    let typical = order.get(order.len() / 2).map(|&i| &trips[i]);
    let slowest: Vec<(u64, &RoundTrip)> = order
        .iter()
        .rev()
        .take(n)
        .map(|&i| (i as u64, &trips[i]))
        .collect();
    tail_of_kept(
        &slowest,
        typical,
        trips.len() as u64,
        select.words(),
        naming,
    )
}

/// The tail from the slowest round trips already kept (a soak keeps them
/// segment by segment): `slowest` slowest first, each with its place in
/// the pass; `typical` the round trip the excess is counted from; `seen`
/// the round trips they were taken from; `asked` what was asked.
pub fn tail_of_kept(
    slowest: &[(u64, &RoundTrip)],
    typical: Option<&RoundTrip>,
    seen: u64,
    asked: String,
    naming: &Naming,
) -> TailRecord {
    let typical_ns = typical.map_or(0.0, |t| t.total_ns as f64);
    let (slowest, leads): (Vec<SlowRoundTripRecord>, Vec<Culprit>) = slowest
        .iter()
        .map(|&(i, trip)| slow(i, trip, typical, naming))
        .unzip();
    // A signature is the part and what it was spent behind: tasks of one
    // command, or threads of one process (a build's compilers, a pool's
    // workers), are one culprit, their ids listed in the count.
    struct Group {
        count: usize,
        excess: f64,
        lead: Culprit,
        pids: Vec<i32>,
    }
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for (s, lead) in slowest.iter().zip(&leads) {
        let key = match *lead {
            Culprit::Task { pid, comm } | Culprit::Outranked { pid, comm } if pid > 0 => {
                let kind = format!("{}{}", (naming.task_kind)(pid), outranked(lead));
                let who = match (naming.process)(pid) {
                    Some(p) => format!("process {p}"),
                    None => format!("task {}", (naming.word)(comm)),
                };
                (lead_part(s), format!("{who}{kind}"))
            }
            _ => (lead_part(s), naming.culprit(lead)),
        };
        let g = groups.entry(key).or_insert(Group {
            count: 0,
            excess: 0.0,
            lead: *lead,
            pids: Vec::new(),
        });
        g.count += 1;
        g.excess += s.excess_ns;
        if let Culprit::Task { pid, .. } | Culprit::Outranked { pid, .. } = *lead
            && !g.pids.contains(&pid)
        {
            g.pids.push(pid);
        }
    }
    let mut signatures: Vec<SignatureRecord> = groups
        .into_iter()
        .map(|((part, _), g)| {
            g_record(
                part,
                &g.lead,
                &g.pids,
                g.count,
                g.excess,
                slowest.len(),
                naming,
            )
        })
        .collect();
    signatures.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.mean_excess_ns.total_cmp(&a.mean_excess_ns))
    });
    TailRecord {
        round_trips_seen: seen,
        asked,
        threshold_ns: slowest.last().map_or(0.0, |s| s.round_trip_ns),
        typical_ns,
        slowest,
        signatures,
    }
}

/// The part a slow round trip's signature names: its largest excess.
fn lead_part(s: &SlowRoundTripRecord) -> String {
    s.parts.first().map_or_else(String::new, |p| p.name.clone())
}

/// A signature's record: `count` of the `of` slowest, their summed excess.
fn g_record(
    part: String,
    lead: &Culprit,
    pids: &[i32],
    count: usize,
    excess: f64,
    of: usize,
    naming: &Naming,
) -> SignatureRecord {
    let culprit = naming.named(lead, Some(pids));
    SignatureRecord {
        signature: signature(&part, lead, &culprit),
        part,
        culprit,
        count: count as u64,
        share: count as f64 / of.max(1) as f64,
        mean_excess_ns: excess / count as f64,
    }
}

/// One slow round trip against the typical one, and the culprit of its
/// largest excess.
fn slow(
    index: u64,
    trip: &RoundTrip,
    typical: Option<&RoundTrip>,
    naming: &Naming,
) -> (SlowRoundTripRecord, Culprit) {
    let empty = BTreeMap::new();
    let base = typical.map_or(&empty, |t| &t.parts);
    let mut names: Vec<&String> = trip.parts.keys().chain(base.keys()).collect();
    names.sort();
    names.dedup();
    let mut parts: Vec<(TailPartRecord, Culprit)> = names
        .into_iter()
        .map(|name| {
            let ns = trip.parts.get(name).copied().unwrap_or(0) as f64;
            let typical_ns = base.get(name).copied().unwrap_or(0) as f64;
            let mut culprits: Vec<(Culprit, u64)> = trip
                .culprits
                .iter()
                .filter(|((p, _), _)| p == name)
                .map(|((_, c), &v)| (*c, v))
                .collect();
            culprits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let lead = culprits.first().map_or(
                if name == RESIDUAL {
                    Culprit::NoEvent
                } else {
                    Culprit::Own
                },
                |c| c.0,
            );
            let record = TailPartRecord {
                name: name.clone(),
                ns,
                typical_ns,
                excess_ns: ns - typical_ns,
                culprit: naming.culprit(&lead),
                culprits: culprits
                    .iter()
                    .map(|(c, v)| CulpritRecord {
                        name: naming.culprit(c),
                        ns: *v as f64,
                    })
                    .collect(),
            };
            (record, lead)
        })
        .collect();
    parts.sort_by(|a, b| {
        b.0.excess_ns
            .total_cmp(&a.0.excess_ns)
            .then(a.0.name.cmp(&b.0.name))
    });
    let total = trip.total_ns as f64;
    let lead = parts.first().map_or(Culprit::NoEvent, |(_, c)| *c);
    let signature = parts
        .first()
        .map_or_else(String::new, |(p, c)| signature(&p.name, c, &p.culprit));
    let record = SlowRoundTripRecord {
        index,
        round_trip_ns: total,
        excess_ns: total - typical.map_or(0.0, |t| t.total_ns as f64),
        parts: parts.into_iter().map(|(p, _)| p).collect(),
        signature,
    };
    (record, lead)
}
