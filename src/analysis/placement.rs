//! What the placement probe says (`placement_probe`, docs/trust.md): the
//! class of placement its round trip suggests, and whether it moved during
//! the run beyond its own spread.

use crate::analysis::warnings::Warning;
pub use crate::engine::run::placement_probe::class;
use crate::record::RunRecord;
use crate::record::compare::PlacementDifference;
use crate::record::placement::{PlacementProbeRecord, ProbeSampleRecord};

/// Two probes differ when their medians and their 10th percentiles are
/// each more than this factor apart and their 10–90% ranges do not
/// overlap: a probe's blocks scatter by a few percent between neighbours,
/// the host's moves are ×1.5 to ×6.
pub const MOVE_FACTOR: f64 = 1.25;

/// Whether two probes differ beyond their own spread.
pub fn differ(a: &ProbeSampleRecord, b: &ProbeSampleRecord) -> bool {
    let (lo, hi) = if a.median_ns <= b.median_ns {
        (a, b)
    } else {
        (b, a)
    };
    // The floor (p10) must move too: other work on a CPU delays the blocks
    // it lands in, the median first, while a placement moves every block.
    lo.median_ns > 0.0
        && lo.p10_ns > 0.0
        && hi.median_ns / lo.median_ns > MOVE_FACTOR
        && hi.p10_ns / lo.p10_ns > MOVE_FACTOR
        && lo.p90_ns < hi.p10_ns
}

/// A run's probes as one: the median of their medians, of their 10th and
/// of their 90th percentiles; `None` without a probe taken.
pub fn summary(p: &PlacementProbeRecord) -> Option<ProbeSampleRecord> {
    let all: Vec<ProbeSampleRecord> = p.in_order().into_iter().map(|(_, s)| s).collect();
    let mid = |f: fn(&ProbeSampleRecord) -> f64| {
        let mut v: Vec<f64> = all.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        crate::stats::quantile_sorted(&v, 0.5)
    };
    (!all.is_empty()).then(|| ProbeSampleRecord {
        median_ns: mid(|s| s.median_ns),
        p10_ns: mid(|s| s.p10_ns),
        p90_ns: mid(|s| s.p90_ns),
    })
}

/// Runs `a` and `b`'s placements side by side, where both have a probe.
pub fn difference(a: &RunRecord, b: &RunRecord) -> Option<PlacementDifference> {
    let (pa, pb) = (a.placement_probe.as_ref()?, b.placement_probe.as_ref()?);
    let (sa, sb) = (summary(pa)?, summary(pb)?);
    Some(PlacementDifference {
        cpus_a: pa.cpus,
        cpus_b: pb.cpus,
        round_trip_a_ns: sa.median_ns,
        round_trip_b_ns: sb.median_ns,
        class_a: class(sa.median_ns).into(),
        class_b: class(sb.median_ns).into(),
        differ: differ(&sa, &sb),
    })
}

/// A map's pair probes by the topology's class of each pair.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassProbe {
    /// The topology's class of the pairs (`smt`, `same-llc`, …).
    pub class: String,
    /// How many of its pairs were probed.
    pub pairs: usize,
    /// The median of their round trips, ns.
    pub median_ns: f64,
    /// The placement that round trip suggests ([`class`]).
    pub suggests: &'static str,
    /// Whether that is what the topology's class says (`None`: the class
    /// says nothing of caches, as `same-cpu`).
    pub agrees: Option<bool>,
}

/// The placement a topology class names, in the probe's words.
fn expected(class: &str) -> Option<&'static str> {
    match class.split(' ').next()? {
        "smt" => Some("SMT siblings"),
        "same-llc" => Some("shared last-level cache"),
        "same-node" | "other-node" | "cross-socket" => Some("across caches"),
        _ => None,
    }
}

