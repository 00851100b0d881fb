//! Change points of a series of runs: where a figure's level moved and
//! stayed moved, each with its size, its interval and its p-value.
//!
//! The method is Apache Otava's (formerly DataStax Hunter, `docs/MATH.md`):
//! E-divisive means (Matteson & James 2014) proposes where a series splits,
//! and a t test between the runs on either side decides whether the split is
//! real, in two phases:
//!
//! 1. **Split** (proposals): over windows of [`Options::window`] runs
//!    (overlapping by half), the split that maximises the E-divisive statistic
//!    `Q(τ) = m·k/(m+k) · (2/(m·k) Σ|xᵢ−yⱼ| − Σ|xᵢ−xⱼ|/C(m,2) − Σ|yᵢ−yⱼ|/C(k,2))`
//!    (distances to the power α = 1, `m` runs left of τ, `k` right) is kept
//!    when the t test between its two sides gives p below ten times
//!    [`Options::max_p`], and each side is split again (recursive bisection).
//!    A window keeps the cost of a series of any length linear, and lets a
//!    long history hold several changes without the first one hiding the rest.
//! 2. **Merge** (the verdict): every candidate is tested again between its
//!    neighbours (the runs from the change point before it to the one after
//!    it); while any has p ≥ [`Options::max_p`], the weakest (largest p) is
//!    dropped and its neighbours are tested again over the longer sides.
//!
//! Why E-divisive with a t test, rather than the sliding-window t test
//! alone: E-divisive places the split where the two sides' distributions
//! differ most without assuming a shape, and the t test only judges it; a
//! sliding t test must test every index at a fixed width, so it needs its own
//! correction for the many tests and places a change less sharply near the
//! ends of a series. Otava's defaults are kept: window 50, p < 0.001.
//!
//! The t test is Student's (the two sides' variances pooled, as Otava's) on
//! the logarithms of the values: a latency changes by a ratio, so a change's
//! magnitude is the ratio of the two sides' geometric means less one, and its
//! interval is the t interval of that ratio. Pooled rather than Welch's:
//! a split is chosen where its sides differ most, and with Welch's test a
//! side of three runs that happen to lie close together (which the choice
//! favours) passes on its own tiny variance.
//!
//! One change from Otava: the merge's p is multiplied by the number of
//! places the split could have been between its neighbours (Bonferroni),
//! since the split is the best of them. Without it, 15 of 300 simulated
//! series of 40 runs with 3% noise and no change gave a change point at
//! p < 0.001 (with Welch's test; 6 of 300 with the adjustment alone); with
//! both, none of them did (`false_alarms_on_a_a_series_are_rare`).
//!
//! Indices are 0-based: a change point at index `i` is the first value of the
//! new level (values `..i` before it, `i..` after); run `i + 1` when runs are
//! counted from 1.

use super::compare::Interval;

/// The method's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Values per window of the split phase (Otava's default, 50).
    pub window: usize,
    /// A change point is kept when its t test gives p below this (0.001).
    pub max_p: f64,
    /// Fewest values on either side of a split (3: a side needs a spread).
    pub min_side: usize,
    /// Confidence level of each change's interval (0.95).
    pub level: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 50,
            max_p: 0.001,
            min_side: 3,
            level: 0.95,
        }
    }
}

/// A run of values between two change points (or an end of the series).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Index of its first value.
    pub start: usize,
    /// Index one past its last value.
    pub end: usize,
    /// Arithmetic mean of its values.
    pub mean: f64,
}

/// One change of level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index (0-based) of the first value at the new level.
    pub index: usize,
    /// The values from the change before (or the start) up to this one.
    pub before: Segment,
    /// The values from this change up to the next (or the end).
    pub after: Segment,
    /// Relative change: geometric mean after / geometric mean before − 1.
    pub magnitude: f64,
    /// Interval of the magnitude at [`Options::level`] (Student's, on logs).
    pub interval: Interval,
    /// Two-sided p of Student's t between the two sides, times the number of
    /// places the split could have been between them (it is the best of
    /// them, so its own p alone would be too small).
    pub p: f64,
}

