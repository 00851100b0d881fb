//! What a figure is measured with and what measuring gives: the phase
//! budget every timing model spends, and the [`Measurement`] every model
//! returns (samples, their summary and precision, the overheads subtracted,
//! the distribution of single operations).

use crate::stats::compare::Interval;
use crate::stats::{LatencyHistogram, Percentiles, Summary};
use std::time::Duration;

/// How long each phase of one figure runs.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Warm-up, also used to calibrate the iteration count.
    pub warmup: Duration,
    /// Target duration of one sample.
    pub sample_time: Duration,
    /// Samples every figure takes at least.
    pub samples: usize,
    /// Further samples until the median is known this precisely, within a time limit.
    pub precision: Precision,
    /// Duration of the per-round-trip (histogram) pass.
    pub histogram_time: Duration,
    /// Round trips whose whole content is checked, before and after timing.
    pub verify_rounds: u64,
    /// How long the peer may take beyond a phase's expected duration.
    pub timeout: Duration,
}

#[cfg(test)]
impl Budget {
    /// A budget of a few milliseconds and a fixed count of 3 samples, for
    /// unit tests of the timing models.
    pub(crate) fn tiny() -> Budget {
        Budget {
            warmup: Duration::from_millis(2),
            sample_time: Duration::from_millis(1),
            samples: 3,
            // No time for further samples: the count stays 3.
            precision: Precision {
                target: 0.02,
                max_time: Duration::ZERO,
            },
            histogram_time: Duration::from_millis(1),
            verify_rounds: 4,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Everything measured for one figure: the samples and their summary,
/// the overheads subtracted, the distribution of single operations.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Round trips per sample (calibrated).
    pub iterations: u64,
    /// One-way time of each sample, overhead subtracted, in ns.
    pub samples_ns: Vec<f64>,
    /// Summary of `samples_ns`.
    pub summary: Summary,
    /// The interval of the median and whether it met the precision target.
    pub precision: Option<Achieved>,
    /// Loop overhead subtracted from every one-way figure, in ns.
    pub loop_overhead_ns: f64,
    /// Cost of one clock read, subtracted from every individually timed round trip.
    pub clock_overhead_ns: f64,
    /// Distribution of individual one-way times.
    pub latency: Percentiles,
    /// Round trips whose whole content was compared.
    pub verified_round_trips: u64,
    /// The individual times behind `latency`, kept where figures of several
    /// passes are merged (ping-pong and operations); `None` elsewhere.
    pub histogram: Option<LatencyHistogram>,
}

/// When a figure has enough samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// Largest acceptable half-width of the interval of the median, as a
    /// fraction of the median (0.02: ± 2%).
    pub target: f64,
    /// The longest the samples of one figure may take in all; past the
    /// budget's minimum count, no sample starts after it.
    pub max_time: Duration,
}

/// How precisely a figure's level is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Achieved {
    /// The target it was sampled for.
    pub target: f64,
    /// Half-width of the interval as a fraction of its centre; infinite
    /// when the centre is at or below zero (nothing to be precise about).
    pub achieved: f64,
    /// Whether `achieved ≤ target`.
    pub met: bool,
    /// The 95% interval of the level (same unit as the samples).
    pub interval_ns: Interval,
    /// The units the interval rests on.
    pub basis: Basis,
}

/// The units an interval rests on: what it says varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The medians of this many passes: the interval says where the
    /// figure's level falls from one pass (seconds apart, fresh channel and
    /// peers) to the next on this machine.
    Passes(usize),
    /// The means of this many blocks of consecutive samples of one pass:
    /// the interval says how well this pass's level is known, not how much
    /// another pass or run would differ.
    Batches(usize),
}
