//! Passes: a run measures its repeatable figures several times, each time
//! with a fresh channel, fresh peers and fresh buffers, the passes spread
//! over the whole run.
//!
//! On a shared or virtual machine a figure's level moves between runs by
//! more than its samples within a run scatter: where the hypervisor puts the
//! virtual CPUs, which pages the buffers land on, what the other guests do.
//! A test on one run's samples cannot tell that from a real change, and
//! calls most of two back-to-back runs different. A pass is a small run of
//! its own; the spread of the pass medians is the run-to-run variation this
//! machine shows, measured inside one file, and `ipcmark compare` tests
//! between-pass medians (as benchstat tests between `-count` runs).
//!
//! A merged figure pools the passes: its samples are all of theirs (its
//! median is of the pool), its latency distribution is the sum of their
//! histograms, and [`PassFacts`] keeps each pass's median. Its interval is
//! not of the pool: the passes are the unit that varies, so it is the
//! Student t interval of the pass medians ([`pass_precision`]); a pool of
//! samples treated as independent would ignore the passes' disagreement
//! and claim far more than the run knows.

use crate::engine::measure::{Achieved, Basis, Budget, Measurement, Precision};
use crate::engine::models::rate;
use crate::engine::models::sampling;
use crate::engine::run::figure::{Facts, FigureResult, Outcome, PassFacts, SweepFacts};
use crate::stats::interval::t_interval;
use crate::stats::{drift, median};

/// The precision target each of `passes` passes samples for, given the
/// run's `target`: the mean of `passes` pass medians is about √passes times
/// as precise as one, as far as the noise within passes goes. It only
/// decides how long a pass samples; the figure's interval is
/// [`pass_precision`], which also holds what moves between passes.
pub fn per_pass_target(target: f64, passes: usize) -> f64 {
    target * (passes.max(1) as f64).sqrt()
}

/// Fewest samples one pass takes (unless the budget asks for fewer).
const MIN_PASS_SAMPLES: usize = 3;

/// The budget of one pass of `passes`: a share of the figure's time (its
/// warm-up, samples and single round trips), at the precision whose pool of
/// `passes` passes meets the run's target. A pass still takes a few samples
/// of its own, so that its median means something.
pub fn pass_budget(run: &Budget, passes: usize) -> Budget {
    let n = passes.max(1);
    Budget {
        warmup: run.warmup / n as u32,
        samples: run
            .samples
            .div_ceil(n)
            .max(MIN_PASS_SAMPLES)
            .min(run.samples),
        precision: Precision {
            target: per_pass_target(run.precision.target, n),
            max_time: run.precision.max_time / n as u32,
        },
        histogram_time: run.histogram_time / n as u32,
        ..*run
    }
}

/// Merges pass `next` of a figure into `into`, which holds the earlier
/// passes; `target` is the run's precision target, against which the pooled
/// median is assessed. A figure that failed in any pass is reported failed,
/// naming the pass; one that was skipped stays skipped.
pub fn merge(into: &mut FigureResult, next: FigureResult, pass: usize, target: f64) {
    let Outcome::Ok(base) = &mut into.outcome else {
        return;
    };
    let m = match next.outcome {
        Outcome::Ok(m) => m,
        Outcome::Failed(why) => {
            into.outcome = Outcome::Failed(format!("pass {pass}: {why}"));
            return;
        }
        Outcome::Skipped(why) => {
            into.outcome = Outcome::Failed(format!("pass {pass}: skipped ({why})"));
            return;
        }
        Outcome::BelowResolution(why) => {
            into.outcome = Outcome::BelowResolution(format!("pass {pass}: {why}"));
            return;
        }
    };
    let first_median = base.summary.median;
    let first_range = base.summary.relative_range();
    let first_corrected = into.sweep.and_then(|sw| sw.drift_corrected_median_ns);
    let facts = into.passes.get_or_insert_with(|| PassFacts {
        count: 1,
        medians_ns: vec![first_median],
        drift_corrected_medians_ns: first_corrected.into_iter().collect(),
        relative_ranges: vec![first_range],
    });
    let corrected = next.sweep.and_then(|sw| sw.drift_corrected_median_ns);
    match corrected {
        Some(c) if facts.drift_corrected_medians_ns.len() == facts.count => {
            facts.drift_corrected_medians_ns.push(c)
        }
        _ => facts.drift_corrected_medians_ns.clear(),
    }
    facts.count += 1;
    facts.medians_ns.push(m.summary.median);
    facts.relative_ranges.push(m.summary.relative_range());
    pool(base, *m, pass);
    // A rate figure's rounds: one per pass, each its own curve.
    if let (Facts::Rate(Some(f)), Facts::Rate(Some(g))) = (&mut into.facts, next.facts) {
        rate::curve::merge_round(f, g, pass);
        if let Some(p) = rate::curve::pooled_latency(&base.samples_ns) {
            base.latency = p;
        }
    }
    base.precision = pass_precision(&facts.medians_ns, target);
    match (&mut into.load, &next.load) {
        (Some(l), Some(n)) => l.merge(n),
        _ => into.load = None,
    }
    for c in next.cpus {
        if !into.cpus.contains(&c) {
            into.cpus.push(c);
        }
    }
    if into.note.is_none() {
        into.note = next.note;
    }
    // The cost model fits a sweep figure's drift-corrected median: merged,
    // the median of the passes' own (until `correct_between_passes`).
    into.sweep = match (into.sweep.take(), next.sweep) {
        (Some(a), Some(b)) => Some(SweepFacts {
            figures: a.figures.max(b.figures),
            rounds: a.rounds + b.rounds,
            sample_time: a.sample_time.min(b.sample_time),
            drift_corrected_median_ns: (!facts.drift_corrected_medians_ns.is_empty())
                .then(|| median(&facts.drift_corrected_medians_ns)),
        }),
        _ => None,
    };
    into.judge_resolution();
}

