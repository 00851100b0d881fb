//! The cost model of each mechanism measured at several sizes:
//! time = setup + bytes × per-byte, per range of sizes (the QNX study's
//! Table 2), fitted on the median of each size (drift-corrected when the
//! sizes were interleaved), weighted by 1 / time².
//!
//! One point per size, not one per sample: the samples of one size share
//! that figure's channel, peer and moment, so they are not independent
//! observations of the line, and fitting them all would count each size's
//! own disturbance as many times as it has samples, narrowing the intervals
//! and lowering R² with noise the line cannot explain.

use crate::record::summary::{CostModel, Segment};
use crate::record::{FigureRecord, Mode, Status};
use crate::stats::regression::{LineFit, relative_weight, segmented_fit};

/// Fewest distinct sizes a range must hold to be fitted on its own.
const MIN_SIZES_PER_RANGE: usize = 3;
/// Most breakpoints looked for (three ranges).
const MAX_BREAKS: usize = 2;
/// Confidence level of the intervals.
const LEVEL: f64 = 0.95;

fn segment(f: &LineFit) -> Segment {
    Segment {
        from_bytes: f.x_min as usize,
        to_bytes: f.x_max as usize,
        setup_ns: f.intercept,
        per_byte_ns: f.slope,
        r2: f.r2,
        setup_ci_ns: [f.intercept_ci.low, f.intercept_ci.high],
        per_byte_ci_ns: [f.slope_ci.low, f.slope_ci.high],
        sizes: f.n,
    }
}

/// Models of every pingpong mechanism measured at [`MIN_SIZES_PER_RANGE`]
/// or more sizes, in run order.
pub fn fit(results: &[FigureRecord]) -> Vec<CostModel> {
    // Warm and cold figures of one mechanism are different models.
    let mut order: Vec<(&str, bool)> = Vec::new();
    for r in results {
        let key = (r.benchmark.as_str(), r.cold_region_bytes.is_some());
        if !order.contains(&key) {
            order.push(key);
        }
    }
    order
        .into_iter()
        .filter_map(|(id, cold)| {
            let mut points = Vec::new();
            for r in results.iter().filter(|r| {
                r.benchmark == id && r.cold_region_bytes.is_some() == cold && r.size_bytes > 0
            }) {
                if let (Mode::PingPong, Status::Ok, Some(l)) = (r.mode, r.status, &r.latency_ns) {
                    // Sampled with the other sizes in rounds: the drift
                    // common to the rounds is left out of the line.
                    let y = r
                        .sweep
                        .as_ref()
                        .and_then(|f| f.drift_corrected_median_ns)
                        .unwrap_or(l.median);
                    points.push((r.size_bytes as f64, y));
                }
            }
            if points.len() < MIN_SIZES_PER_RANGE {
                return None;
            }
            let segs = segmented_fit(
                &points,
                MAX_BREAKS,
                MIN_SIZES_PER_RANGE,
                relative_weight,
                LEVEL,
            );
            (!segs.is_empty()).then(|| CostModel {
                benchmark: id.to_string(),
                cold,
                segments: segs.iter().map(segment).collect(),
            })
        })
        .collect()
}

/// Where two mechanisms' cost models cross, within the sizes both were
/// measured at: which is faster below and above each crossing.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossover {
    /// The first mechanism (run order).
    pub a: String,
    /// The second.
    pub b: String,
    /// Smallest size both models cover, bytes.
    pub from_bytes: usize,
    /// Largest size both models cover, bytes.
    pub to_bytes: usize,
    /// The sizes where their lines cross, bytes, increasing; empty: none.
    pub at_bytes: Vec<f64>,
    /// The faster of the two at `from_bytes`.
    pub faster_first: String,
}

/// The model's one-way time at `x` bytes on the segment that covers `x`.
fn line_at(m: &CostModel, x: f64) -> Option<&Segment> {
    m.segments
        .iter()
        .find(|s| s.from_bytes as f64 <= x && x <= s.to_bytes as f64)
}

/// Every pair of models of the same kind (warm or cold) whose sizes
/// overlap, with where their lines cross ([`crossing`]), in run order.
pub fn crossovers(models: &[CostModel]) -> Vec<Crossover> {
    models
        .iter()
        .enumerate()
        .flat_map(|(i, a)| {
            models[i + 1..]
                .iter()
                .filter(move |b| b.cold == a.cold)
                .filter_map(move |b| crossing(a, b))
        })
        .collect()
}

