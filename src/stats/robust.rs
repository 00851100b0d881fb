//! Robust location and spread, and the sign test: what compares one host's
//! figures with its peers' when a few of the peers may be far off (a
//! median, a median absolute deviation, a binomial tail).

/// The factor that makes a MAD estimate the standard deviation of normal
/// values (1 / Φ⁻¹(3/4)).
pub const MAD_SCALE: f64 = 1.4826;

/// The median absolute deviation of `values` from their median (unscaled);
/// `None` for no values or one that is not finite.
pub fn mad(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = super::median(values);
    let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    Some(super::median(&dev))
}

/// The robust (modified) z of `x` in `sample`: (x − its median) /
/// (MAD_SCALE × its MAD), the scale at least `floor` (so that identical
/// values do not make a tiny difference infinite); `None` for an empty
/// sample or a zero scale.
pub fn robust_z(x: f64, sample: &[f64], floor: f64) -> Option<f64> {
    let scale = (MAD_SCALE * mad(sample)?).max(floor);
    if scale.is_nan() || scale <= 0.0 || !x.is_finite() {
        return None;
    }
    Some((x - super::median(sample)) / scale)
}

/// The one-sided sign test: the probability of `k` or more successes in
/// `n` fair trials, P(X ≥ k) for X ~ Binomial(n, ½), summed exactly (in
/// logs, so that n of some thousands does not overflow). 1 for k = 0.
pub fn sign_test_p(k: usize, n: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    // ln C(n, i) by the running product, then the tail's sum in logs.
    let mut ln_c = 0.0f64;
    let mut terms = Vec::with_capacity(n - k + 1);
    for i in 0..=n {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        if i >= k {
            terms.push(ln_c);
        }
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
    (top + sum.ln() - n as f64 * std::f64::consts::LN_2)
        .exp()
        .min(1.0)
}

#[cfg(test)]
mod tests;