/// Divides out, from every sweep figure's drift-corrected median, the drift
/// common to the passes: once all passes have run, each pass's factor
/// ([`drift::round_factors`], passes as rounds) is read from every figure
/// that has a drift-corrected median in each pass, and such a figure's
/// `sweep.drift_corrected_median_ns` becomes the median over passes of its
/// own divided by its pass's factor. The rounds of a sweep correct drift
/// within it; this corrects what moved between passes, seconds apart, so
/// that a figure whose median fell in a slow pass is not read as costlier
/// than its neighbours (the cost model fits these values).
pub fn correct_between_passes(results: &mut [FigureResult]) {
    let Some((factors, members)) = pass_factors(results, |r| {
        r.sweep
            .and(r.passes.as_ref())
            .map(|p| p.drift_corrected_medians_ns.as_slice())
    }) else {
        return;
    };
    for i in members {
        let r = &mut results[i];
        if let (Some(p), Some(sw)) = (&r.passes, &mut r.sweep) {
            sw.drift_corrected_median_ns = Some(drift::corrected_median(
                &p.drift_corrected_medians_ns,
                &factors,
            ));
        }
    }
}

/// The drift common to the passes: each pass's factor ([`drift::round_factors`]
/// with passes as rounds) over the figures whose `series` holds a value for
/// every pass of the run, and those figures' indices. `None` without two
/// such figures.
pub fn pass_factors(
    results: &[FigureResult],
    series: impl Fn(&FigureResult) -> Option<&[f64]>,
) -> Option<(Vec<f64>, Vec<usize>)> {
    let count = results
        .iter()
        .filter_map(|r| r.passes.as_ref())
        .map(|p| p.count)
        .max()?;
    let members: Vec<usize> = (0..results.len())
        .filter(|&i| series(&results[i]).is_some_and(|v| v.len() == count))
        .collect();
    let lists: Vec<&[f64]> = members
        .iter()
        .filter_map(|&i| series(&results[i]))
        .collect();
    Some((drift::round_factors(&lists)?, members))
}

/// The 95% interval of a figure's level from its pass `medians` (Student t,
/// `medians.len() − 1` degrees of freedom, centred on their mean) and how
/// it compares with `target`; `None` under two passes.
pub fn pass_precision(medians: &[f64], target: f64) -> Option<Achieved> {
    let ti = t_interval(medians, sampling::LEVEL)?;
    Some(sampling::achieved(
        ti.centre,
        ti.interval,
        target,
        Basis::Passes(ti.units),
    ))
}

