//! The sweep along a pass's events that cuts each round trip into parts
//! (`Sweep` holds who has the message and what each task is doing), and
//! the stretch of a wake-up named again where its switch in was not seen.

use super::{Culprit, Decomposed, RoundTrip, Sched, Sweep, Tasks, WakeUps};
use crate::machine::tracefs::decode::TraceEvent;
use std::collections::BTreeMap;

/// A stretch of a holder's wake-up already counted.
struct Stretch {
    trip: usize,
    part: String,
    culprit: Culprit,
    ns: u64,
    /// Its segment's index, where segments are kept.
    at: usize,
    /// Where it began, ns.
    start: u64,
}

/// One stretch of the path with one part: from `start_ns` to `end_ns` (the
/// trace's clock) in round trip `trip`; consecutive segments meet, and a
/// part changes only where an event is (or at a stamp).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The round trip (0: the first).
    pub trip: usize,
    /// Where it begins, ns.
    pub start_ns: u64,
    /// Where it ends, ns.
    pub end_ns: u64,
    /// Its part.
    pub part: String,
}

/// Cuts the round trips between consecutive `stamps` (the client's clock,
/// on the trace's clock) into parts from `events` (ordered by time), and
/// counts what the pass's wake-ups lacked; `name` names a system call by
/// its number; each stretch of the path is kept in `segments` where given
/// (a pass's anatomy checked against the kernel's text trace). Where a
/// side runs with no switch to it seen (the kernel leaves some out on these
/// guests), its wake-up's idle exit and rest, as far as they were counted,
/// are one stretch that also holds the switch and the return of the system
/// call it slept in: they are named for both ("server wake-up + read return
/// (no switch seen)"), never for one of them.
pub fn decompose_into(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
    segments: Option<&mut Vec<Segment>>,
) -> Decomposed {
    decompose_inner(events, stamps, tasks, name, segments, 0)
}

/// [`decompose_all`], cutting into parts only the round trips longer than
/// `above_ns` (the others keep their length, with no parts): a soak's
/// segment, of which only what is slower than what it keeps matters, held
/// in memory for those alone.
pub fn decompose_slow(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
    above_ns: u64,
) -> Decomposed {
    decompose_inner(events, stamps, tasks, name, None, above_ns)
}

