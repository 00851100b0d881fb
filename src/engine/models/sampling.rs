//! How many samples a figure takes: at least the budget's count, then more
//! until the median is known to the requested precision, or the time allowed
//! for sampling runs out.
//!
//! ```text
//! interval    = 95% percentile-bootstrap interval of the median of the samples
//! achieved    = max(median − low, high − median) / median
//! stop when   achieved ≤ target, or sampling has lasted max_time, or MAX_SAMPLES
//! ```
//!
//! The interval is computed between samples, never inside one, with a seed
//! fixed by the number of samples so the same samples give the same interval.

use crate::engine::measure::{Achieved, Precision};
use crate::stats::compare::{Interval, bootstrap_median};
use crate::stats::median;
use std::time::{Duration, Instant};

/// Confidence level of the interval of the median.
pub const LEVEL: f64 = 0.95;

/// Resamples per bootstrap interval.
const RESAMPLES: usize = 1000;

/// Samples a figure never exceeds, whatever the time allowed.
pub const MAX_SAMPLES: usize = 1000;

/// Relative half-width of `ci` around `med`. A median below 1 (a cost that
/// the subtraction took to about nothing) is judged against 1 unit instead,
/// so that noise around zero does not count as infinitely imprecise.
fn relative_half_width(ci: &Interval, med: f64) -> f64 {
    (med - ci.low).max(ci.high - med) / med.max(1.0)
}

/// The interval of the median of `samples` and how it compares with `target`.
pub fn assess(samples: &[f64], target: f64) -> Option<Achieved> {
    let ci = bootstrap_median(samples, LEVEL, RESAMPLES, samples.len() as u64)?;
    let achieved = relative_half_width(&ci, median(samples));
    Some(Achieved {
        target,
        achieved,
        met: achieved <= target,
        interval_ns: ci,
    })
}

/// Whether to assess after `n` samples: after each while few, then at
/// about every 4% more, so the bootstrap's cost stays small beside the samples.
fn assess_now(n: usize) -> bool {
    n < 50 || n.is_multiple_of(n / 25)
}

/// Takes `min` samples (at least one), then more until `precision` is met or
/// its time runs out. `sample()` takes one sample (its own watchdog and stop
/// checks inside). Returns the samples and the precision reached: the rule
/// of [`take_interleaved`] for a single figure.
pub fn take<E>(
    min: usize,
    precision: &Precision,
    mut sample: impl FnMut() -> Result<f64, E>,
) -> Result<Taken, E> {
    let mut taken = take_interleaved(1, min, precision, |_| sample()).map_err(|(_, e)| e)?;
    Ok(taken.pop().expect("one figure taken"))
}

/// One figure's samples and the precision they reached.
pub type Taken = (Vec<f64>, Option<Achieved>);

/// Samples of one figure in an interleaved set, and where they stand.
struct Turn {
    samples: Vec<f64>,
    achieved: Option<Achieved>,
    assessed_at: usize,
    /// Time spent on this figure's own samples and their assessment.
    spent: Duration,
}

impl Turn {
    fn wants_more(&self, min: usize, precision: &Precision) -> bool {
        self.samples.len() < min.max(1)
            || (self.achieved.is_some_and(|a| !a.met)
                && self.samples.len() < MAX_SAMPLES
                && self.spent < precision.max_time)
    }
}