/// The E-divisive statistic of every split of `x`, by prefix sums of the
/// distance matrix: `q[τ]` for τ in `min_side..=n − min_side`.
fn best_split(x: &[f64], min_side: usize) -> Option<usize> {
    let n = x.len();
    if n < 2 * min_side || min_side < 2 {
        return None;
    }
    // p[i][j]: Σ |x_a − x_b| over a < i, b < j.
    let mut p = vec![vec![0.0f64; n + 1]; n + 1];
    for i in 0..n {
        for j in 0..n {
            p[i + 1][j + 1] = p[i][j + 1] + p[i + 1][j] - p[i][j] + (x[i] - x[j]).abs();
        }
    }
    let block =
        |a0: usize, a1: usize, b0: usize, b1: usize| p[a1][b1] - p[a0][b1] - p[a1][b0] + p[a0][b0];
    let mut best: Option<(usize, f64)> = None;
    for tau in min_side..=n - min_side {
        let (m, k) = (tau as f64, (n - tau) as f64);
        let between = 2.0 * block(0, tau, tau, n) / (m * k);
        // The square block counts each pair twice: Σ over pairs = block / 2,
        // and C(m, 2) = m(m − 1)/2, so the two halves cancel.
        let within_left = block(0, tau, 0, tau) / (m * (m - 1.0));
        let within_right = block(tau, n, tau, n) / (k * (k - 1.0));
        let q = m * k / (m + k) * (between - within_left - within_right);
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best.map(|(tau, _)| tau)
}

/// Splits `x[a..b]` at its best split while the split's test gives p below
/// `max_p`, then each side again; the splits found, as indices of `x`.
fn bisect(x: &[f64], a: usize, b: usize, min_side: usize, max_p: f64, found: &mut Vec<usize>) {
    let Some(tau) = best_split(&x[a..b], min_side).map(|t| a + t) else {
        return;
    };
    // A proposal only: unadjusted, so that a change whose side holds
    // another change (which dilutes it) still splits; the merge judges it.
    let significant = student_log(&x[a..tau], &x[tau..b], 0.95).is_some_and(|(p, _)| p < max_p);
    if significant {
        found.push(tau);
        bisect(x, a, tau, min_side, max_p, found);
        bisect(x, tau, b, min_side, max_p, found);
    }
}

/// Student's two-sample t test on the logarithms of `a` and `b`, the two
/// sides' variances pooled: two-sided p and the interval at `level` of the
/// ratio of their geometric means b / a. `None` unless each side has two
/// values and there are three degrees of freedom.
fn student_log(a: &[f64], b: &[f64], level: f64) -> Option<(f64, Interval)> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let moments = |v: &[f64]| {
        let mean = v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64;
        let ss = v.iter().map(|x| (x.ln() - mean).powi(2)).sum::<f64>();
        (mean, ss)
    };
    let ((ma, ssa), (mb, ssb)) = (moments(a), moments(b));
    let df = na + nb - 2.0;
    let d = mb - ma;
    let se = ((ssa + ssb) / df * (1.0 / na + 1.0 / nb)).sqrt();
    if se <= 0.0 {
        let p = if d == 0.0 { 1.0 } else { 0.0 };
        let r = d.exp();
        return Some((p, Interval { low: r, high: r }));
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * t.sf(d.abs() / se)).min(1.0);
    let half = t.inverse_cdf(0.5 + level / 2.0) * se;
    Some((
        p,
        Interval {
            low: (d - half).exp(),
            high: (d + half).exp(),
        },
    ))
}

/// The `p` of the best of the splits of `n` values, adjusted for
/// having been chosen among them (Bonferroni: times the number of places
/// the split could have been; see the module's notes).
fn adjusted(p: f64, n: usize, min_side: usize) -> f64 {
    let places = (n + 1).saturating_sub(2 * min_side).max(1);
    (p * places as f64).min(1.0)
}

/// The test of a split at `i` between the values from `a` to `b`.
fn test(x: &[f64], a: usize, i: usize, b: usize, opts: &Options) -> Option<ChangePoint> {
    let level = opts.level;
    let (before, after) = (&x[a..i], &x[i..b]);
    let (p, ratio) = student_log(before, after, level)?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let log_mean = |v: &[f64]| v.iter().map(|v| v.ln()).sum::<f64>() / v.len() as f64;
    Some(ChangePoint {
        index: i,
        before: Segment {
            start: a,
            end: i,
            mean: mean(before),
        },
        after: Segment {
            start: i,
            end: b,
            mean: mean(after),
        },
        magnitude: (log_mean(after) - log_mean(before)).exp() - 1.0,
        interval: Interval {
            low: ratio.low - 1.0,
            high: ratio.high - 1.0,
        },
        p: adjusted(p, b - a, opts.min_side),
    })
}

/// Every candidate tested between its neighbours.
fn tested(x: &[f64], at: &[usize], opts: &Options) -> Vec<Option<ChangePoint>> {
    (0..at.len())
        .map(|j| {
            let a = if j == 0 { 0 } else { at[j - 1] };
            let b = at.get(j + 1).copied().unwrap_or(x.len());
            test(x, a, at[j], b, opts)
        })
        .collect()
}

