//! Drift common to figures sampled in rounds (an interleaved sweep).
//!
//! When sample `k` of every figure comes from round `k`, a change of the
//! machine's speed during round `k` (another guest, a frequency step) moves
//! all of that round's samples by about the same factor. Dividing it out
//! leaves each figure's own variation:
//!
//! ```text
//! factor(k)   = geometric mean over figures of sample(k) / median over rounds of that mean
//! corrected   = median over k of sample(k) / factor(k)
//! ```

use super::median;

/// The drift factor of each round, or `None` unless there are at least two
/// figures, all with the same number (≥ 1) of positive, finite samples.
pub fn round_factors(figures: &[&[f64]]) -> Option<Vec<f64>> {
    let rounds = figures.first()?.len();
    if figures.len() < 2
        || rounds == 0
        || figures
            .iter()
            .any(|f| f.len() != rounds || f.iter().any(|&v| !(v > 0.0 && v.is_finite())))
    {
        return None;
    }
    let means: Vec<f64> = (0..rounds)
        .map(|k| {
            let logs: f64 = figures.iter().map(|f| f[k].ln()).sum();
            (logs / figures.len() as f64).exp()
        })
        .collect();
    let typical = median(&means);
    Some(means.iter().map(|m| m / typical).collect())
}

/// The median of `samples` with each divided by its round's `factor`.
pub fn corrected_median(samples: &[f64], factors: &[f64]) -> f64 {
    let corrected: Vec<f64> = samples.iter().zip(factors).map(|(s, f)| s / f).collect();
    median(&corrected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_common_drift_is_divided_out() {
        // Three figures of 100, 200 and 400; rounds 3–5 run 40% slower on
        // all of them, round 1 a little faster; each figure has its own
        // small wobble.
        let drift = [1.0, 0.97, 1.4, 1.4, 1.4, 1.0, 1.0];
        let figures: Vec<Vec<f64>> = [100.0, 200.0, 400.0]
            .iter()
            .enumerate()
            .map(|(i, base)| {
                drift
                    .iter()
                    .enumerate()
                    .map(|(k, d)| base * d * (1.0 + 0.002 * ((i + k) % 3) as f64))
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = figures.iter().map(Vec::as_slice).collect();
        let f = round_factors(&refs).unwrap();
        assert!((f[2] / f[0] - 1.4).abs() < 0.01, "{f:?}");
        for (fig, base) in figures.iter().zip([100.0, 200.0, 400.0]) {
            let c = corrected_median(fig, &f);
            assert!((c / base - 1.0).abs() < 0.01, "{c} vs {base}");
        }
    }

    #[test]
    fn unequal_or_empty_rounds_give_no_factors() {
        assert!(round_factors(&[&[1.0, 2.0], &[1.0]]).is_none());
        assert!(round_factors(&[&[1.0, 2.0]]).is_none());
        assert!(round_factors(&[&[], &[]]).is_none());
        assert!(round_factors(&[&[1.0, 0.0], &[1.0, 2.0]]).is_none());
    }
}
