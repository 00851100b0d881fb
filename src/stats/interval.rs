//! Intervals over the unit that varies.
//!
//! On a shared or virtual machine a figure's level moves between passes by
//! more than its samples scatter within one (the host's load changes every
//! few seconds), and consecutive samples of one pass drift together. An
//! interval that treats every sample as independent is then far narrower
//! than the figure's real uncertainty. The interval of a figure is a
//! Student t interval over the unit that varies, the medians of its passes;
//! within one pass, the order-statistic interval of the median of its samples.

use super::compare::Interval;

/// A Student t interval of the mean of some units, and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TInterval {
    /// Mean of the units: the interval's centre.
    pub centre: f64,
    /// The interval.
    pub interval: Interval,
    /// How many units it rests on (degrees of freedom + 1).
    pub units: usize,
}

/// The two-sided Student t quantile for confidence `level` (e.g. 0.95) with
/// `df` degrees of freedom: `t(1 − (1 − level)/2, df)`.
pub fn t_quantile(level: f64, df: usize) -> f64 {
    // The 95% quantiles of the few degrees of freedom intervals here use
    // are computed once: a sampling loop looks at its interval often.
    const CACHED: usize = 64;
    static T95: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let df = df.max(1);
    if level == 0.95 && df <= CACHED {
        return T95.get_or_init(|| (0..=CACHED).map(|d| exact_t(0.95, d.max(1))).collect())[df];
    }
    exact_t(level, df)
}

fn exact_t(level: f64, df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t = StudentsT::new(0.0, 1.0, df as f64).expect("df ≥ 1 is valid");
    t.inverse_cdf(1.0 - (1.0 - level) / 2.0)
}

/// The Student t interval at `level` of the mean of `units`, each one
/// independent measurement of the same level (e.g. one pass's median):
/// `mean ± t(level, n − 1) · sd / √n`. `None` for fewer than two units or
/// any not finite.
pub fn t_interval(units: &[f64], level: f64) -> Option<TInterval> {
    let n = units.len();
    if n < 2 || units.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mean = units.iter().sum::<f64>() / n as f64;
    let var = units.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_quantile(level, n - 1) * (var / n as f64).sqrt();
    Some(TInterval {
        centre: mean,
        interval: Interval {
            low: mean - half,
            high: mean + half,
        },
        units: n,
    })
}

/// The distribution-free interval at `level` of the median of `samples`,
/// from their order statistics: `[x(l), x(n+1−l)]` with the largest `l`
/// such that a Binomial(n, ½) count falls below `l` with chance at most
/// `(1 − level)/2`. Exact for independent samples of any distribution
/// (heavy tails included), unlike a bootstrap of the median, which covers
/// less than it says when samples are few. `None` under the fewest
/// samples that can reach `level` (6 for 95%) or if any is not finite.
pub fn median_interval(samples: &[f64], level: f64) -> Option<Interval> {
    let n = samples.len();
    if n == 0 || samples.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let tail = (1.0 - level) / 2.0;
    // P(B ≤ k) for B ~ Binomial(n, ½), summed from the left; for large n
    // 0.5^n underflows, and the normal approximation is as good.
    let l = if n <= 1000 {
        let mut pmf = 0.5f64.powi(n as i32);
        let mut cdf = 0.0;
        let mut l = 0;
        for k in 0..n {
            cdf += pmf;
            if cdf > tail {
                break;
            }
            l = k + 1;
            pmf *= (n - k) as f64 / (k + 1) as f64;
        }
        l
    } else {
        let z = t_quantile(level, 100_000);
        ((n as f64 - z * (n as f64).sqrt()) / 2.0).floor() as usize
    };
    if l == 0 {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(Interval {
        low: sorted[l - 1],
        high: sorted[n - l],
    })
}

/// The Wilson score interval at `level` of a proportion seen `k` times in
/// `n` trials. Chosen over the normal (Wald) interval because the rates it
/// serves (false positives near α = 5%) lie near 0, where Wald's interval
/// covers far less than it says and can reach below 0; Wilson's stays in
/// [0, 1] and keeps close to its level from a few dozen trials up. `None`
/// for no trials or `k > n`.
pub fn binomial_interval(k: usize, n: usize, level: f64) -> Option<Interval> {
    if n == 0 || k > n {
        return None;
    }
    let z = super::regression::normal_quantile(1.0 - (1.0 - level) / 2.0);
    let (nf, p) = (n as f64, k as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = z / (1.0 + z2 / nf) * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (4, 2.776),
            (9, 2.262),
            (1000, 1.962),
        ] {
            assert!((t_quantile(0.95, df) - t).abs() < 1e-3, "df {df}");
        }
    }

    #[test]
    fn t_interval_of_known_units() {
        // Five pass medians: mean 5.4, sd 0.6205; t(0.975, 4) = 2.776.
        let u = [4.33, 5.43, 5.80, 5.69, 5.75];
        let ti = t_interval(&u, 0.95).unwrap();
        let sd = (u.iter().map(|v| (v - ti.centre).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((ti.centre - 5.4).abs() < 1e-12);
        let half = (ti.interval.high - ti.interval.low) / 2.0;
        assert!((half - 2.776 * sd / 5f64.sqrt()).abs() < 1e-3);
        assert_eq!(ti.units, 5);
        assert!(t_interval(&[1.0], 0.95).is_none());
        assert!(t_interval(&[1.0, f64::NAN], 0.95).is_none());
    }

    #[test]
    fn median_intervals_use_the_binomial_order_statistics() {
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        // n = 10: x(2) and x(9), coverage 97.9% (x(3), x(8) would be 89%).
        assert_eq!(
            median_interval(&s, 0.95),
            Some(Interval {
                low: 2.0,
                high: 9.0
            })
        );
        // n = 5 cannot reach 95%: min and max cover only 93.75%.
        assert_eq!(median_interval(&s[..5], 0.95), None);
        assert_eq!(median_interval(&s[..6], 0.95).unwrap().low, 1.0);
        let many: Vec<f64> = (0..2001).map(f64::from).collect();
        let iv = median_interval(&many, 0.95).unwrap();
        assert!(iv.contains(1000.0) && iv.high - iv.low < 100.0, "{iv:?}");
    }

    #[test]
    fn wilson_interval_matches_published_values_and_stays_in_bounds() {
        // Newcombe (1998), table I: 81 of 263 at 95% gives 0.2553–0.3662.
        let i = binomial_interval(81, 263, 0.95).unwrap();
        assert!(
            (i.low - 0.2553).abs() < 5e-4 && (i.high - 0.3662).abs() < 5e-4,
            "{i:?}"
        );
        let zero = binomial_interval(0, 20, 0.95).unwrap();
        assert_eq!(zero.low, 0.0);
        assert!(zero.high > 0.1 && zero.high < 0.2, "{zero:?}");
        let all = binomial_interval(20, 20, 0.95).unwrap();
        assert_eq!(all.high, 1.0);
        assert!(binomial_interval(0, 0, 0.95).is_none());
        assert!(binomial_interval(3, 2, 0.95).is_none());
    }
}