/// Adds `m`, pass number `pass` (from 1), to `base`: samples, histogram
/// and counts; the overheads each pass subtracted are averaged.
fn pool(base: &mut Measurement, m: Measurement, pass: usize) {
    base.samples_ns.extend_from_slice(&m.samples_ns);
    if let Some(s) = crate::stats::Summary::of(&base.samples_ns) {
        base.summary = s;
    }
    // Each pass calibrates anew; the smallest count is the one every sample had at least.
    base.iterations = base.iterations.min(m.iterations);
    let k = pass as f64;
    base.loop_overhead_ns += (m.loop_overhead_ns - base.loop_overhead_ns) / k;
    base.clock_overhead_ns += (m.clock_overhead_ns - base.clock_overhead_ns) / k;
    base.verified_round_trips += m.verified_round_trips;
    if let (Some(h), Some(add)) = (&mut base.histogram, &m.histogram) {
        h.add(add);
        if let Some(p) = h.percentiles() {
            base.latency = p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run::figure::Facts;
    use crate::stats::{LatencyHistogram, Summary};

    /// A ping-pong figure of one pass whose samples are `samples` and whose
    /// single round trips are `singles`.
    fn pass(samples: &[f64], singles: &[u64], cpu: usize) -> FigureResult {
        let mut hist = LatencyHistogram::new();
        singles.iter().for_each(|&v| hist.record(v));
        let mut f = FigureResult::new("pipe", Facts::PingPong, 64);
        f.cpus = vec![0, cpu];
        f.outcome = Outcome::Ok(Box::new(Measurement {
            iterations: samples.len() as u64 * 10,
            samples_ns: samples.to_vec(),
            summary: Summary::of(samples).unwrap(),
            precision: None,
            loop_overhead_ns: samples.len() as f64,
            clock_overhead_ns: 20.0,
            latency: hist.percentiles().unwrap(),
            verified_round_trips: 32,
            histogram: Some(hist),
        }));
        f
    }

    #[test]
    fn passes_pool_samples_histograms_and_keep_each_median() {
        let mut f = pass(&[100.0, 101.0, 102.0], &[90, 95], 1);
        merge(
            &mut f,
            pass(&[200.0, 201.0, 202.0, 203.0], &[300], 1),
            2,
            0.02,
        );
        merge(&mut f, pass(&[150.0, 151.0], &[120, 130, 140], 2), 3, 0.02);
        let facts = f.passes.clone().unwrap();
        assert_eq!(facts.count, 3);
        assert_eq!(facts.medians_ns, vec![101.0, 201.5, 150.5]);
        assert!(facts.drift_corrected_medians_ns.is_empty());
        assert_eq!(
            facts.relative_ranges,
            vec![2.0 / 101.0, 3.0 / 201.5, 1.0 / 150.5]
        );
        assert_eq!(f.cpus, vec![0, 1, 2]);
        let Outcome::Ok(m) = &f.outcome else {
            panic!("merged figure failed: {:?}", f.outcome)
        };
        assert_eq!(m.samples_ns.len(), 9);
        assert_eq!(m.summary.median, 151.0);
        assert_eq!(m.latency.count, 6);
        assert_eq!((m.latency.min, m.latency.max), (90, 300));
        assert_eq!(m.verified_round_trips, 96);
        assert_eq!(m.iterations, 20, "the smallest calibration");
        assert!((m.loop_overhead_ns - 3.0).abs() < 1e-9, "mean of 3, 4, 2");
        // The interval rests on the three pass medians, assessed against
        // the run's target: their disagreement keeps it from meeting ±2%.
        let p = m.precision.unwrap();
        assert_eq!((p.target, p.basis), (0.02, Basis::Passes(3)));
        assert!(!p.met, "{p:?}");
        let ti = t_interval(&[101.0, 201.5, 150.5], 0.95).unwrap();
        assert_eq!(p.interval_ns, ti.interval);
    }

    #[test]
    fn a_failure_in_any_pass_fails_the_figure_and_names_the_pass() {
        let mut f = pass(&[100.0, 101.0], &[90], 1);
        let mut dead = FigureResult::new("pipe", Facts::PingPong, 64);
        dead.outcome = Outcome::Failed("peer died".into());
        merge(&mut f, dead, 2, 0.02);
        assert!(matches!(&f.outcome, Outcome::Failed(w) if w == "pass 2: peer died"));
        // Nothing merges into a failed figure afterwards.
        merge(&mut f, pass(&[100.0], &[90], 1), 3, 0.02);
        assert!(matches!(f.outcome, Outcome::Failed(_)));
        assert!(f.passes.is_none());
    }

    #[test]
    fn a_median_at_or_below_zero_is_below_resolution_not_a_figure() {
        // Samples are never floored: a pool whose median is at or below
        // zero says so instead of printing 0 ± 0%.
        let mut f = pass(&[-2.0, 1.0, -1.0], &[1], 1);
        f.judge_resolution();
        assert!(
            matches!(&f.outcome, Outcome::BelowResolution(w) if w.contains("at or below zero")),
            "{:?}",
            f.outcome
        );
        // A figure whose pooled median is positive stands, negative samples and all.
        let mut g = pass(&[-2.0, 3.0, 4.0], &[1], 1);
        g.judge_resolution();
        assert!(matches!(g.outcome, Outcome::Ok(_)));
        // One pass below resolution makes the merged figure so, naming the pass.
        let mut below = pass(&[1.0], &[1], 1);
        below.outcome = Outcome::BelowResolution("tiny".into());
        merge(&mut g, below, 2, 0.02);
        assert!(matches!(&g.outcome, Outcome::BelowResolution(w) if w == "pass 2: tiny"));
        // Passes whose pool falls to zero are judged after merging.
        let mut h = pass(&[0.5, 0.6], &[1], 1);
        merge(&mut h, pass(&[-1.0, -2.0, -3.0], &[1], 1), 2, 0.02);
        assert!(matches!(h.outcome, Outcome::BelowResolution(_)));
    }

    #[test]
    fn sweep_figures_keep_the_median_of_their_corrected_medians() {
        let swept = |samples: &[f64], corrected: f64| {
            let mut f = pass(samples, &[1], 1);
            f.sweep = Some(SweepFacts {
                figures: 4,
                rounds: samples.len(),
                sample_time: std::time::Duration::from_millis(5),
                drift_corrected_median_ns: Some(corrected),
            });
            f
        };
        let mut f = swept(&[10.0, 11.0], 10.0);
        merge(&mut f, swept(&[30.0, 31.0, 32.0], 12.0), 2, 0.02);
        merge(&mut f, swept(&[20.0], 11.5), 3, 0.02);
        let sw = f.sweep.unwrap();
        assert_eq!(sw.rounds, 6);
        assert_eq!(sw.drift_corrected_median_ns, Some(11.5));
        assert_eq!(
            f.passes.unwrap().drift_corrected_medians_ns,
            vec![10.0, 12.0, 11.5]
        );
    }

    #[test]
    fn the_per_pass_target_pools_to_the_run_target() {
        assert_eq!(per_pass_target(0.02, 1), 0.02);
        assert!((per_pass_target(0.02, 4) - 0.04).abs() < 1e-12);
    }

    #[test]
    fn drift_between_passes_is_divided_out_of_sweep_figures() {
        let swept = |corrected: &[f64]| {
            let mut f = pass(&[1.0], &[1], 1);
            f.sweep = Some(SweepFacts {
                figures: 2,
                rounds: 1,
                sample_time: std::time::Duration::from_millis(5),
                drift_corrected_median_ns: Some(median(corrected)),
            });
            f.passes = Some(PassFacts {
                count: corrected.len(),
                medians_ns: corrected.to_vec(),
                drift_corrected_medians_ns: corrected.to_vec(),
                relative_ranges: Vec::new(),
            });
            f
        };
        // Figures costing 1, 2 and 3 units, measured in passes where the
        // machine ran at 0.9, 1.3 and 1.1, each with its own few percent of
        // noise: the plain median of passes reads them in different passes,
        // and their ratios come out wrong.
        let speed = [0.9, 1.3, 1.1];
        let noise = [[1.02, 0.97, 1.0], [0.97, 1.03, 0.96], [1.0, 0.98, 1.03]];
        let mut rs: Vec<FigureResult> = (0..3)
            .map(|f| {
                let v: Vec<f64> = (0..3)
                    .map(|k| 100.0 * (f + 1) as f64 * speed[k] * noise[f][k])
                    .collect();
                swept(&v)
            })
            .collect();
        rs.push(pass(&[5.0], &[5], 1));
        let ratios = |rs: &[FigureResult]| -> Vec<f64> {
            let y = |i: usize| rs[i].sweep.unwrap().drift_corrected_median_ns.unwrap();
            vec![y(1) / y(0), y(2) / y(0)]
        };
        let error = |r: &[f64]| (r[0] - 2.0).abs() + (r[1] - 3.0).abs();
        let before = error(&ratios(&rs));
        correct_between_passes(&mut rs);
        let after = error(&ratios(&rs));
        assert!(
            after < before / 2.0,
            "{before} → {after}: {:?}",
            ratios(&rs)
        );
        // A figure without a sweep is left alone.
        assert!(rs[3].sweep.is_none());
    }
}