/// Where the fitted lines of `a` and `b` cross within the sizes both
/// cover: on each stretch where both are one line, the root of their
/// difference (a gap between one model's ranges is not crossed: it has no
/// line there). `None` when they share no sizes.
pub fn crossing(a: &CostModel, b: &CostModel) -> Option<Crossover> {
    let span = |m: &CostModel| {
        let first = m.segments.first().map(|s| s.from_bytes)?;
        let last = m.segments.last().map(|s| s.to_bytes)?;
        Some((first, last))
    };
    let ((fa, ta), (fb, tb)) = (span(a)?, span(b)?);
    let (lo, hi) = (fa.max(fb), ta.min(tb));
    if lo >= hi {
        return None;
    }
    // Every boundary of either model inside the overlap.
    let mut xs: Vec<usize> = a
        .segments
        .iter()
        .chain(&b.segments)
        .flat_map(|s| [s.from_bytes, s.to_bytes])
        .filter(|&x| lo < x && x < hi)
        .chain([lo, hi])
        .collect();
    xs.sort_unstable();
    xs.dedup();
    let mut at = Vec::new();
    let mut faster_first = None;
    for w in xs.windows(2) {
        let (x0, x1) = (w[0] as f64, w[1] as f64);
        let mid = (x0 + x1) / 2.0;
        let (Some(sa), Some(sb)) = (line_at(a, mid), line_at(b, mid)) else {
            continue;
        };
        let d = |x: f64| (sa.setup_ns - sb.setup_ns) + (sa.per_byte_ns - sb.per_byte_ns) * x;
        if faster_first.is_none() {
            faster_first = Some(if d(x0) <= 0.0 {
                &a.benchmark
            } else {
                &b.benchmark
            });
        }
        let slope = sa.per_byte_ns - sb.per_byte_ns;
        if d(x0) * d(x1) < 0.0 && slope != 0.0 {
            at.push(-(sa.setup_ns - sb.setup_ns) / slope);
        }
    }
    Some(Crossover {
        a: a.benchmark.clone(),
        b: b.benchmark.clone(),
        from_bytes: lo,
        to_bytes: hi,
        at_bytes: at,
        faster_first: faster_first?.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    /// A ping-pong figure whose samples have median `y` and one slow outlier.
    fn figure(size: usize, y: f64, outlier: f64) -> FigureRecord {
        let samples = vec![y - 2.0, y - 1.0, y, y + 1.0, y + outlier];
        let s = Summary::of(&samples).unwrap();
        serde_json::from_value(serde_json::json!({
            "benchmark": "pipe", "mode": "pingpong", "size_bytes": size, "status": "ok",
            "cpus": [0, 1], "samples_ns": samples,
            "latency_ns": {"median": s.median, "mean": s.mean, "stddev": s.stddev,
                "median_of": "batch_means", "percentiles_of": "single_round_trips",
                "single_mean": 0.0, "min": null, "max": null, "p50": null, "p90": null,
                "p99": null, "p999": null}
        }))
        .unwrap()
    }

    #[test]
    fn one_point_per_size_at_its_median_recovers_the_line() {
        // time = 2000 + 0.5 × bytes at every median; each size also has one
        // sample far off, which a fit over every sample would follow.
        let results: Vec<FigureRecord> = [64usize, 1024, 4096, 16384]
            .iter()
            .zip([5000.0, 300.0, 8000.0, 40.0])
            .map(|(&s, o)| figure(s, 2000.0 + 0.5 * s as f64, o))
            .collect();
        let models = fit(&results);
        assert_eq!(models.len(), 1);
        let seg = &models[0].segments;
        assert_eq!(seg.len(), 1, "{seg:?}");
        assert_eq!(seg[0].sizes, 4);
        assert!((seg[0].per_byte_ns - 0.5).abs() < 1e-9, "{seg:?}");
        assert!((seg[0].setup_ns - 2000.0).abs() < 1e-6, "{seg:?}");
        assert!((seg[0].r2 - 1.0).abs() < 1e-12);
        // Fewer than three sizes: no model.
        assert!(fit(&results[..2]).is_empty());
    }

    fn model(name: &str, segments: &[(usize, usize, f64, f64)]) -> CostModel {
        CostModel {
            benchmark: name.into(),
            cold: false,
            segments: segments
                .iter()
                .map(|&(from, to, setup, per_byte)| Segment {
                    from_bytes: from,
                    to_bytes: to,
                    setup_ns: setup,
                    per_byte_ns: per_byte,
                    r2: 1.0,
                    setup_ci_ns: [setup, setup],
                    per_byte_ci_ns: [per_byte, per_byte],
                    sizes: 3,
                })
                .collect(),
        }
    }

    #[test]
    fn two_lines_cross_where_their_difference_is_zero_and_parallel_ones_never() {
        // copy: 1000 + 1.0·x; pass: 5000 + 0.2·x: equal at x = 5000.
        let copy = model("copy", &[(64, 65536, 1000.0, 1.0)]);
        let pass = model("pass", &[(64, 262144, 5000.0, 0.2)]);
        let c = crossovers(&[copy.clone(), pass]);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].from_bytes, c[0].to_bytes), (64, 65536));
        assert_eq!(c[0].faster_first, "copy");
        assert_eq!(c[0].at_bytes.len(), 1);
        assert!((c[0].at_bytes[0] - 5000.0).abs() < 1e-9);
        // Always slower: no crossing, and who is faster is said.
        let slow = model("slow", &[(64, 65536, 9000.0, 1.5)]);
        let c = crossovers(&[copy, slow]);
        assert!(c[0].at_bytes.is_empty());
        assert_eq!(c[0].faster_first, "copy");
    }

    #[test]
    fn a_crossing_in_a_gap_between_ranges_is_not_claimed() {
        // b's second range starts at 8K: the lines would meet at 5000 B,
        // where b has no line.
        let a = model("a", &[(64, 65536, 1000.0, 1.0)]);
        let b = model("b", &[(64, 1024, 5000.0, 0.2), (8192, 65536, 5000.0, 0.2)]);
        let c = crossovers(&[a, b]);
        assert!(c[0].at_bytes.is_empty(), "{c:?}");
        // Past the gap a is slower, but no crossing was seen in a line.
        assert_eq!(c[0].faster_first, "a");
        // Warm and cold models are never paired.
        let mut cold = model("c", &[(64, 65536, 1.0, 1.0)]);
        cold.cold = true;
        assert!(crossovers(&[model("w", &[(64, 65536, 1.0, 2.0)]), cold]).is_empty());
    }
}