/// The change points of `series` (in order of index), by the two phases of
/// the module's method. Empty when no change is significant, or when any
/// value is not positive and finite (the test is on logarithms).
pub fn change_points(series: &[f64], opts: &Options) -> Vec<ChangePoint> {
    let n = series.len();
    if series.iter().any(|v| !(*v > 0.0 && v.is_finite())) || opts.window < 2 * opts.min_side {
        return Vec::new();
    }
    // Split: windows overlapping by half; a window starts no earlier than
    // the last change found, so a change is not found twice.
    let split_p = (opts.max_p * 10.0).min(0.5);
    let step = (opts.window / 2).max(1);
    let mut candidates: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start + opts.window).min(n);
        let mut found = Vec::new();
        bisect(series, start, end, opts.min_side, split_p, &mut found);
        found.sort_unstable();
        for &i in &found {
            // The same change seen again from another window, a value or two away.
            if candidates.iter().all(|&c| c.abs_diff(i) >= opts.min_side) {
                candidates.push(i);
            }
        }
        if end == n {
            break;
        }
        start = found.last().copied().unwrap_or(0).max(start + step);
    }
    candidates.sort_unstable();
    // Merge: drop the weakest candidate until every one left holds between
    // its neighbours.
    loop {
        let tests = tested(series, &candidates, opts);
        let weakest = tests
            .iter()
            .enumerate()
            .map(|(j, t)| (j, t.map_or(1.0, |t| t.p)))
            .filter(|(_, p)| *p >= opts.max_p)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((j, _)) => {
                candidates.remove(j);
            }
            None => break,
        }
    }
    refine(series, &mut candidates, opts.min_side);
    tested(series, &candidates, opts)
        .into_iter()
        .flatten()
        .collect()
}

/// Moves each change point, between its neighbours, to the split that
/// leaves the least squared deviation of the logarithms about the two
/// sides' means: for a step in level this is the most likely place, and
/// it scatters less about the true one than the E-divisive split (which
/// weighs every distance alike, so it is robust to the shape but less
/// precise about where a clean step is).
fn refine(x: &[f64], at: &mut [usize], min_side: usize) {
    let logs: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    for j in 0..at.len() {
        let a = if j == 0 { 0 } else { at[j - 1] };
        let b = at.get(j + 1).copied().unwrap_or(x.len());
        if b - a < 2 * min_side {
            continue;
        }
        let total: f64 = logs[a..b].iter().sum();
        let n = (b - a) as f64;
        let mut left = 0.0;
        let mut best = (at[j], f64::MIN);
        for (i, l) in logs.iter().enumerate().take(b - min_side).skip(a) {
            left += l;
            let tau = i + 1;
            if tau < a + min_side {
                continue;
            }
            // Between-sides sum of squares: m·k/n · (mean left − mean right)².
            let (m, k) = ((tau - a) as f64, (b - tau) as f64);
            let d = left / m - (total - left) / k;
            let between = m * k / n * d * d;
            if between > best.1 {
                best = (tau, between);
            }
        }
        at[j] = best.0;
    }
}