/// [`take`] for `n` figures at once, in rounds of one sample of each (0, 1,
/// …, n − 1, 0, …), so that a drift of the machine's speed weighs on all of
/// them alike instead of on whichever ran during it. Each figure takes `min`
/// samples, then more while its median is less precise than `precision`
/// asks, its own samples have taken less than `max_time` and it has fewer
/// than [`MAX_SAMPLES`]; it
/// leaves the rounds for good when it is done: sample `k` of a figure comes
/// from round `k`, which [`crate::stats::drift`] relies on, and the whole
/// takes no longer than the figures one after another. `sample(i)` takes
/// one sample of figure `i`. The first error ends it all, with the figure
/// it came from.
pub fn take_interleaved<E>(
    n: usize,
    min: usize,
    precision: &Precision,
    mut sample: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Vec<Taken>, (usize, E)> {
    let mut turns: Vec<Turn> = (0..n)
        .map(|_| Turn {
            samples: Vec::with_capacity(min.max(1).max(64)),
            achieved: None,
            assessed_at: 0,
            spent: Duration::ZERO,
        })
        .collect();
    while turns.iter().any(|t| t.wants_more(min, precision)) {
        for (i, t) in turns.iter_mut().enumerate() {
            // Done is for good: a figure's samples are rounds 0, 1, … up to
            // the round it left.
            if !t.wants_more(min, precision) {
                continue;
            }
            let start = Instant::now();
            t.samples.push(sample(i).map_err(|e| (i, e))?);
            let len = t.samples.len();
            if len >= min.max(1) && (t.assessed_at == 0 || assess_now(len)) {
                t.achieved = assess(&t.samples, precision.target);
                t.assessed_at = len;
            }
            t.spent += start.elapsed();
        }
    }
    Ok(turns
        .into_iter()
        .map(|t| {
            let achieved = if t.assessed_at == t.samples.len() {
                t.achieved
            } else {
                assess(&t.samples, precision.target)
            };
            (t.samples, achieved)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn precision(target: f64, ms: u64) -> Precision {
        Precision {
            target,
            max_time: Duration::from_millis(ms),
        }
    }

    #[test]
    fn interleaved_figures_take_turns_and_leave_when_done() {
        // Figure 0 is steady, figure 1 noisy: 0 stops at the minimum, 1 goes
        // on alone until precise; every sample is taken in turn order.
        let mut rng = fastrand::Rng::with_seed(5);
        let mut order = Vec::new();
        let out = take_interleaved::<()>(2, 5, &precision(0.03, 60_000), |i| {
            order.push(i);
            Ok(match i {
                0 => 1000.0,
                _ => 1000.0 * (0.85 + 0.3 * rng.f64()),
            })
        })
        .unwrap();
        assert_eq!(&order[..10], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
        assert!(order[10..].iter().all(|&i| i == 1));
        assert_eq!(out[0].0.len(), 5);
        assert!(out[0].1.unwrap().met);
        assert!(
            out[1].0.len() > 5 && out[1].1.unwrap().met,
            "{:?}",
            out[1].1
        );
        assert_eq!(out[1].0.len(), order.len() - 5);
    }

    #[test]
    fn interleaved_errors_name_their_figure() {
        let err = take_interleaved(3, 4, &precision(0.02, 0), |i| {
            if i == 2 { Err("broken") } else { Ok(1.0) }
        })
        .unwrap_err();
        assert_eq!(err, (2, "broken"));
    }

    #[test]
    fn interleaved_figures_keep_the_fixed_count_without_time() {
        let mut rng = fastrand::Rng::with_seed(9);
        let out = take_interleaved::<()>(3, 7, &precision(0.001, 0), |_| {
            Ok(1000.0 * (0.5 + rng.f64()))
        })
        .unwrap();
        assert!(
            out.iter()
                .all(|(s, a)| s.len() == 7 && a.is_some_and(|a| !a.met))
        );
    }

    #[test]
    fn steady_samples_stop_at_the_minimum() {
        let mut n = 0;
        let (s, a) = take::<()>(5, &precision(0.02, 10_000), || {
            n += 1;
            Ok(1000.0 + (n % 3) as f64)
        })
        .unwrap();
        assert_eq!(s.len(), 5);
        let a = a.unwrap();
        assert!(a.met && a.achieved <= 0.02 && a.interval_ns.contains(1001.0));
    }

    #[test]
    fn noisy_samples_go_on_until_precise() {
        // ±15% uniform noise: 5 samples cannot pin the median to ±3%, a few
        // dozen can; the loop must go on until the target is met.
        let mut rng = fastrand::Rng::with_seed(3);
        let (s, a) = take::<()>(5, &precision(0.03, 60_000), || {
            Ok(1000.0 * (0.85 + 0.3 * rng.f64()))
        })
        .unwrap();
        let a = a.unwrap();
        assert!(s.len() > 5 && s.len() < MAX_SAMPLES, "{}", s.len());
        assert!(a.met, "{a:?}");
        assert!(!assess(&s[..5], 0.03).unwrap().met);
    }

    #[test]
    fn time_runs_out_and_the_miss_is_reported() {
        let mut rng = fastrand::Rng::with_seed(9);
        let (s, a) =
            take::<()>(3, &precision(0.0001, 0), || Ok(1000.0 * (0.5 + rng.f64()))).unwrap();
        assert_eq!(s.len(), 3);
        let a = a.unwrap();
        assert!(!a.met && a.achieved > 0.0001 && a.target == 0.0001);
    }

    #[test]
    fn an_error_ends_sampling() {
        let mut n = 0;
        let r = take(3, &precision(0.02, 1000), || {
            n += 1;
            if n == 2 { Err("broken") } else { Ok(1.0) }
        });
        assert_eq!(r.unwrap_err(), "broken");
    }

    #[test]
    fn near_zero_medians_are_judged_in_absolute_terms() {
        let ci = Interval {
            low: 0.0,
            high: 0.01,
        };
        assert!(relative_half_width(&ci, 0.005) <= 0.01);
    }
}
