//! Two-sample comparisons: is B different from A, and by how much?
//!
//! Mann–Whitney U answers "do the samples come from the same distribution"
//! without assuming normality (latency samples are skewed); a bootstrap
//! interval of the ratio of medians says how large the difference is.

/// Result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether the p-value is exact (small samples, no ties) or from the
    /// normal approximation with tie and continuity corrections.
    pub exact: bool,
}

/// Largest n1 + n2 for which the exact distribution of U is computed.
const EXACT_LIMIT: usize = 60;

/// Ranks of `values` (1-based), ties sharing their average rank; also
/// returns Σ(t³ − t) over tie groups, for the variance correction.
fn ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = avg;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    (ranks, tie_term)
}

/// P(U ≤ u) under the null hypothesis, by counting arrangements
/// (f(n1, n2, u) = f(n1−1, n2, u−n2) + f(n1, n2−1, u)).
fn exact_cdf(n1: usize, n2: usize, u: usize) -> f64 {
    // table[j][k]: arrangements of i first-sample and j second-sample items with U = k,
    // built up over i.
    let max_u = n1 * n2;
    let mut prev: Vec<Vec<f64>> = (0..=n2)
        .map(|_| {
            let mut v = vec![0.0; max_u + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for k in 0..=i * j {
                // The largest item belongs to the first sample (it beats all j
                // of the second: adds j to U) or to the second (adds nothing).
                let from_first = if k >= j { prev[j][k - j] } else { 0.0 };
                cur[j][k] = from_first + cur[j - 1][k];
            }
        }
        prev = cur;
    }
    let total: f64 = prev[n2].iter().sum();
    prev[n2][..=u.min(max_u)].iter().sum::<f64>() / total
}

/// Standard normal upper tail, via the complementary error function.
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// erfc with relative error < 1.2e-7 everywhere (Numerical Recipes' erfcc).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Two-sided Mann–Whitney U test of `a` against `b`; `None` if either is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (r, tie_term) = ranks(&all);
    let r1: f64 = r[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u_min = u1.min(f1 * f2 - u1);
    if tie_term == 0.0 && n1 + n2 <= EXACT_LIMIT {
        let p = (2.0 * exact_cdf(n1, n2, u_min.round() as usize)).min(1.0);
        return Some(MannWhitney {
            u: u1,
            p,
            exact: true,
        });
    }
    let n = f1 + f2;
    let var = f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    let p = if var <= 0.0 {
        1.0
    } else {
        let z = ((f1 * f2 / 2.0 - u_min) - 0.5).max(0.0) / var.sqrt();
        (2.0 * normal_sf(z)).min(1.0)
    };
    Some(MannWhitney {
        u: u1,
        p,
        exact: false,
    })
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

fn median_of(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    super::quantile_sorted(v, 0.5)
}

/// Percentile-bootstrap interval of median(b) / median(a) at `level`
/// (e.g. 0.95), from `resamples` resamples drawn with a fixed seed so the
/// same files always give the same interval. `None` if a sample is empty or
/// a resampled median of `a` is zero.
pub fn bootstrap_ratio_of_medians(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        ra.iter_mut().for_each(|x| *x = a[rng.usize(..a.len())]);
        rb.iter_mut().for_each(|x| *x = b[rng.usize(..b.len())]);
        let ma = median_of(&mut ra);
        if ma == 0.0 {
            return None;
        }
        ratios.push(median_of(&mut rb) / ma);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        low: super::quantile_sorted(&ratios, tail),
        high: super::quantile_sorted(&ratios, 1.0 - tail),
    })
}

/// Percentile-bootstrap interval of the median of `v` at `level`, from
/// `resamples` resamples drawn with a fixed seed.
pub fn bootstrap_median(v: &[f64], level: f64, resamples: usize, seed: u64) -> Option<Interval> {
    if v.is_empty() {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut r = vec![0.0; v.len()];
    let mut meds = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        r.iter_mut().for_each(|x| *x = v[rng.usize(..v.len())]);
        meds.push(median_of(&mut r));
    }
    meds.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        low: super::quantile_sorted(&meds, tail),
        high: super::quantile_sorted(&meds, 1.0 - tail),
    })
}

