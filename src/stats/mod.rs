//! Statistics over measured values. Pure functions: no I/O, no clocks, no
//! knowledge of mechanisms or of how the values were obtained.

pub mod change_points;
pub mod compare;
pub mod drift;
pub mod interval;
pub mod regression;
pub mod robust;

use hdrhistogram::Histogram;

/// Location and spread of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summarises `values`; `None` if there are none or any is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mean = sorted.iter().sum::<f64>() / n;
        let var = if sorted.len() > 1 {
            sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Some(Summary {
            median: quantile_sorted(&sorted, 0.5),
            mean,
            stddev: var.sqrt(),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }

    /// Spread relative to the median: (max − min) / median.
    pub fn relative_range(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }
}

/// The `q`-quantile (0..=1) of sorted values, interpolating linearly.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of no values");
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Median of unsorted values.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, 0.5)
}

/// A distribution of individual latencies in nanoseconds (HDR histogram,
/// 3 significant digits: every value is kept within 0.1%).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    /// Values that were at or below zero once their overheads were
    /// subtracted (recorded as 0, so that ranks stay right).
    at_or_below_zero: u64,
    /// Sum of every value as given, signed and unrounded: the mean it
    /// gives is exact where the histogram's own would be rounded, and
    /// counts a value at or below zero as what it was, not as 0.
    sum_ns: f64,
}

/// Percentiles of a [`LatencyHistogram`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// Number of values recorded.
    pub count: u64,
    /// Smallest value.
    pub min: u64,
    /// 50th percentile.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value.
    pub max: u64,
    /// Values at or below zero once their overheads were subtracted: they
    /// rank lowest, and a percentile that falls among them reads 0, which
    /// is not a measured time but "below the clock's resolution".
    pub at_or_below_zero: u64,
    /// Mean of every value as recorded (signed, unrounded): the centre of
    /// the same population as the percentiles.
    pub mean: f64,
}

impl Percentiles {
    /// `v`, one of these percentiles, unless it fell among the values at or
    /// below zero (then it was not resolved: `None`).
    pub fn resolved(&self, v: u64) -> Option<u64> {
        (v > 0 || self.at_or_below_zero == 0).then_some(v)
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// Largest value kept exactly: one hour in ns; longer values are clamped.
    pub const MAX_NS: u64 = 3_600_000_000_000;

    /// An empty histogram covering 1 ns to [`Self::MAX_NS`].
    pub fn new() -> Self {
        LatencyHistogram {
            hist: Histogram::new_with_bounds(1, Self::MAX_NS, 3).expect("static bounds are valid"),
            at_or_below_zero: 0,
            sum_ns: 0.0,
        }
    }

    /// Records one value (its rank clamped to [`Self::MAX_NS`]; the mean
    /// keeps it whole).
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns);
        self.sum_ns += ns as f64;
    }

    /// Records one time from which overheads were subtracted: one at or
    /// below zero is kept as 0 and counted ([`Percentiles::at_or_below_zero`]).
    pub fn record_ns(&mut self, ns: f64) {
        if ns > 0.0 {
            self.hist.saturating_record(ns.round() as u64);
        } else {
            self.at_or_below_zero += 1;
            self.hist.saturating_record(0);
        }
        self.sum_ns += ns;
    }

    /// Adds every value recorded in `other` (the same bounds, so it cannot fail).
    pub fn add(&mut self, other: &LatencyHistogram) {
        self.hist
            .add(&other.hist)
            .expect("histograms of the same bounds always add");
        self.at_or_below_zero += other.at_or_below_zero;
        self.sum_ns += other.sum_ns;
    }

    /// Percentiles, or `None` if nothing was recorded.
    pub fn percentiles(&self) -> Option<Percentiles> {
        let h = &self.hist;
        if h.is_empty() {
            return None;
        }
        Some(Percentiles {
            count: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            at_or_below_zero: self.at_or_below_zero,
            mean: self.sum_ns / h.len() as f64,
        })
    }
}

impl LatencyHistogram {
    /// Its counts, compressed (HdrHistogram's V2 deflate encoding, as its
    /// interval logs carry them): a few kilobytes where the counts array
    /// takes hundreds.
    pub fn encode(&self) -> Vec<u8> {
        use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
        let mut out = Vec::new();
        // Writing into a Vec cannot fail, and the histogram is a valid one.
        let _ = V2DeflateSerializer::new().serialize(&self.hist, &mut out);
        out
    }
}

/// The histogram of [`LatencyHistogram::encode`]'s encoding.
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("not an encoded histogram: {e:?}"))
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²). 1 when all are equal,
/// 1/n when one has everything; 1 for no values or all zero.
pub fn jain_index(xs: &[u64]) -> f64 {
    let sum: f64 = xs.iter().map(|&x| x as f64).sum();
    let sq: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum();
    if xs.is_empty() || sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert!((s.stddev - 1.290_994_4).abs() < 1e-6);
        assert!((s.relative_range() - 1.2).abs() < 1e-12);
    }

    #[test]
    fn summary_rejects_empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [10.0, 20.0, 30.0, 40.0, 50.0];
        assert_eq!(quantile_sorted(&v, 0.0), 10.0);
        assert_eq!(quantile_sorted(&v, 0.5), 30.0);
        assert_eq!(quantile_sorted(&v, 0.875), 45.0);
        assert_eq!(quantile_sorted(&v, 1.0), 50.0);
    }

    #[test]
    fn histogram_percentiles_are_ordered_and_close() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p = h.percentiles().unwrap();
        assert_eq!(p.count, 10_000);
        assert_eq!(p.min, 1000);
        assert!(
            p.min <= p.p50
                && p.p50 <= p.p90
                && p.p90 <= p.p99
                && p.p99 <= p.p999
                && p.p999 <= p.max
        );
        assert!((p.p50 as f64 - 5e6).abs() / 5e6 < 0.002);
        assert!((p.p99 as f64 - 9.9e6).abs() / 9.9e6 < 0.002);
        assert!(LatencyHistogram::new().percentiles().is_none());
    }

    #[test]
    fn times_at_or_below_zero_are_counted_and_never_read_as_measured() {
        let mut h = LatencyHistogram::new();
        for v in [-3.0, 0.0, 0.4, 50.0, 60.0] {
            h.record_ns(v);
        }
        let mut other = LatencyHistogram::new();
        other.record_ns(-1.0);
        h.add(&other);
        let p = h.percentiles().unwrap();
        assert_eq!((p.count, p.at_or_below_zero), (6, 3));
        // 0.4 rounds to 0 but was above zero: only the three at or below count.
        assert_eq!(p.min, 0);
        assert_eq!(p.resolved(p.min), None);
        assert_eq!(p.resolved(p.max), Some(60));
        // The mean is of the values as given: signed, unrounded, merged.
        assert!((p.mean - 106.4 / 6.0).abs() < 1e-9, "{}", p.mean);
        let mut clean = LatencyHistogram::new();
        clean.record(0);
        let c = clean.percentiles().unwrap();
        assert_eq!(
            c.resolved(c.min),
            Some(0),
            "a recorded 0 with nothing subtracted stands"
        );
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[5, 5, 5]), 1.0);
        assert!((jain_index(&[9, 0, 0]) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(jain_index(&[]), 1.0);
        let j = jain_index(&[600, 590, 610]);
        assert!(j > 0.99 && j < 1.0);
    }
}