fn decompose_inner(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
    mut segments: Option<&mut Vec<Segment>>,
    above_ns: u64,
) -> Decomposed {
    let Some((&first, _)) = stamps.split_first() else {
        return Decomposed::default();
    };
    let mut sweep = Sweep::new(tasks, name);
    let mut trips: Vec<RoundTrip> = RoundTrip::between(stamps);
    let last = *stamps.last().expect("stamps");
    // The holder's wake-up so far, while it is one: (holder, stretches).
    let mut waking: (usize, Vec<Stretch>) = (usize::MAX, Vec::new());
    let mut merged = std::collections::BTreeSet::new();
    // The round trip `now` falls in (the next stamp after it is `stamps[k + 1]`).
    let mut k = 0usize;
    let mut now = first;
    let mut next_event = events.iter().peekable();
    // Events before the first stamp only set the state.
    while let Some(e) = next_event.next_if(|e| e.ts_ns <= first) {
        sweep.apply(e);
    }
    sweep.unswitched = None;
    sweep.back_to_client();
    while k < trips.len() {
        let end = stamps[k + 1];
        let until = next_event.peek().map_or(end, |e| e.ts_ns.min(end));
        if until > now {
            let (part, culprit) = sweep.part();
            let ns = until - now;
            let trip = &mut trips[k];
            if above_ns == 0 || trip.total_ns > above_ns {
                *trip.parts.entry(part.clone()).or_default() += ns;
                *trip.culprits.entry((part.clone(), culprit)).or_default() += ns;
            }
            let at = match segments.as_deref_mut() {
                Some(segs) => {
                    segs.push(Segment {
                        trip: k,
                        start_ns: now,
                        end_ns: until,
                        part: part.clone(),
                    });
                    segs.len() - 1
                }
                None => usize::MAX,
            };
            if matches!(sweep.state[sweep.holder].sched, Sched::Woken { .. }) {
                if waking.0 != sweep.holder {
                    waking = (sweep.holder, Vec::new());
                }
                waking.1.push(Stretch {
                    trip: k,
                    part,
                    culprit,
                    ns,
                    at,
                    start: now,
                });
            } else {
                waking.1.clear();
            }
            now = until;
        }
        if now >= end {
            k += 1;
            // The client holds the message at every stamp: it has its reply.
            sweep.back_to_client();
            continue;
        }
        if let Some(e) = next_event.next() {
            sweep.apply(e);
            if let Some((i, syscall)) = sweep.unswitched.take()
                && i == waking.0
            {
                let w = sweep.ids[i].1.word();
                let what = syscall.map_or_else(|| "system call".to_string(), |id| (sweep.name)(id));
                let both = format!("{w} wake-up + {what} return (no switch seen)");
                let stretches: Vec<Stretch> = waking.1.drain(..).collect();
                rename(
                    &mut trips,
                    segments.as_deref_mut(),
                    &mut merged,
                    stretches.into_iter().filter(|s| {
                        s.part.ends_with(" wake-up: idle exit")
                            || s.part.ends_with(" wake-up: rest")
                    }),
                    &both,
                    Culprit::NoEvent,
                );
            }
            // Another task ran on the CPU the holder waits for, its switch
            // in left out: from its wake-up, the holder's idle exit and rest
            // there were partly that task's run.
            if let Some((cpu, pid)) = sweep.unseen_run.take()
                && waking.0 == sweep.holder
                && !waking.1.is_empty()
                && sweep.waits_on(cpu)
            {
                let w = sweep.ids[sweep.holder].1.word();
                let what = if sweep.tasks.handlers.contains(&pid) {
                    super::HANDLER
                } else if sweep.tasks.load.contains(&pid) {
                    "load"
                } else {
                    "another task"
                };
                let both = format!("{w} wake-up + {what} (no switch seen)");
                let since = sweep.woken_at.get(&pid).copied().unwrap_or(0);
                let comm = sweep.comm_of.get(&pid).copied().unwrap_or(0);
                let (moved, kept): (Vec<Stretch>, Vec<Stretch>) =
                    waking.1.drain(..).partition(|s| {
                        (s.part.ends_with(" wake-up: idle exit")
                            || s.part.ends_with(" wake-up: rest"))
                            && s.start >= since
                    });
                waking.1 = kept;
                rename(
                    &mut trips,
                    segments.as_deref_mut(),
                    &mut merged,
                    moved.into_iter(),
                    &both,
                    Culprit::Task { pid, comm },
                );
            }
            sweep.settle();
        }
    }
    debug_assert!(now == last || trips.is_empty());
    // Per side: the broker's threads are one broker.
    let mut wake_ups: Vec<WakeUps> = Vec::new();
    for w in sweep.wake_ups {
        match wake_ups.iter_mut().find(|x| x.side == w.side) {
            Some(x) => {
                x.seen += w.seen;
                x.no_switch_in += w.no_switch_in;
                x.no_waking += w.no_waking;
                x.early += w.early;
            }
            None => wake_ups.push(w),
        }
    }
    Decomposed {
        trips,
        wake_ups,
        merged_round_trips: merged.len() as u64,
    }
}

/// Moves `ns` of `map[from]` to `map[to]`, dropping `from` when empty.
fn move_ns<K: Ord + Clone>(map: &mut BTreeMap<K, u64>, from: &K, to: K, ns: u64) {
    if let Some(v) = map.get_mut(from) {
        *v -= ns.min(*v);
        if *v == 0 {
            map.remove(from);
        }
    }
    *map.entry(to).or_default() += ns;
}

/// Names `stretches` (already counted) `name`, behind `culprit`, in their
/// round trips and segments; each round trip so renamed is `merged`.
fn rename(
    trips: &mut [RoundTrip],
    mut segments: Option<&mut Vec<Segment>>,
    merged: &mut std::collections::BTreeSet<usize>,
    stretches: impl Iterator<Item = Stretch>,
    name: &str,
    culprit: Culprit,
) {
    for s in stretches {
        if let Some(seg) = segments.as_deref_mut().and_then(|g| g.get_mut(s.at)) {
            seg.part = name.to_string();
        }
        merged.insert(s.trip);
        let t = &mut trips[s.trip];
        // A round trip not cut into parts (a soak's, faster than kept).
        if !t.parts.contains_key(&s.part) {
            continue;
        }
        move_ns(&mut t.parts, &s.part, name.to_string(), s.ns);
        move_ns(
            &mut t.culprits,
            &(s.part, s.culprit),
            (name.to_string(), culprit),
            s.ns,
        );
    }
}
