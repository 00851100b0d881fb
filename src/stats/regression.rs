//! Cost models: time = setup + bytes × per-byte, by least squares, and
//! segmented fits that find where the per-byte cost changes (cache-size
//! boundaries, as the QNX study saw around 4–8 KB).

use super::compare::Interval;

/// A least-squares line y = intercept + slope × x over a range of x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineFit {
    /// y at x = 0 (the setup cost).
    pub intercept: f64,
    /// dy/dx (the per-unit cost).
    pub slope: f64,
    /// Coefficient of determination (1 − SSE / SST); 1 when y is constant and fitted exactly.
    pub r2: f64,
    /// Confidence interval of the intercept at the level asked for.
    pub intercept_ci: Interval,
    /// Confidence interval of the slope.
    pub slope_ci: Interval,
    /// Weighted sum of squares of x about its mean (the slope's leverage).
    pub sxx: f64,
    /// Points fitted.
    pub n: usize,
    /// Smallest x fitted.
    pub x_min: f64,
    /// Largest x fitted.
    pub x_max: f64,
    /// Sum of squared residuals.
    pub sse: f64,
}

/// Two-sided Student t quantile: the t with P(|T| ≤ t) = `level` at `df`
/// degrees of freedom. Exact for 1 and 2 df; a Cornish–Fisher expansion of the
/// normal quantile beyond (error < 0.1% from 3 df at 95%).
pub fn t_quantile(level: f64, df: f64) -> f64 {
    let p = 0.5 + level / 2.0;
    if df <= 1.0 {
        return (std::f64::consts::PI * (p - 0.5)).tan();
    }
    if df <= 2.0 {
        return (2.0 * p - 1.0) * (2.0 / (4.0 * p * (1.0 - p))).sqrt();
    }
    let z = normal_quantile(p);
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * df)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3))
}

/// Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let low = 0.02425;
    if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// The weight of a point whose error is proportional to its y (1 / y²): the
/// noise of a timing is a fraction of it, so a 15 µs figure wobbles by more
/// ns than a 2 µs one and must not dominate the fit for it.
pub fn relative_weight(y: f64) -> f64 {
    if y != 0.0 { 1.0 / (y * y) } else { 1.0 }
}

/// Fits a line to `points` (x, y) by ordinary least squares, with confidence
/// intervals at `level`. `None` with fewer than 3 points or fewer than 2
/// distinct x.
#[cfg(test)]
pub fn fit_line(points: &[(f64, f64)], level: f64) -> Option<LineFit> {
    fit_line_weighted(points, |_| 1.0, level)
}

/// Fits a line to `points` by weighted least squares, `weight(y)` known up
/// to a common scale that the residuals estimate; `r2` and `sse` are the
/// weighted ones. `None` with fewer than 3 points or fewer than 2 distinct x.
pub fn fit_line_weighted(
    points: &[(f64, f64)],
    weight: impl Fn(f64) -> f64,
    level: f64,
) -> Option<LineFit> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let w: Vec<f64> = points.iter().map(|p| weight(p.1)).collect();
    let sw: f64 = w.iter().sum();
    let wsum = |f: &dyn Fn(f64, f64) -> f64| -> f64 {
        points.iter().zip(&w).map(|(p, wi)| wi * f(p.0, p.1)).sum()
    };
    let mx = wsum(&|x, _| x) / sw;
    let my = wsum(&|_, y| y) / sw;
    let sxx = wsum(&|x, _| (x - mx).powi(2));
    if sxx == 0.0 {
        return None;
    }
    let slope = wsum(&|x, y| (x - mx) * (y - my)) / sxx;
    let intercept = my - slope * mx;
    let sse = wsum(&|x, y| (y - intercept - slope * x).powi(2));
    let sst = wsum(&|_, y| (y - my).powi(2));
    let r2 = if sst > 0.0 { 1.0 - sse / sst } else { 1.0 };
    let s2 = sse / (nf - 2.0);
    let se_slope = (s2 / sxx).sqrt();
    let se_intercept = (s2 * (1.0 / sw + mx * mx / sxx)).sqrt();
    let t = t_quantile(level, nf - 2.0);
    let (x_min, x_max) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    Some(LineFit {
        intercept,
        slope,
        r2,
        intercept_ci: Interval {
            low: intercept - t * se_intercept,
            high: intercept + t * se_intercept,
        },
        slope_ci: Interval {
            low: slope - t * se_slope,
            high: slope + t * se_slope,
        },
        sxx,
        n,
        x_min,
        x_max,
        sse,
    })
}