/// A map's pair probes grouped by the class its topology gives each pair,
/// in the order the classes first appear: where the probes and the
/// topology agree, and where they do not (on a VM the topology is the
/// guest's, not the host's placement).
pub fn map_classes(run: &RunRecord) -> Vec<ClassProbe> {
    let (Some(map), Some(probe)) = (&run.settings.map, &run.placement_probe) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for p in &probe.pairs {
        let Some(pair) = map.pairs.iter().find(|m| [m.client, m.server] == p.cpus) else {
            continue;
        };
        match out.iter_mut().find(|(c, _)| *c == pair.class) {
            Some((_, v)) => v.push(p.probe.median_ns),
            None => out.push((pair.class.clone(), vec![p.probe.median_ns])),
        }
    }
    out.into_iter()
        .map(|(class_name, mut v)| {
            v.sort_by(f64::total_cmp);
            let median_ns = crate::stats::quantile_sorted(&v, 0.5);
            let suggests = class(median_ns);
            ClassProbe {
                agrees: expected(&class_name).map(|e| e == suggests),
                class: class_name,
                pairs: v.len(),
                median_ns,
                suggests,
            }
        })
        .collect()
}

/// The run's largest move between two probes taken one after the other,
/// if one differs from the one before it.
pub fn moved(p: &PlacementProbeRecord) -> Option<Warning> {
    let all = p.in_order();
    let ratio = |w: &[(String, ProbeSampleRecord)]| {
        let (m, n) = (w[0].1.median_ns, w[1].1.median_ns);
        m.max(n) / m.min(n)
    };
    let [a, b] = all
        .windows(2)
        .filter(|w| differ(&w[0].1, &w[1].1))
        .max_by(|x, y| ratio(x).total_cmp(&ratio(y)))?
    else {
        return None;
    };
    Some(Warning::PlacementMoved {
        cpus: p.cpus,
        from: (a.0.clone(), a.1.median_ns),
        to: (b.0.clone(), b.1.median_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(median: f64, spread: f64) -> Option<ProbeSampleRecord> {
        Some(ProbeSampleRecord {
            median_ns: median,
            p10_ns: median * (1.0 - spread),
            p90_ns: median * (1.0 + spread),
        })
    }

    fn probe(start: f64, passes: &[f64], end: f64) -> PlacementProbeRecord {
        PlacementProbeRecord {
            cpus: [0, 1],
            start: s(start, 0.05),
            passes: passes.iter().map(|&m| s(m, 0.05)).collect(),
            end: s(end, 0.05),
            pairs: Vec::new(),
            clock_ns: 0.1,
            took_ns: 0,
            class: None,
            failed: None,
        }
    }

    #[test]
    fn a_steady_probe_says_nothing_and_a_move_between_passes_is_named() {
        assert!(moved(&probe(62.0, &[64.0, 60.0, 63.0, 61.0], 62.0)).is_none());
        let w = moved(&probe(62.0, &[64.0, 380.0, 375.0, 390.0], 385.0)).expect("a move");
        let text = w.to_string();
        assert_eq!(w.kind(), "placement-moved");
        assert!(text.contains("64 ns (before pass 2)"), "{text}");
        assert!(text.contains("380 ns (before pass 3)"), "{text}");
        assert!(text.contains("pooled"), "{text}");
    }

    #[test]
    fn a_wide_probe_is_no_move_and_a_missing_one_is_skipped() {
        // ×1.5 apart but each scattered over ±30%: within its own spread.
        let mut p = probe(100.0, &[150.0], 150.0);
        p.start = s(100.0, 0.3);
        p.passes = vec![s(150.0, 0.3)];
        p.end = s(150.0, 0.3);
        assert!(moved(&p).is_none());
        // Other work delayed half the blocks: the median doubled, the floor
        // stayed: no move.
        let mut p = probe(330.0, &[], 330.0);
        p.passes = vec![Some(ProbeSampleRecord {
            median_ns: 657.0,
            p10_ns: 324.0,
            p90_ns: 1154.0,
        })];
        assert!(moved(&p).is_none());
        // A probe not taken (a load held) is no point of comparison.
        let mut p = probe(62.0, &[], 380.0);
        p.passes = vec![None];
        let w = moved(&p).expect("start to end");
        assert!(w.to_string().contains("(end)"), "{w}");
    }

    #[test]
    fn the_class_follows_the_stated_thresholds() {
        assert_eq!(class(20.0), "SMT siblings");
        assert_eq!(class(62.0), "shared last-level cache");
        assert_eq!(class(380.0), "across caches");
    }
}
