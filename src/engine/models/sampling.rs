//! How many samples a figure takes in one pass: at least the budget's count,
//! then more until the pass's level is known to the requested precision, or
//! the time allowed for sampling runs out.
//!
//! ```text
//! interval    = 95% order-statistic interval of the median of the samples (stats::interval)
//! achieved    = max(median − low, high − median) / median
//! pilot       = max(samples, MIN_LOOK) samples, then one look:
//!               met: stop; else plan n = pilot × (achieved / target)², at most MAX_SAMPLES
//! stop when   n samples are taken, or sampling has lasted max_time
//! ```
//!
//! One look, not a look after every sample: a rule that stops the first
//! time a noisy interval happens to look narrow reports intervals that
//! cover less than they say (the simulation in `run::coverage` checks the
//! rule as a whole). With passes, this rule only decides how long each
//! pass samples: the figure's interval rests on the passes' medians
//! (`run::passes`).

use crate::engine::measure::{Achieved, Basis, Precision};
use crate::stats::compare::Interval;
use crate::stats::interval::median_interval;
use crate::stats::median;
use std::time::{Duration, Instant};

/// Confidence level of the interval of the median.
pub const LEVEL: f64 = 0.95;

/// Samples of the pilot, before the one look at the interval.
pub const MIN_LOOK: usize = 10;

/// How many more samples than the pilot's projection a figure plans for:
/// the pilot's spread is itself uncertain.
const PLAN_MARGIN: f64 = 1.25;

/// Samples a figure never exceeds, whatever the time allowed.
pub const MAX_SAMPLES: usize = 1000;

/// How an `interval` around `centre` compares with `target`, on `basis`:
/// its larger side over the centre. A centre at or below zero has no
/// relative precision (the figure is below the clock's resolution): never
/// met, and never read as ±0%.
pub fn achieved(centre: f64, interval: Interval, target: f64, basis: Basis) -> Achieved {
    let achieved = if centre > 0.0 {
        (centre - interval.low).max(interval.high - centre) / centre
    } else {
        f64::INFINITY
    };
    Achieved {
        target,
        achieved,
        met: achieved <= target,
        interval_ns: interval,
        basis,
    }
}

/// The interval of the median of one pass's `samples` and how it compares
/// with `target`; `None` under the 6 samples a 95% interval needs.
pub fn assess(samples: &[f64], target: f64) -> Option<Achieved> {
    let iv = median_interval(samples, LEVEL)?;
    Some(achieved(
        median(samples),
        iv,
        target,
        Basis::Batches(samples.len()),
    ))
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
    /// The count the pilot look asked for, once it has looked.
    planned: Option<usize>,
    /// Time spent on this figure's own samples and their assessment.
    spent: Duration,
}

impl Turn {
    /// Whether to take another sample: up to `min` whatever the time; then,
    /// while time and [`MAX_SAMPLES`] allow, up to the pilot, then up to the
    /// count the pilot planned.
    fn wants_more(&self, min: usize, pilot: usize, precision: &Precision) -> bool {
        let n = self.samples.len();
        if n < min {
            return true;
        }
        if n >= MAX_SAMPLES || self.spent >= precision.max_time {
            return false;
        }
        n < self.planned.unwrap_or(pilot)
    }

    /// The one look: after the pilot, the count whose interval would meet
    /// the target if the spread stays as the pilot saw it (the half-width
    /// shrinks as 1/√n), with a quarter more for the pilot's own
    /// uncertainty, capped at [`MAX_SAMPLES`].
    fn plan(&mut self, target: f64) {
        let n = self.samples.len();
        self.planned = Some(
            match assess(&self.samples, target) {
                Some(a) if a.met => n,
                Some(a) if a.achieved.is_finite() => {
                    (PLAN_MARGIN * n as f64 * (a.achieved / target).powi(2)).ceil() as usize
                }
                _ => MAX_SAMPLES,
            }
            .min(MAX_SAMPLES),
        );
    }
}

