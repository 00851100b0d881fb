//! Cost models: time = setup + bytes × per-byte, by least squares, and
//! segmented fits that find where the per-byte cost changes (cache-size
//! boundaries, as the QNX study saw around 4–8 KB).

use super::compare::Interval;

/// A least-squares line y = intercept + slope × x over a range of x.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
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

/// Fits a line to `points` (x, y) with confidence intervals at `level`.
/// `None` with fewer than 3 points or fewer than 2 distinct x.
pub fn fit_line(points: &[(f64, f64)], level: f64) -> Option<LineFit> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let sst: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r2 = if sst > 0.0 { 1.0 - sse / sst } else { 1.0 };
    let s2 = sse / (nf - 2.0);
    let se_slope = (s2 / sxx).sqrt();
    let se_intercept = (s2 * (1.0 / nf + mx * mx / sxx)).sqrt();
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

/// Fits one line per segment of x, with at most `max_breaks` breakpoints at
/// data x values, each segment holding at least `min_distinct` distinct x.
/// The number and place of breakpoints minimise the BIC (two parameters per
/// line, one per breakpoint), so a break is kept only when it explains enough
/// to pay for itself. Returns the segments in order of x; empty if even one
/// line cannot be fitted.
pub fn segmented_fit(
    points: &[(f64, f64)],
    max_breaks: usize,
    min_distinct: usize,
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
    let fit = |a: usize, b: usize| fit_line(span(a, b), level);
    let Some(one) = fit(0, m) else {
        return Vec::new();
    };
    let n = pts.len();
    let mut best = (bic(one.sse, n, 2), vec![one]);
    if max_breaks >= 1 {
        for b1 in min_distinct..=m.saturating_sub(min_distinct) {
            let (Some(f1), Some(f2)) = (fit(0, b1), fit(b1, m)) else {
                continue;
            };
            let score = bic(f1.sse + f2.sse, n, 5);
            if score < best.0 {
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
                if score < best.0 {
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
        assert!(fit_line(&pts[..2], 0.95).is_none());
        assert!(fit_line(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)], 0.95).is_none());
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
        let segs = segmented_fit(&pts, 2, 3, 0.95);
        assert_eq!(segs.len(), 2, "{segs:#?}");
        assert_eq!(segs[0].x_max, 4096.0);
        assert_eq!(segs[1].x_min, 6144.0);
        assert!(
            (segs[0].slope - 0.1).abs() < 0.01 && (segs[1].slope - 1.0).abs() < 0.01,
            "{segs:#?}"
        );
        // One straight line stays one segment.
        let line: Vec<(f64, f64)> = sizes.iter().map(|&x| (x, 300.0 + 2.0 * x)).collect();
        assert_eq!(segmented_fit(&line, 2, 3, 0.95).len(), 1);
    }
}
