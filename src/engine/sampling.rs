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

use crate::stats::compare::{Interval, bootstrap_median};
use crate::stats::median;
use std::time::{Duration, Instant};

/// Confidence level of the interval of the median.
pub const LEVEL: f64 = 0.95;

/// Resamples per bootstrap interval.
const RESAMPLES: usize = 1000;

/// Samples a figure never exceeds, whatever the time allowed.
pub const MAX_SAMPLES: usize = 1000;

/// When a figure has enough samples.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Precision {
    /// Largest acceptable half-width of the interval of the median, as a
    /// fraction of the median (0.02: ± 2%).
    pub target: f64,
    /// The longest the samples of one figure may take in all; past the
    /// budget's minimum count, no sample starts after it.
    #[serde(serialize_with = "super::pingpong::ser_ms")]
    pub max_time: Duration,
}

/// How precisely a figure's median is known.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Achieved {
    /// The target it was sampled for.
    pub target: f64,
    /// Half-width of the interval as a fraction of the median.
    pub achieved: f64,
    /// Whether `achieved ≤ target`.
    pub met: bool,
    /// The interval of the median (same unit as the samples).
    pub interval_ns: Interval,
}

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
/// checks inside). Returns the samples and the precision reached.
pub fn take<E>(
    min: usize,
    precision: &Precision,
    mut sample: impl FnMut() -> Result<f64, E>,
) -> Result<(Vec<f64>, Option<Achieved>), E> {
    let start = Instant::now();
    let mut samples = Vec::with_capacity(min.max(1).max(64));
    while samples.len() < min.max(1) {
        samples.push(sample()?);
    }
    let mut achieved = assess(&samples, precision.target);
    let mut assessed_at = samples.len();
    while achieved.is_some_and(|a| !a.met)
        && samples.len() < MAX_SAMPLES
        && start.elapsed() < precision.max_time
    {
        samples.push(sample()?);
        if assess_now(samples.len()) {
            achieved = assess(&samples, precision.target);
            assessed_at = samples.len();
        }
    }
    if assessed_at != samples.len() {
        achieved = assess(&samples, precision.target);
    }
    Ok((samples, achieved))
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