/// Welch's t test of the log of replicate values: is B's level different
/// from A's, given how much each run's replicates disagree among themselves?
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// Two-sided p-value.
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Interval of the ratio of geometric means B / A at the level asked for.
    pub ratio_interval: Interval,
}

/// Welch's two-sided t test on `ln a` against `ln b`, each replicate one
/// value (for example one pass's median); a ratio is what a latency changes
/// by, hence logs. `None` unless each side has at least two positive finite
/// values. Both sides without any spread give p = 1 if equal, 0 if not.
pub fn welch_log(a: &[f64], b: &[f64], level: f64) -> Option<Welch> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let logs = |v: &[f64]| -> Option<Vec<f64>> {
        (v.len() >= 2 && v.iter().all(|x| *x > 0.0 && x.is_finite()))
            .then(|| v.iter().map(|x| x.ln()).collect())
    };
    let (la, lb) = (logs(a)?, logs(b)?);
    let moments = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var / n, n)
    };
    let ((ma, va, na), (mb, vb, nb)) = (moments(&la), moments(&lb));
    let d = mb - ma;
    let se2 = va + vb;
    if se2 <= 0.0 {
        let p = if d == 0.0 { 1.0 } else { 0.0 };
        let r = d.exp();
        return Some(Welch {
            p,
            df: na + nb - 2.0,
            ratio_interval: Interval { low: r, high: r },
        });
    }
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let se = se2.sqrt();
    let p = (2.0 * t.sf(d.abs() / se)).min(1.0);
    let half = t.inverse_cdf(0.5 + level / 2.0) * se;
    Some(Welch {
        p,
        df,
        ratio_interval: Interval {
            low: (d - half).exp(),
            high: (d + half).exp(),
        },
    })
}

/// A paired t test of the log of replicate values: B's replicate `i` was
/// measured beside A's replicate `i` (the same pass, minutes apart at
/// most), so the machine's level, which moves between passes by more than
/// a small effect, cancels in each pair's ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Two-sided p-value.
    pub p: f64,
    /// Degrees of freedom (pairs − 1).
    pub df: f64,
    /// The geometric mean of the ratios B / A.
    pub ratio: f64,
    /// Interval of the geometric mean of the ratios B / A at the level asked for.
    pub ratio_interval: Interval,
}

/// The paired two-sided t test on `ln b[i] − ln a[i]`. `None` unless both
/// sides have the same count, at least two, of positive finite values.
/// Pairs that all agree give p = 1 if their ratio is 1, 0 if not.
pub fn paired_log(a: &[f64], b: &[f64], level: f64) -> Option<Paired> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let ok = |v: &[f64]| v.iter().all(|x| *x > 0.0 && x.is_finite());
    if a.len() != b.len() || a.len() < 2 || !ok(a) || !ok(b) {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y.ln() - x.ln()).collect();
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let df = n - 1.0;
    if var <= 0.0 {
        let r = mean.exp();
        return Some(Paired {
            p: if mean == 0.0 { 1.0 } else { 0.0 },
            df,
            ratio: r,
            ratio_interval: Interval { low: r, high: r },
        });
    }
    let se = (var / n).sqrt();
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * t.sf(mean.abs() / se)).min(1.0);
    let half = t.inverse_cdf(0.5 + level / 2.0) * se;
    Some(Paired {
        p,
        df,
        ratio: mean.exp(),
        ratio_interval: Interval {
            low: (mean - half).exp(),
            high: (mean + half).exp(),
        },
    })
}

/// Benjamini–Hochberg adjusted p-values of a family of tests, in the
/// order given: `p_adj(k) = min over j ≥ k of (m / j) · p(j)` with the p
/// sorted ascending, capped at 1. Marking the tests whose adjusted p is
/// below q keeps the expected share of chance findings among the marked at
/// q at most: a ledger of 80 cells tested at 0.05 each would otherwise mark
/// about four cells that nothing moved.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

/// The power the minimum detectable change is sized for.
pub const POWER: f64 = 0.8;

