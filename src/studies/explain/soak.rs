//! A soak (`explain NAME --tail K --duration D`): a mechanism's traced pass
//! for minutes or hours in bounded memory, to catch the one round trip in
//! millions that stalls.
//!
//! How: one channel and one peer, the pass in segments of `--round-trips`
//! round trips (`run_stamped_segments`), each traced into the instance's
//! buffer. After a segment its stamps are checked in user space: only a
//! segment with a round trip slower than the slowest K kept so far has its
//! events decoded and cut (and the first, which gives the waterfall and
//! the typical round trip); any other's buffer is dropped unread when the
//! next segment starts. So memory is one segment's events and stamps plus
//! K round trips' parts, whatever D is.
//!
//! Why not the buffer in overwrite mode read while the pass runs, or
//! tracing stopped from the client on a slow round trip (rtla's `--stop`):
//! both need the stamps of a pass that never ends, which the client keeps
//! in a preallocated array, and the cut needs every event from the start
//! of a round trip's path. Segments keep both whole. The price is the time
//! between segments, when the client checks and decodes and no round trip
//! runs: a stall then delays no round trip and is not seen. The record
//! says how long that was (`between_segments_s`).

use super::{Captured, ExplainOptions};
use crate::analysis::explain::{self as anatomy, RoundTrip, Tasks};
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::load::Held;
use crate::engine::run::runner::run_stamped_segments;
use crate::machine::tracefs::Instance;
use crate::machine::tracefs::decode::Labels;
use crate::record::explain::{ExplainRecord, SoakRecord};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// How many slowest round trips a soak keeps when a share was asked: a
/// share of an unknown count has no bound.
pub const SOAK_KEEP: usize = 100;

/// The first segment's anatomy: the waterfall and what it says.
struct First {
    parts: Vec<crate::record::explain::PartRecord>,
    centre: crate::record::explain::RoundTripRecord,
    round_trips: usize,
    wake_ups: Vec<crate::record::explain::WakeUpRecord>,
    merged: u64,
    notes: Vec<String>,
    typical: Option<RoundTrip>,
}

/// What the soak holds between segments.
struct State {
    first: Option<First>,
    /// The slowest kept, slowest first, with their place in the soak.
    kept: Vec<(u64, RoundTrip)>,
    seen: u64,
    segments: u64,
    decoded: u64,
    lost: u64,
    lost_notes: Vec<String>,
    between: Duration,
    rss_after_first_kb: u64,
    labels: Labels,
    /// The most events one decoded segment held.
    events_max: usize,
}

/// This process's peak resident memory, KiB (`VmHWM`), 0 where unread.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The smallest event a trace buffer holds, bytes: a 4-byte header and a
/// 12-byte record (an x86 vector's entry: the common fields and its
/// number). Every other event the anatomy enables is larger.
const SMALLEST_EVENT: usize = 16;

/// What a round trip kept costs at most, KiB: its parts and culprits.
const KEPT_KB: usize = 8;

/// The soak's memory bound, KiB, stated before it runs: the larger of the
/// peak after its first segment (cut whole: every round trip's parts) and
/// what any later segment can decode (`buffer_kb` of the CPUs' buffers
/// full of the smallest events, each a [`TraceEvent`] here, on top of the
/// memory before the soak), plus the round trips kept. Nothing else grows
/// with the soak's length: a later segment's round trips are cut only
/// where slower than what is kept, and what is not kept is let go.
///
/// [`TraceEvent`]: crate::machine::tracefs::decode::TraceEvent
fn bound_kb(rss_before_kb: u64, rss_after_first_kb: u64, buffer_kb: usize, keep: usize) -> u64 {
    let event = std::mem::size_of::<crate::machine::tracefs::decode::TraceEvent>();
    let decoded_kb = (buffer_kb * 1024 / SMALLEST_EVENT * event / 1024) as u64;
    rss_after_first_kb.max(rss_before_kb + decoded_kb) + (KEPT_KB * keep) as u64
}

