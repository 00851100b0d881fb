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
}