/// The smallest change of B's level relative to A's (a fraction: 0.05 = 5%)
/// that Welch's two-sided t test on `ln a` against `ln b` at `alpha` would
/// find with chance `power`, given the spread the replicates showed:
/// `exp((t(1 − α/2, df) + t(power, df)) · se) − 1`, with the standard error
/// and Welch–Satterthwaite df of [`welch_log`]. `None` unless each side has
/// at least two positive finite values; 0 where neither side spreads.
pub fn min_detectable_welch_log(a: &[f64], b: &[f64], alpha: f64, power: f64) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let ((va, na), (vb, nb)) = (log_spread(a)?, log_spread(b)?);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(0.0);
    }
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let k = t.inverse_cdf(1.0 - alpha / 2.0) + t.inverse_cdf(power);
    Some((k * se2.sqrt()).exp_m1())
}

/// As [`min_detectable_welch_log`] for Mann–Whitney U on samples, by its
/// normal approximation on the logs of the samples: `exp((z(1 − α/2) +
/// z(power)) · se) − 1`, `se` the standard error of the difference of the
/// two mean logs. An approximation (U is about 95% as efficient as t on
/// normal data, more on heavy tails) and, as its test, blind to how much a
/// run's level moves between runs.
pub fn min_detectable_normal_log(a: &[f64], b: &[f64], alpha: f64, power: f64) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, Normal};
    let ((va, na), (vb, nb)) = (log_spread(a)?, log_spread(b)?);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(0.0);
    }
    let z = Normal::new(0.0, 1.0).ok()?;
    let k = z.inverse_cdf(1.0 - alpha / 2.0) + z.inverse_cdf(power);
    Some((k * se2.sqrt()).exp_m1())
}