/// [`take`] for `n` figures at once, in rounds of one sample of each (0, 1,
/// …, n − 1, 0, …), so that a drift of the machine's speed weighs on all of
/// them alike instead of on whichever ran during it. Each figure takes `min`
/// samples; with time to sample for precision, it takes at least a pilot of
/// [`MIN_LOOK`], looks once at the pilot's interval and takes as many more
/// as that interval says the target needs, while its own samples have
/// taken less than `max_time`, up to [`MAX_SAMPLES`]. One look, not one
/// after every sample: a rule that stops the first time a noisy interval
/// looks narrow reports intervals that cover less than they claim (the
/// simulation in `run::coverage` checks this rule). A figure leaves the
/// rounds for good when it is done: sample `k` of a figure comes from
/// round `k`, which [`crate::stats::drift`] relies on, and the whole takes
/// no longer than the figures one after another. `sample(i)` takes one
/// sample of figure `i`. The first error ends it all, with the figure it
/// came from.
pub fn take_interleaved<E>(
    n: usize,
    min: usize,
    precision: &Precision,
    mut sample: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Vec<Taken>, (usize, E)> {
    let min = min.max(1);
    let pilot = min.max(MIN_LOOK);
    let mut turns: Vec<Turn> = (0..n)
        .map(|_| Turn {
            samples: Vec::with_capacity(pilot.max(64)),
            planned: None,
            spent: Duration::ZERO,
        })
        .collect();
    let wants = |t: &Turn| t.wants_more(min, pilot, precision);
    while turns.iter().any(wants) {
        for (i, t) in turns.iter_mut().enumerate() {
            // Done is for good: a figure's samples are rounds 0, 1, … up to
            // the round it left.
            if !wants(t) {
                continue;
            }
            let start = Instant::now();
            t.samples.push(sample(i).map_err(|e| (i, e))?);
            if t.planned.is_none() && t.samples.len() == pilot {
                t.plan(precision.target);
            }
            t.spent += start.elapsed();
        }
    }
    Ok(turns
        .into_iter()
        .map(|t| {
            let achieved = assess(&t.samples, precision.target);
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
        // Figure 0 is steady, figure 1 noisy: 0 stops at its first look, 1
        // goes on alone until precise; every sample is taken in turn order.
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
        let both = 2 * MIN_LOOK;
        assert!(order[..both].chunks(2).all(|c| c == [0, 1]));
        assert!(order[both..].iter().all(|&i| i == 1));
        assert_eq!(out[0].0.len(), MIN_LOOK);
        assert!(out[0].1.unwrap().met);
        // The noisy one planned more from its pilot and got close to its target.
        let a = out[1].1.unwrap();
        assert!(out[1].0.len() > MIN_LOOK && a.achieved < 0.045, "{a:?}");
        assert_eq!(out[1].0.len(), order.len() - MIN_LOOK);
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
    fn steady_samples_stop_at_the_first_look() {
        let mut n = 0;
        let (s, a) = take::<()>(5, &precision(0.02, 10_000), || {
            n += 1;
            Ok(1000.0 + (n % 3) as f64)
        })
        .unwrap();
        assert_eq!(s.len(), MIN_LOOK);
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
        assert!(s.len() > MIN_LOOK && s.len() < MAX_SAMPLES, "{}", s.len());
        let pilot = assess(&s[..MIN_LOOK], 0.03).unwrap();
        assert!(
            !pilot.met && a.achieved < pilot.achieved / 2.0,
            "{pilot:?} → {a:?}"
        );
        assert!(a.achieved < 0.045, "{a:?}");
    }

    #[test]
    fn time_runs_out_and_the_miss_is_reported() {
        let mut rng = fastrand::Rng::with_seed(9);
        let (s, a) =
            take::<()>(7, &precision(0.0001, 0), || Ok(1000.0 * (0.5 + rng.f64()))).unwrap();
        assert_eq!(s.len(), 7);
        let a = a.unwrap();
        assert!(!a.met && a.achieved > 0.0001 && a.target == 0.0001);
    }

    #[test]
    fn too_few_samples_for_a_95_percent_interval_give_none() {
        // Min and max of 5 cover the median 93.75% of the time: no interval
        // is claimed rather than a narrower one than the samples support.
        let (s, a) = take::<()>(5, &precision(0.02, 0), || Ok(1.0)).unwrap();
        assert_eq!((s.len(), a), (5, None));
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
    fn a_centre_at_or_below_zero_is_never_precise() {
        let a = assess(&[-1.0, 0.5, 0.4, -0.2, -0.3, -0.1], 0.02).unwrap();
        assert!(!a.met && a.achieved.is_infinite());
        assert_eq!(a.basis, Basis::Batches(6));
    }
}
