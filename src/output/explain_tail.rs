//! The slowest round trips under an anatomy's waterfall (`explain --tail`):
//! the signatures (a slow round trip's largest excess and its culprit) with
//! their count, share of the tail and mean excess, then the slowest few
//! with their largest excesses and what each was spent behind.

use crate::output::sanitise::text;
use crate::record::explain::{LOWER_PRIORITY, SoakRecord, TailRecord};
use std::fmt::Write;

/// How many of the slowest are listed (all of them with `long`).
const LISTED: usize = 5;
/// How many parts of each listed round trip are shown.
const PARTS: usize = 3;

/// A time in ns, in the unit that reads best.
fn time(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if a >= 1e4 {
        format!("{:.1} µs", ns / 1e3)
    } else if a >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// What the tail's intervals are: a ping-pong's round trips, a timer's
/// wake-ups.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// A round trip (a mechanism's, an operation's).
    RoundTrip,
    /// A timer's wake-up, deadline to the task's stamp.
    WakeUp,
}

impl Unit {
    fn one(self) -> &'static str {
        match self {
            Unit::RoundTrip => "round trip",
            Unit::WakeUp => "wake-up",
        }
    }

    fn many(self) -> &'static str {
        match self {
            Unit::RoundTrip => "round trips",
            Unit::WakeUp => "wake-ups",
        }
    }
}

/// The tail's lines, indented under the waterfall; `unit` names what was
/// timed.
pub fn render(t: &TailRecord, long: bool, unit: Unit) -> String {
    let mut out = String::new();
    let n = t.slowest.len();
    let _ = writeln!(
        out,
        "  tail: the slowest {n} of {} {} (asked: {}): from {} up; the typical {} (the \
         median) {}",
        t.round_trips_seen,
        unit.many(),
        text(&t.asked),
        time(t.threshold_ns),
        unit.one(),
        time(t.typical_ns)
    );
    if n == 0 {
        return out;
    }
    let w = t
        .signatures
        .iter()
        .map(|s| text(&s.signature).chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    let _ = writeln!(
        out,
        "    {:<w$}  {:>5}  {:>6}  {:>11}",
        "signature", "count", "share", "mean excess"
    );
    for s in &t.signatures {
        let _ = writeln!(
            out,
            "    {:<w$}  {:>5}  {:>5.0}%  {:>11}",
            text(&s.signature),
            s.count,
            100.0 * s.share,
            time(s.mean_excess_ns)
        );
    }
    if t.slowest
        .iter()
        .flat_map(|s| &s.parts)
        .any(|p| p.culprit.contains(LOWER_PRIORITY))
    {
        let _ = writeln!(
            out,
            "    a culprit of lower priority than the side it delayed: the scheduler would have run \
             the side, so the kernel ran on in that task without a preemption point, or the host \
             held the vCPU"
        );
    }
    let listed = if long { n } else { n.min(LISTED) };
    let _ = writeln!(
        out,
        "    the slowest {listed}{}: {}, excess over the typical; its largest excesses",
        if listed < n { " (--long: all)" } else { "" },
        unit.one()
    );
    for s in t.slowest.iter().take(listed) {
        let parts: Vec<String> = s
            .parts
            .iter()
            .filter(|p| p.excess_ns > 0.0)
            .take(PARTS)
            .map(|p| {
                format!(
                    "{} +{} ({})",
                    text(&p.name),
                    time(p.excess_ns),
                    text(&p.culprit)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    #{:<7} {} (+{}): {}",
            s.index,
            time(s.round_trip_ns),
            time(s.excess_ns),
            parts.join("; ")
        );
    }
    out
}

/// A soak's line: how long, how many segments and decoded, the time
/// between segments, and its memory against the bound.
pub fn render_soak(s: &SoakRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  soak: {:.0} s ({:.0} asked), {} segments of {} round trips, {} decoded{}; {:.1} s \
         between segments (no round trip runs then); peak memory {:.1} MiB (bound {:.1} MiB), \
         trace buffers {} MiB on each of {} CPUs",
        s.ran_s,
        s.asked_s,
        s.segments,
        s.segment_round_trips,
        s.segments_decoded,
        if s.segments_lost > 0 {
            format!(", {} lost events and were not cut", s.segments_lost)
        } else {
            String::new()
        },
        s.between_segments_s,
        s.peak_rss_kb as f64 / 1024.0,
        s.bound_kb as f64 / 1024.0,
        s.buffer_kb_per_cpu / 1024,
        s.cpus.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::explain::{
        CulpritRecord, SignatureRecord, SlowRoundTripRecord, TailPartRecord,
    };

    #[test]
    fn the_tail_lists_its_signatures_and_the_slowest_with_their_culprits() {
        let part = |name: &str, ns: f64, typical: f64, culprit: &str| TailPartRecord {
            name: name.into(),
            ns,
            typical_ns: typical,
            excess_ns: ns - typical,
            culprit: culprit.into(),
            culprits: vec![CulpritRecord {
                name: culprit.into(),
                ns,
            }],
        };
        let t = TailRecord {
            round_trips_seen: 20_000,
            asked: "0.1%".into(),
            threshold_ns: 40_000.0,
            typical_ns: 7_400.0,
            slowest: vec![SlowRoundTripRecord {
                index: 812,
                round_trip_ns: 2_107_400.0,
                excess_ns: 2_100_000.0,
                parts: vec![
                    part(
                        "server wake-up: run-queue wait",
                        2_100_000.0,
                        0.0,
                        "stress-ng-cpu [pid 4121]",
                    ),
                    part("server read", 700.0, 700.0, "its own work"),
                ],
                signature: "server wake-up: run-queue wait behind stress-ng-cpu [pid 4121]".into(),
            }],
            signatures: vec![SignatureRecord {
                signature: "server wake-up: run-queue wait behind stress-ng-cpu [pid 4121]".into(),
                part: "server wake-up: run-queue wait".into(),
                culprit: "stress-ng-cpu [pid 4121]".into(),
                count: 1,
                share: 1.0,
                mean_excess_ns: 2_100_000.0,
            }],
        };
        let s = render(&t, false, Unit::RoundTrip);
        assert!(s.contains("the slowest 1 of 20000 round trips"), "{s}");
        assert!(
            s.contains(
                "run-queue wait behind stress-ng-cpu [pid 4121]      1    100%      2.10 ms"
            ),
            "{s}"
        );
        assert!(
            s.contains("#812     2.11 ms (+2.10 ms): server wake-up: run-queue wait +2.10 ms"),
            "{s}"
        );
        // A part that did not grow is not listed as an excess.
        assert!(!s.contains("server read +"), "{s}");
        assert!(!s.contains("the scheduler would have run"), "{s}");
        // A culprit of lower priority than the side: the page says what
        // that means, once; a timer's tail counts wake-ups.
        let mut low = t.clone();
        low.slowest[0].parts[0].culprit = format!("kdamond.0 [pid 77{LOWER_PRIORITY}]");
        let s = render(&low, false, Unit::WakeUp);
        assert_eq!(s.matches("the scheduler would have run").count(), 1, "{s}");
        assert!(s.contains("the slowest 1 of 20000 wake-ups"), "{s}");
        assert!(s.contains("the typical wake-up (the median)"), "{s}");
    }
}