/// The sample variance of `ln v` and the count; `None` under two values or
/// any not positive and finite.
fn log_spread(v: &[f64]) -> Option<(f64, f64)> {
    if v.len() < 2 || v.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
        return None;
    }
    let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((var, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_detectable_change_matches_a_hand_computation() {
        // ln a = {0, 0.1}, ln b = {0, 0.1}: each variance 0.005, se² =
        // 0.005/2 · 2 = 0.005, df = 0.005² / (2 · 0.0025² / 1) = 2;
        // t(0.975, 2) = 4.302653, t(0.8, 2) = 1.060660;
        // (4.302653 + 1.060660) · √0.005 = 0.379243 → e^x − 1 = 0.461179.
        let v = [1.0, 0.1f64.exp()];
        let mdc = min_detectable_welch_log(&v, &v, 0.05, POWER).unwrap();
        assert!((mdc - 0.461_179).abs() < 1e-4, "{mdc}");
        // The normal one: (1.959964 + 0.841621) · √0.005 = 0.198102 → 0.219087.
        let mdc = min_detectable_normal_log(&v, &v, 0.05, POWER).unwrap();
        assert!((mdc - 0.219_087).abs() < 1e-4, "{mdc}");
        // No spread on either side: any change is seen.
        assert_eq!(
            min_detectable_welch_log(&[2.0; 3], &[3.0; 3], 0.05, POWER),
            Some(0.0)
        );
        assert_eq!(
            min_detectable_welch_log(&[2.0], &[3.0; 3], 0.05, POWER),
            None
        );
    }

    #[test]
    fn the_minimum_detectable_change_shrinks_with_more_passes_and_less_spread() {
        let passes = |n: usize, spread: f64| -> Vec<f64> {
            (0..n)
                .map(|i| 100.0 * (1.0 + spread * if i % 2 == 0 { 1.0 } else { -1.0 }))
                .collect()
        };
        let mdc = |n, spread| {
            let v = passes(n, spread);
            min_detectable_welch_log(&v, &v, 0.05, POWER).unwrap()
        };
        assert!(
            mdc(10, 0.05) < mdc(4, 0.05),
            "{} {}",
            mdc(10, 0.05),
            mdc(4, 0.05)
        );
        assert!(mdc(4, 0.01) < mdc(4, 0.05));
        let normal = |n, spread| {
            let v = passes(n, spread);
            min_detectable_normal_log(&v, &v, 0.05, POWER).unwrap()
        };
        assert!(normal(100, 0.05) < normal(10, 0.05));
        assert!(normal(10, 0.01) < normal(10, 0.05));
        // A stricter α needs a larger change.
        let v = passes(6, 0.03);
        assert!(
            min_detectable_welch_log(&v, &v, 0.01, POWER).unwrap()
                > min_detectable_welch_log(&v, &v, 0.05, POWER).unwrap()
        );
    }

    #[test]
    fn exact_p_matches_tables() {
        // n1 = n2 = 5, U = 2: two-sided exact p = 2 × 0.0159 = 0.0317 (standard tables).
        let a = [1.0, 2.0, 2.5, 3.5, 4.0];
        let b = [3.0, 6.0, 7.0, 8.0, 9.0];
        let mw = mann_whitney(&a, &b).unwrap();
        assert!(mw.exact);
        assert_eq!(mw.u, 2.0);
        assert!((mw.p - 0.031_746).abs() < 1e-5, "{}", mw.p);
        // Complete separation, 7 vs 7: p = 2 / C(14, 7) = 2 / 3432.
        let a: Vec<f64> = (0..7).map(f64::from).collect();
        let b: Vec<f64> = (10..17).map(f64::from).collect();
        let p = mann_whitney(&a, &b).unwrap().p;
        assert!((p - 2.0 / 3432.0).abs() < 1e-12, "{p}");
        // Identical samples (all ties): no evidence of a difference.
        let same = [5.0; 6];
        assert_eq!(mann_whitney(&same, &same).unwrap().p, 1.0);
    }

    #[test]
    fn normal_approximation_agrees_with_exact_on_large_samples() {
        let a: Vec<f64> = (0..30).map(|i| i as f64 * 1.01).collect();
        let b: Vec<f64> = (0..30).map(|i| i as f64 * 1.01 + 7.3).collect();
        let exact = mann_whitney(&a, &b).unwrap();
        assert!(exact.exact);
        let mut a2 = a.clone();
        a2.push(1000.0); // 61 values: past the exact limit
        let approx = mann_whitney(&a2, &b).unwrap();
        assert!(!approx.exact);
        assert!(approx.p > 0.0 && approx.p < 0.2);
        assert!((erfc(0.5) - 0.479_500_122).abs() < 1e-7);
        assert!((normal_sf(1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn bootstrap_ratio_sees_a_ten_percent_shift() {
        let mut rng = fastrand::Rng::with_seed(7);
        let a: Vec<f64> = (0..11).map(|_| 1000.0 + rng.f64() * 20.0).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.10).collect();
        let ci = bootstrap_ratio_of_medians(&a, &b, 0.95, 2000, 1).unwrap();
        assert!(ci.contains(1.10) && !ci.contains(1.0), "{ci:?}");
        let ci = bootstrap_ratio_of_medians(&a, &a, 0.95, 2000, 1).unwrap();
        assert!(ci.contains(1.0), "{ci:?}");
    }

    #[test]
    fn bootstrap_median_interval_covers_at_about_nominal_rate() {
        // Samples of 31 from a skewed distribution with a known median
        // (exponential, median ln 2): a 95% interval should cover it in
        // roughly 95% of trials (percentile bootstrap of a median runs a
        // little off nominal at small n, so allow 88–99%).
        let mut rng = fastrand::Rng::with_seed(42);
        let true_median = std::f64::consts::LN_2;
        let trials = 300;
        let mut covered = 0;
        for t in 0..trials {
            let v: Vec<f64> = (0..31).map(|_| -(1.0 - rng.f64()).ln()).collect();
            if bootstrap_median(&v, 0.95, 500, t)
                .unwrap()
                .contains(true_median)
            {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.88..=0.99).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn the_paired_test_matches_a_hand_computation_and_cancels_a_common_drift() {
        // ln(b/a) = {0.1, 0.2, 0.3}: mean 0.2, var 0.01, se = 0.1/√3 =
        // 0.057735, t = 3.464102 on 2 df → p = 0.074180; t(0.975, 2) =
        // 4.302653 → ±0.248414 around 0.2.
        let a = [1.0, 2.0, 3.0];
        let b: Vec<f64> = a
            .iter()
            .zip([0.1f64, 0.2, 0.3])
            .map(|(x, d)| x * d.exp())
            .collect();
        let t = paired_log(&a, &b, 0.95).unwrap();
        assert!((t.p - 0.074_180).abs() < 1e-4, "{}", t.p);
        assert_eq!(t.df, 2.0);
        assert!((t.ratio_interval.low.ln() - (0.2 - 0.248_414)).abs() < 1e-4);
        assert!((t.ratio_interval.high.ln() - (0.2 + 0.248_414)).abs() < 1e-4);
        // The passes' levels spread by 3× (Welch sees no difference) while
        // each pair differs by 1% ± 0.1%: the paired test finds it.
        let a = [100.0, 200.0, 300.0, 150.0, 250.0];
        let b: Vec<f64> = a
            .iter()
            .zip([1.010, 1.011, 1.009, 1.010, 1.0105])
            .map(|(x, r)| x * r)
            .collect();
        assert!(welch_log(&a, &b, 0.95).unwrap().p > 0.5);
        assert!(paired_log(&a, &b, 0.95).unwrap().p < 1e-4);
        // Unequal counts, one pair, a non-positive value: no test.
        assert!(paired_log(&[1.0, 2.0], &[1.0], 0.95).is_none());
        assert!(paired_log(&[1.0], &[1.0], 0.95).is_none());
        assert!(paired_log(&[1.0, 0.0], &[1.0, 2.0], 0.95).is_none());
        // Every pair the same ratio: no spread, p 0 (or 1 at ratio 1).
        assert_eq!(paired_log(&[1.0, 2.0], &[2.0, 4.0], 0.95).unwrap().p, 0.0);
        assert_eq!(paired_log(&[1.0, 2.0], &[1.0, 2.0], 0.95).unwrap().p, 1.0);
    }

    #[test]
    fn benjamini_hochberg_matches_a_hand_computation() {
        // Sorted: 0.001, 0.01, 0.03, 0.04, 0.5; m = 5: ×5, ×2.5, ×5/3,
        // ×1.25, ×1 → 0.005, 0.025, 0.05, 0.05, 0.5, each the least of
        // itself and those after it.
        let p = [0.04, 0.001, 0.5, 0.03, 0.01];
        let a = benjamini_hochberg(&p);
        let want = [0.05, 0.005, 0.5, 0.05, 0.025];
        for (x, w) in a.iter().zip(want) {
            assert!((x - w).abs() < 1e-12, "{a:?}");
        }
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[0.9, 0.95]), [0.95, 0.95]);
    }

    #[test]
    fn welch_on_replicates_matches_a_hand_computation() {
        // ln values 0, 0.1 | 0.3, 0.5: means 0.05 and 0.4, variances 0.005
        // and 0.02, se² = 0.0025 + 0.01, t = 0.35 / 0.1118 = 3.130,
        // df = 0.0125² / (0.0025² + 0.01²) = 1.471.
        let a = [1.0, 0.1f64.exp()];
        let b = [0.3f64.exp(), 0.5f64.exp()];
        let w = welch_log(&a, &b, 0.95).unwrap();
        assert!((w.df - 1.470_588).abs() < 1e-5, "{}", w.df);
        assert!(w.p > 0.05 && w.p < 0.3, "{}", w.p);
        assert!(w.ratio_interval.contains(0.35f64.exp()));
        // Replicates 5% apart within each run, 30% between runs: a real change.
        let a = [1000.0, 1050.0, 980.0];
        let b = [1300.0, 1360.0, 1290.0];
        let w = welch_log(&a, &b, 0.95).unwrap();
        assert!(w.p < 0.01 && !w.ratio_interval.contains(1.0), "{w:?}");
        // The same spread with no change between runs: none found.
        let b = [1040.0, 990.0, 1010.0];
        let w = welch_log(&a, &b, 0.95).unwrap();
        assert!(w.p > 0.5 && w.ratio_interval.contains(1.0), "{w:?}");
        // Too few replicates, or values that are not positive: no test.
        assert!(welch_log(&[1.0], &b, 0.95).is_none());
        assert!(welch_log(&[1.0, 0.0], &b, 0.95).is_none());
    }

    #[test]
    fn welch_rejects_at_about_alpha_when_nothing_changed() {
        let mut rng = fastrand::Rng::with_seed(11);
        let trials = 2000;
        let mut rejected = 0;
        for _ in 0..trials {
            let mut draw = || (0.05 * (rng.f64() + rng.f64() + rng.f64() - 1.5)).exp() * 1000.0;
            let a = [draw(), draw(), draw()];
            let b = [draw(), draw(), draw()];
            if welch_log(&a, &b, 0.95).unwrap().p < 0.05 {
                rejected += 1;
            }
        }
        let rate = rejected as f64 / trials as f64;
        assert!((0.02..=0.08).contains(&rate), "false alarms {rate}");
    }
}