/// Bayesian information criterion of a fit with `params` parameters.
fn bic(sse: f64, n: usize, params: usize) -> f64 {
    let nf = n as f64;
    // A perfect fit would give ln 0; floor the error at a negligible level.
    nf * (sse.max(1e-12 * nf) / nf).ln() + params as f64 * nf.ln()
}

/// Whether the slopes of two fits on disjoint points differ at `level`: a
/// two-sided t test on the difference, the residual variance pooled over
/// both fits (n₁ + n₂ − 4 degrees of freedom), as the weights make it one
/// noise. Pooling keeps a 3-point range whose residuals happen to be tiny
/// from looking precise.
pub fn slopes_differ(a: &LineFit, b: &LineFit, level: f64) -> bool {
    let df = (a.n + b.n) as f64 - 4.0;
    if df < 1.0 {
        return false;
    }
    let s2 = (a.sse + b.sse) / df;
    let se = (s2 / a.sxx + s2 / b.sxx).sqrt();
    let diff = (a.slope - b.slope).abs();
    // Two exact lines (no residual at all) differ if their slopes do.
    if se == 0.0 {
        return diff > 0.0;
    }
    diff / se > t_quantile(level, df)
}

/// Fits one line per segment of x, with at most `max_breaks` breakpoints at
/// data x values, each segment holding at least `min_distinct` distinct x.
/// A set of breakpoints is a candidate only if the slopes on the two sides of
/// each break differ at `level` ([`slopes_differ`]) and none is negative: a
/// range is where the per-unit cost changes, not where noise or one odd
/// point happens to bend the points. Among
/// candidates, the number and place of breakpoints minimise the BIC (two
/// parameters per line, one per breakpoint), so a break is kept only when it
/// also explains enough to pay for itself. Returns the segments in order of
/// x; empty if even one line cannot be fitted.
pub fn segmented_fit(
    points: &[(f64, f64)],
    max_breaks: usize,
    min_distinct: usize,
    weight: impl Fn(f64) -> f64 + Copy,
    level: f64,
) -> Vec<LineFit> {
    let mut pts = points.to_vec();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Start index in `pts` of each distinct x.
    let mut starts: Vec<usize> = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        if i == 0 || p.0 != pts[i - 1].0 {
            starts.push(i);
        }
    }
    let m = starts.len();
    let min_distinct = min_distinct.max(2);
    let span = |a: usize, b: usize| -> &[(f64, f64)] {
        // Distinct x values a..b (exclusive) as a slice of points.
        let lo = starts[a];
        let hi = if b < m { starts[b] } else { pts.len() };
        &pts[lo..hi]
    };
    let fit = |a: usize, b: usize| fit_line_weighted(span(a, b), weight, level);
    let Some(one) = fit(0, m) else {
        return Vec::new();
    };
    let n = pts.len();
    // The best of many places is tried, so a test at `level` for each would
    // find a change in noise alone far more often than 1 − level: ask each
    // break to hold at `level` after all the places it could have been
    // (Bonferroni).
    let places = (m + 1).saturating_sub(2 * min_distinct).max(1);
    let break_level = 1.0 - (1.0 - level) / places as f64;
    // A range is where the per-unit cost changes; a cost that falls as x grows
    // is not one (it is noise, or a step at the range's edge), so a break
    // that leaves a falling range on either side is not taken.
    let differ = |a: &LineFit, b: &LineFit| {
        a.slope >= 0.0 && b.slope >= 0.0 && slopes_differ(a, b, break_level)
    };
    let mut best = (bic(one.sse, n, 2), vec![one]);
    if max_breaks >= 1 {
        for b1 in min_distinct..=m.saturating_sub(min_distinct) {
            let (Some(f1), Some(f2)) = (fit(0, b1), fit(b1, m)) else {
                continue;
            };
            let score = bic(f1.sse + f2.sse, n, 5);
            if score < best.0 && differ(&f1, &f2) {
                best = (score, vec![f1, f2]);
            }
        }
    }
    if max_breaks >= 2 {
        for b1 in min_distinct..=m.saturating_sub(2 * min_distinct) {
            let Some(f1) = fit(0, b1) else { continue };
            for b2 in b1 + min_distinct..=m.saturating_sub(min_distinct) {
                let (Some(f2), Some(f3)) = (fit(b1, b2), fit(b2, m)) else {
                    continue;
                };
                let score = bic(f1.sse + f2.sse + f3.sse, n, 8);
                if score < best.0 && differ(&f1, &f2) && differ(&f2, &f3) {
                    best = (score, vec![f1, f2, f3]);
                }
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_is_fitted_exactly() {
        let pts: Vec<(f64, f64)> = [1.0, 64.0, 1024.0, 4096.0, 16384.0]
            .iter()
            .map(|&x| (x, 500.0 + 0.25 * x))
            .collect();
        let f = fit_line(&pts, 0.95).unwrap();
        assert!(
            (f.slope - 0.25).abs() < 1e-12 && (f.intercept - 500.0).abs() < 1e-9,
            "{f:?}"
        );
        assert!((f.r2 - 1.0).abs() < 1e-12);
        let w = fit_line_weighted(&pts, relative_weight, 0.95).unwrap();
        assert!(
            (w.slope - 0.25).abs() < 1e-12 && (w.intercept - 500.0).abs() < 1e-9,
            "{w:?}"
        );
        // 5% off at the largest size: the equal-weight line bends to it, the
        // relative one (where 5% of 4596 ns is as likely as 5% of 500) less.
        let mut off = pts.clone();
        off[4].1 *= 1.05;
        let (e, r) = (
            fit_line(&off, 0.95).unwrap(),
            fit_line_weighted(&off, relative_weight, 0.95).unwrap(),
        );
        assert!(
            (r.intercept - 500.0).abs() < (e.intercept - 500.0).abs(),
            "{e:?} {r:?}"
        );
        assert!(fit_line(&pts[..2], 0.95).is_none());
        assert!(fit_line(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)], 0.95).is_none());
    }

    #[test]
    fn noise_on_one_line_rarely_makes_ranges() {
        // A pipe-like line over the sweep's sizes with ±3% noise on each
        // size's figure, as a shared VM gives. BIC alone on an unweighted fit
        // split 113 of these 200, often leaving a flat small-size range of low
        // R²; about the test's nominal 5% may split.
        let sizes = crate::cli::parse::SWEEP;
        let mut rng = fastrand::Rng::with_seed(11);
        let mut split = 0;
        for _ in 0..200 {
            let pts: Vec<(f64, f64)> = sizes
                .iter()
                .map(|&b| {
                    let y = 2300.0 + 0.19 * b as f64;
                    (b as f64, y * (1.0 + (rng.f64() - 0.5) * 0.06))
                })
                .collect();
            if segmented_fit(&pts, 2, 3, relative_weight, 0.95).len() > 1 {
                split += 1;
            }
        }
        assert!(split <= 20, "{split} of 200 one-line series split");
    }

    #[test]
    fn slopes_differ_only_beyond_their_errors() {
        let line = |slope: f64, wobble: f64| {
            let pts: Vec<(f64, f64)> = (0..8)
                .map(|i| {
                    let x = (i * 1000) as f64;
                    let noise = if i % 2 == 0 { wobble } else { -wobble };
                    (x, 100.0 + slope * x + noise)
                })
                .collect();
            fit_line(&pts, 0.95).unwrap()
        };
        assert!(slopes_differ(&line(0.1, 5.0), &line(1.0, 5.0), 0.95));
        assert!(!slopes_differ(&line(0.10, 50.0), &line(0.11, 50.0), 0.95));
        // Exact lines differ exactly when their slopes do.
        assert!(slopes_differ(&line(0.1, 0.0), &line(0.2, 0.0), 0.95));
        assert!(!slopes_differ(&line(0.1, 0.0), &line(0.1, 0.0), 0.95));
    }

    #[test]
    fn t_and_normal_quantiles_match_tables() {
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-6);
        assert!((t_quantile(0.95, 1.0) - 12.706).abs() < 1e-3);
        assert!((t_quantile(0.95, 2.0) - 4.303).abs() < 1e-3);
        assert!((t_quantile(0.95, 5.0) - 2.571).abs() < 5e-3);
        assert!((t_quantile(0.95, 30.0) - 2.042).abs() < 1e-3);
    }

    #[test]
    fn intervals_cover_the_true_slope_under_noise() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut covered = 0;
        for _ in 0..200 {
            let pts: Vec<(f64, f64)> = (0..40)
                .map(|i| {
                    let x = (i * 500) as f64;
                    (x, 2000.0 + 0.5 * x + (rng.f64() - 0.5) * 400.0)
                })
                .collect();
            if fit_line(&pts, 0.95).unwrap().slope_ci.contains(0.5) {
                covered += 1;
            }
        }
        assert!((180..=199).contains(&covered), "covered {covered}/200");
    }

    #[test]
    fn a_two_slope_series_is_split_where_the_slope_changes() {
        // 0.1 ns/B up to 4 KiB, 1 ns/B beyond (the break the QNX study saw), with
        // a little deterministic noise and several samples per size.
        let sizes = [
            1.0, 16.0, 64.0, 256.0, 512.0, 1024.0, 2048.0, 3072.0, 4096.0, 6144.0, 8192.0, 12288.0,
            16384.0, 24576.0, 32768.0,
        ];
        let truth = |x: f64| {
            if x <= 4096.0 {
                1000.0 + 0.1 * x
            } else {
                1000.0 + 409.6 + (x - 4096.0)
            }
        };
        let mut pts = Vec::new();
        for (i, &x) in sizes.iter().enumerate() {
            for k in 0..5 {
                pts.push((x, truth(x) + ((i * 7 + k * 3) % 5) as f64 - 2.0));
            }
        }
        let segs = segmented_fit(&pts, 2, 3, relative_weight, 0.95);
        assert_eq!(segs.len(), 2, "{segs:#?}");
        assert_eq!(segs[0].x_max, 4096.0);
        assert_eq!(segs[1].x_min, 6144.0);
        assert!(
            (segs[0].slope - 0.1).abs() < 0.01 && (segs[1].slope - 1.0).abs() < 0.01,
            "{segs:#?}"
        );
        // Medians measured for shm-futex on a 2-vCPU VM (drift-corrected), whose
        // first three sizes fall by 8%: BIC and the slope test took them for a
        // range of -3.3 ns/B. A cost cannot fall with size.
        let falling_start = [
            (1.0, 3161.6),
            (16.0, 3038.2),
            (64.0, 2926.4),
            (128.0, 3134.7),
            (256.0, 3207.4),
            (512.0, 3184.7),
            (1024.0, 3220.8),
            (2048.0, 3345.2),
            (3072.0, 3537.3),
            (4096.0, 3611.2),
            (6144.0, 3952.7),
            (8192.0, 4086.2),
            (12288.0, 4641.2),
            (16384.0, 5109.5),
            (24576.0, 5942.7),
            (32768.0, 6968.3),
            (49152.0, 8744.4),
            (65536.0, 10670.7),
        ];
        let segs = segmented_fit(&falling_start, 2, 3, relative_weight, 0.95);
        assert!(segs.iter().all(|s| s.slope >= 0.0), "{segs:#?}");
        // One straight line stays one segment.
        let line: Vec<(f64, f64)> = sizes.iter().map(|&x| (x, 300.0 + 2.0 * x)).collect();
        assert_eq!(segmented_fit(&line, 2, 3, relative_weight, 0.95).len(), 1);
    }
}
