//! Drift common to figures sampled in rounds (an interleaved sweep).
//!
//! When sample `k` of every figure still sampling comes from round `k`, a
//! change of the machine's speed during round `k` (another guest, a
//! frequency step) moves all of that round's samples by about the same
//! factor. Dividing it out leaves each figure's own variation:
//!
//! ```text
//! typical(i)   = median of figure i's samples in the rounds every figure took part in
//! factor(k)    = geometric mean, over the figures in round k, of sample(i, k) / typical(i)
//! corrected(i) = median over k of sample(i, k) / factor(k)
//! ```
//!
//! Figures leave the rounds when they are done, so late rounds may hold few
//! of them. A figure's level is read where all were seen together: alone in
//! a round, nothing tells a drift from a change of its own, and its sample
//! there counts as its typical value.

use super::median;

/// The drift factor of each round, or `None` unless there are at least two
/// figures, each with at least one sample, all positive and finite. Figure
/// `i`'s sample `k` belongs to round `k`; a figure with fewer samples left
/// the rounds early.
pub fn round_factors(figures: &[&[f64]]) -> Option<Vec<f64>> {
    if figures.len() < 2
        || figures
            .iter()
            .any(|f| f.is_empty() || f.iter().any(|&v| !(v > 0.0 && v.is_finite())))
    {
        return None;
    }
    let shared = figures.iter().map(|f| f.len()).min()?;
    let typical: Vec<f64> = figures.iter().map(|f| median(&f[..shared])).collect();
    let rounds = figures.iter().map(|f| f.len()).max()?;
    Some(
        (0..rounds)
            .map(|k| {
                let (sum, n) = figures
                    .iter()
                    .zip(&typical)
                    .filter_map(|(f, t)| f.get(k).map(|v| (v / t).ln()))
                    .fold((0.0, 0usize), |(s, n), l| (s + l, n + 1));
                (sum / n as f64).exp()
            })
            .collect(),
    )
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
    fn a_figure_alone_in_late_rounds_keeps_the_level_it_shared() {
        // Figure 0 left after 3 rounds; in rounds 3–6 figure 1 ran alone and
        // slow. Figure 0 must not move, and figure 1 is read at its level in
        // the rounds both shared: alone, its slowness is not told from drift.
        let a = [100.0, 101.0, 99.0];
        let b = [200.0, 202.0, 198.0, 300.0, 300.0, 300.0, 300.0];
        let f = round_factors(&[&a, &b]).unwrap();
        assert_eq!(f.len(), 7);
        assert!(
            (corrected_median(&a, &f) / 100.0 - 1.0).abs() < 0.01,
            "{f:?}"
        );
        assert!(
            (corrected_median(&b, &f) / 200.0 - 1.0).abs() < 0.01,
            "{f:?}"
        );
    }

    #[test]
    fn empty_or_lone_figures_give_no_factors() {
        assert!(round_factors(&[&[1.0, 2.0]]).is_none());
        assert!(round_factors(&[&[], &[1.0]]).is_none());
        assert!(round_factors(&[&[1.0, 0.0], &[1.0, 2.0]]).is_none());
    }
}