/// The series' own run-to-run noise: the standard deviation of the
/// logarithms of its values within the segments its change points leave
/// (pooled), so about the relative spread of one value about its level.
/// `None` without two values in some segment, or for a value not positive.
pub fn noise(series: &[f64], points: &[ChangePoint]) -> Option<f64> {
    if series.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
        return None;
    }
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(points.iter().map(|c| c.index));
    bounds.push(series.len());
    let (mut ss, mut df) = (0.0, 0usize);
    for w in bounds.windows(2) {
        let seg: Vec<f64> = series[w[0]..w[1]].iter().map(|v| v.ln()).collect();
        if seg.len() < 2 {
            continue;
        }
        let mean = seg.iter().sum::<f64>() / seg.len() as f64;
        ss += seg.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        df += seg.len() - 1;
    }
    (df > 0).then(|| (ss / df as f64).sqrt())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The relative spread of one run's figure about its level here: the
    /// pass medians of tests/reports/passes.json differ by 1.3–1.7% of
    /// their mean, and the 95% intervals of ipc-quick.json's medians are
    /// ±4–10%, whose passes vary by more than their samples; 3% sits between.
    pub(crate) const NOISE: f64 = 0.03;

    /// A standard normal draw (Box–Muller), from a seeded generator.
    pub(crate) fn normal(rng: &mut fastrand::Rng) -> f64 {
        let u = 1.0 - rng.f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
    }

    /// `n` runs of a figure of level 4000 ns with relative noise `noise`,
    /// times `1 + step` from each index in `steps` on.
    pub(crate) fn series(seed: u64, n: usize, noise: f64, steps: &[(usize, f64)]) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|i| {
                let level: f64 = steps
                    .iter()
                    .filter(|(at, _)| i >= *at)
                    .map(|(_, s)| 1.0 + s)
                    .product();
                4000.0 * level * (noise * normal(&mut rng)).exp()
            })
            .collect()
    }

    #[test]
    fn a_ten_percent_step_at_run_21_of_40_is_found_with_its_magnitude() {
        // Run 21 of 40, counted from 1: index 20.
        for seed in 0..20 {
            let x = series(seed, 40, NOISE, &[(20, 0.10)]);
            let cps = change_points(&x, &Options::default());
            assert_eq!(cps.len(), 1, "seed {seed}: {cps:?}");
            let c = cps[0];
            assert!(c.index.abs_diff(20) <= 1, "seed {seed}: at {}", c.index);
            assert!(c.interval.contains(c.magnitude), "seed {seed}: {c:?}");
            assert!((c.magnitude - 0.10).abs() < 0.03, "seed {seed}: {c:?}");
            assert!(c.p < 0.001 && c.after.mean > c.before.mean);
            assert_eq!((c.before.start, c.after.end), (0, 40));
        }
    }

    #[test]
    fn a_changes_interval_covers_its_true_magnitude_at_about_its_level() {
        let trials = 400;
        let covered = (0..trials)
            .filter(|&seed| {
                let x = series(5000 + seed, 40, NOISE, &[(20, 0.10)]);
                let cps = change_points(&x, &Options::default());
                cps.len() == 1 && cps[0].interval.contains(0.10)
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.90..=0.99).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn forty_a_a_runs_give_no_change_point() {
        for seed in 0..20 {
            let x = series(seed, 40, NOISE, &[]);
            let cps = change_points(&x, &Options::default());
            assert!(cps.is_empty(), "seed {seed}: {cps:?}");
        }
    }

    #[test]
    fn false_alarms_on_a_a_series_are_rare() {
        // The split is the best of many, so its test is optimistic; the
        // second phase's p < 0.001 must still keep false alarms rare.
        let trials: u64 = 300;
        let alarms = (0..trials)
            .filter(|&seed| {
                let c = change_points(&series(1000 + seed, 40, NOISE, &[]), &Options::default());
                !c.is_empty()
            })
            .count() as u64;
        eprintln!("A/A false alarms: {alarms} of {trials}");
        assert!(alarms * 100 <= trials, "{alarms} of {trials}");
    }

    #[test]
    fn two_steps_are_both_found() {
        for seed in 0..20 {
            // Slower by 10% at index 20, then faster by 15% at index 45.
            let x = series(seed, 70, NOISE, &[(20, 0.10), (45, -0.15)]);
            let cps = change_points(&x, &Options::default());
            let at: Vec<usize> = cps.iter().map(|c| c.index).collect();
            assert_eq!(cps.len(), 2, "seed {seed}: {at:?}");
            assert!(at[0].abs_diff(20) <= 1 && at[1].abs_diff(45) <= 1, "{at:?}");
            assert!(cps[0].magnitude > 0.0 && cps[1].magnitude < 0.0);
            // Each is tested between its neighbours.
            assert_eq!(cps[0].after.end, cps[1].index);
            assert_eq!(cps[1].before.start, cps[0].index);
        }
    }

    #[test]
    fn a_long_series_holds_changes_beyond_the_first_window() {
        let x = series(5, 200, NOISE, &[(60, 0.10), (150, 0.10)]);
        let at: Vec<usize> = change_points(&x, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at.len(), 2, "{at:?}");
        assert!(
            at[0].abs_diff(60) <= 1 && at[1].abs_diff(150) <= 1,
            "{at:?}"
        );
    }

    #[test]
    fn the_split_statistic_peaks_at_a_clean_step() {
        let x = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0];
        assert_eq!(best_split(&x, 2), Some(4));
        assert_eq!(best_split(&x[..3], 2), None);
    }

    #[test]
    fn too_short_or_unusable_series_give_nothing() {
        assert!(change_points(&[], &Options::default()).is_empty());
        assert!(change_points(&[1.0, 2.0, 3.0], &Options::default()).is_empty());
        let mut x = series(1, 40, NOISE, &[(20, 0.5)]);
        x[3] = 0.0;
        assert!(change_points(&x, &Options::default()).is_empty());
    }

    #[test]
    fn noise_is_the_spread_within_the_segments() {
        let x = series(3, 400, NOISE, &[(200, 0.3)]);
        let cps = change_points(&x, &Options::default());
        assert_eq!(cps.len(), 1);
        let n = noise(&x, &cps).unwrap();
        assert!((n - NOISE).abs() < 0.005, "{n}");
        // Without the change point, the step counts as noise.
        assert!(noise(&x, &[]).unwrap() > 0.1);
    }
}