/// The soak of one mechanism figure for `duration`, keeping the slowest
/// `keep` round trips.
#[allow(clippy::too_many_arguments)]
pub(super) fn soak(
    mech: &dyn crate::engine::channel::Mechanism,
    size: usize,
    c: &Captured,
    options: &ExplainOptions,
    names: &ObjectNamer,
    duration: Duration,
    keep: usize,
    asked: String,
) -> Result<ExplainRecord, String> {
    let s = &c.settings;
    let cpus = super::traced_cpus(mech, s)?;
    let segment = options.round_trips;
    let buffer_kb = super::buffer_kb(mech, segment);
    let held = c.load.as_ref().map(Held::start).transpose()?;
    let load_pids = held.as_ref().map(Held::pids).unwrap_or_default();
    let handlers = held.as_ref().map(Held::handler_pids).unwrap_or_default();
    let inst = RefCell::new(Instance::create(&cpus, buffer_kb)?);
    let began = Instant::now();
    let mut st = State {
        first: None,
        kept: Vec::new(),
        seen: 0,
        segments: 0,
        decoded: 0,
        lost: 0,
        lost_notes: Vec::new(),
        between: Duration::ZERO,
        rss_after_first_kb: 0,
        labels: Labels::default(),
        events_max: 0,
    };
    let rss_before_kb = peak_rss_kb();
    let mut after = |seg: &crate::engine::run::runner::StampedPass| -> Result<bool, String> {
        let t0 = Instant::now();
        let offset = st.seen;
        let n = seg.stamps.len().saturating_sub(1) as u64;
        st.seen += n;
        st.segments += 1;
        let threshold = match st.kept.len() {
            k if k < keep => 0,
            _ => st.kept.last().map_or(0, |(_, t)| t.total_ns),
        };
        let slower = seg.stamps.windows(2).any(|w| w[1] - w[0] > threshold);
        if st.first.is_none() || slower {
            let trace = inst.borrow_mut().read()?;
            if trace.lost > 0 {
                if st.first.is_none() {
                    return Err(format!(
                        "the soak's first segment lost {} events in {} KiB of trace buffer \
                         per CPU: fewer --round-trips make fewer events",
                        trace.lost, buffer_kb
                    ));
                }
                st.lost += 1;
                let worst = seg
                    .stamps
                    .windows(2)
                    .map(|w| w[1] - w[0])
                    .max()
                    .unwrap_or(0);
                st.lost_notes.push(format!(
                    "segment {} lost {} events: its slowest round trip ({:.1} µs) could not \
                     be cut and is not kept",
                    st.segments,
                    trace.lost,
                    worst as f64 / 1e3
                ));
            } else {
                st.decoded += 1;
                // The first segment is cut whole (the waterfall); a later
                // one only where it is slower than what is kept.
                let d = anatomy::decompose_slow(
                    &trace.events,
                    &seg.stamps,
                    Tasks {
                        client: seg.client_tid,
                        server: seg.server_tid,
                        relays: seg.relay_tids.clone(),
                        load: load_pids.clone(),
                        handlers: handlers.clone(),
                    },
                    &anatomy::syscall_name,
                    if st.first.is_none() { 0 } else { threshold },
                );
                if st.first.is_none() {
                    let (centre, parts) = anatomy::summarise(&d.trips);
                    let mut order: Vec<usize> = (0..d.trips.len()).collect();
                    order.sort_by_key(|&i| (d.trips[i].total_ns, i));
                    st.first = Some(First {
                        parts,
                        centre,
                        round_trips: d.trips.len(),
                        wake_ups: super::tail::wake_up_records(&d),
                        merged: d.merged_round_trips,
                        notes: super::tail::wake_up_notes(&d, d.trips.len()),
                        typical: order.get(order.len() / 2).map(|&i| d.trips[i].clone()),
                    });
                }
                st.events_max = st.events_max.max(trace.events.len());
                for (k, trip) in d.trips.into_iter().enumerate() {
                    if trip.total_ns > threshold {
                        st.kept.push((offset + k as u64, trip));
                    }
                }
                st.kept
                    .sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(&b.0)));
                st.kept.truncate(keep);
                st.labels = trace.labels;
                if st.decoded == 1 {
                    st.rss_after_first_kb = peak_rss_kb();
                }
            }
        }
        st.between += t0.elapsed();
        Ok(began.elapsed() < duration)
    };
    // The last segment's stamps are in `st` already: the pass itself is done with.
    run_stamped_segments(
        mech,
        size,
        s,
        names,
        segment,
        &mut |on| match on {
            Some(tasks) => inst.borrow().start(tasks),
            None => inst.borrow().stop(),
        },
        &mut after,
    )?;
    let ran = began.elapsed();
    let instance = inst.borrow().dir().display().to_string();
    let events = inst.borrow().events.clone();
    drop(inst);
    let Some(first) = st.first.take() else {
        return Err("the soak ended before its first segment was cut".into());
    };
    let slowest: Vec<(u64, &RoundTrip)> = st.kept.iter().map(|(i, t)| (*i, t)).collect();
    let tail = super::tail::tail_of_kept_named(
        &slowest,
        first.typical.as_ref(),
        st.seen,
        asked,
        &st.labels,
        &load_pids,
    );
    let mut notes = first.notes;
    notes.push(format!(
        "a soak of {:.0} s: {} segments of {segment} round trips on one channel; the waterfall \
         is the first segment's, the tail the slowest {} of all {} round trips",
        ran.as_secs_f64(),
        st.segments,
        st.kept.len(),
        st.seen
    ));
    notes.extend(st.lost_notes);
    let peak = peak_rss_kb();
    let cpus_n = cpus.len();
    Ok(ExplainRecord {
        method: "full".into(),
        parts: first.parts,
        traced_round_trip_ns: first.centre,
        untraced_round_trip_ns: None,
        round_trips: first.round_trips as u64,
        lost_events: 0,
        instance: Some(instance),
        events,
        note: Some(notes.join("\n")),
        copy: None,
        load: None,
        kind: None,
        wake_ups: first.wake_ups,
        merged_round_trips: Some(first.merged),
        tail: Some(tail),
        soak: Some(SoakRecord {
            asked_s: duration.as_secs_f64(),
            ran_s: ran.as_secs_f64(),
            segments: st.segments,
            segment_round_trips: segment as u64,
            segments_decoded: st.decoded,
            segments_lost: st.lost,
            between_segments_s: st.between.as_secs_f64(),
            kept: st.kept.len() as u64,
            buffer_kb_per_cpu: buffer_kb as u64,
            cpus,
            rss_before_kb,
            rss_after_first_kb: st.rss_after_first_kb,
            peak_rss_kb: peak,
            events_max: st.events_max as u64,
            bound_kb: bound_kb(
                rss_before_kb,
                st.rss_after_first_kb,
                buffer_kb * cpus_n,
                keep,
            ),
        }),
    })
}
