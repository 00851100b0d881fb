//! Mode rate's record of a figure (`rate_curve`): the curve of offered
//! rates, point by point and round by round, its knee and saturation rate
//! over rounds, and how the sender waited (docs/method.md, "Rate: latency
//! under offered load").

use super::facts::IntervalRecord;
use serde::{Deserialize, Serialize};

/// `rate_curve`: what a rate figure measured beyond its headline (the
/// latencies from the intended send at the lowest offered rate, which are
/// the figure's `samples_ns` and `latency_ns`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateCurveRecord {
    /// Sweeps of the whole curve, each over fresh channels.
    pub rounds: usize,
    /// How the sender waited for each intended send: "spin", "sleep, then
    /// spin" or "spin and sleep" (by rate).
    pub waiting: String,
    /// How far short of each intended send the sender's sleep ended, ns
    /// (this machine's wake-up margin, measured before the first point).
    pub wake_margin_ns: u64,
    /// Whether the channel may drop messages (losses counted, not failed).
    pub lossy: bool,
    /// Whether the sweep reached its highest rate without saturating.
    pub unsaturated: bool,
    /// The lowest offered rate from which on the p99 from the intended send
    /// stays at twice the low-rate p99 (the median p99 of the rates up to a
    /// quarter of the saturation rate) or more, msg/s; null where no round
    /// has one.
    pub knee_rate: Option<OverRoundsRecord>,
    /// The highest achieved rate within 5% of its offered rate, msg/s;
    /// null where no point kept up.
    pub saturation_rate: Option<OverRoundsRecord>,
    /// Every point, round by round, each round's in increasing offered rate.
    pub points: Vec<RatePointRecord>,
}

/// A rate over the rounds of a curve: its median, each round's value and
/// the 95% interval over rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverRoundsRecord {
    /// Median over the rounds that have a value, msg/s.
    pub median: f64,
    /// Each round's value, msg/s; null where that round has none.
    pub per_round: Vec<Option<f64>>,
    /// The 95% interval over rounds, msg/s; null under two rounds with a value.
    pub interval: Option<IntervalRecord>,
}

/// One offered rate of one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatePointRecord {
    /// The round it belongs to, from 1.
    pub round: usize,
    /// Messages a second the sender's schedule offered.
    pub offered_rate: f64,
    /// Messages received ÷ (last arrival − first intended send), msg/s.
    pub achieved_rate: f64,
    /// Timed messages sent.
    pub sent: u64,
    /// Timed messages received.
    pub received: u64,
    /// Timed messages the channel dropped (lossy channels; 0 elsewhere).
    pub lost: u64,
    /// Messages sent more than one period after their intended time.
    pub late: u64,
    /// The most the sender fell behind its schedule, ns.
    pub behind_max_ns: u64,
    /// Latency from the intended send (what a user offered this rate sees).
    pub latency_ns: QuantilesRecord,
    /// Latency from the actual send (the service time a closed loop reports).
    pub service_ns: QuantilesRecord,
    /// The sender's CPU time per message sent, ns.
    pub sender_cpu_ns: f64,
    /// The receiver's CPU time per message received, ns.
    pub receiver_cpu_ns: f64,
    /// Messages whose whole content was compared, before and after.
    pub verified: u64,
}

/// Percentiles of one latency population, ns (one clock read subtracted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantilesRecord {
    /// 50th percentile.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl RateCurveRecord {
    /// The offered rates of the curve, increasing, each once.
    pub fn offered_rates(&self) -> Vec<f64> {
        let mut rates: Vec<f64> = self.points.iter().map(|p| p.offered_rate).collect();
        rates.sort_by(f64::total_cmp);
        rates.dedup();
        rates
    }

    /// The points at `offered` msg/s, one per round that ran it.
    pub fn at(&self, offered: f64) -> impl Iterator<Item = &RatePointRecord> {
        self.points
            .iter()
            .filter(move |p| p.offered_rate == offered)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A curve of two rounds at 1k and 10k msg/s, the second round short
    /// of its 10k point.
    pub(crate) fn curve() -> RateCurveRecord {
        let q = |p50: f64| QuantilesRecord {
            p50,
            p90: p50 * 1.5,
            p99: p50 * 2.0,
            p999: p50 * 3.0,
            max: p50 * 4.0,
            mean: p50 * 1.2,
        };
        let point = |round, offered: f64, p50| RatePointRecord {
            round,
            offered_rate: offered,
            achieved_rate: offered * 0.99,
            sent: 1000,
            received: 1000,
            lost: 0,
            late: 0,
            behind_max_ns: 0,
            latency_ns: q(p50),
            service_ns: q(p50 * 0.9),
            sender_cpu_ns: 900.0,
            receiver_cpu_ns: 1100.0,
            verified: 32,
        };
        RateCurveRecord {
            rounds: 2,
            waiting: "sleep, then spin".into(),
            wake_margin_ns: 60_000,
            lossy: false,
            unsaturated: true,
            knee_rate: None,
            saturation_rate: Some(OverRoundsRecord {
                median: 9900.0,
                per_round: vec![Some(9900.0), None],
                interval: None,
            }),
            points: vec![
                point(1, 1000.0, 5000.0),
                point(1, 10_000.0, 6000.0),
                point(2, 1000.0, 5100.0),
            ],
        }
    }

    #[test]
    fn a_curve_reads_back_as_written() {
        let c = curve();
        let text = serde_json::to_string_pretty(&c).unwrap();
        let back: RateCurveRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
        // Nulls are written, not left out: a reader tells "no knee" from
        // an older report.
        assert!(text.contains("\"knee_rate\": null"), "{text}");
        assert!(text.contains("\"interval\": null"), "{text}");
    }

    #[test]
    fn rates_and_points_by_rate() {
        let c = curve();
        assert_eq!(c.offered_rates(), vec![1000.0, 10_000.0]);
        assert_eq!(c.at(1000.0).count(), 2);
        assert_eq!(c.at(10_000.0).map(|p| p.round).collect::<Vec<_>>(), [1]);
    }
}
