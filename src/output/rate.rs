//! What the terminal page (`table/rate.rs`) and the HTML report
//! (`report/rate.rs`) both read of a rate figure's curve: each offered
//! rate's points reduced to one level (the median over rounds, the counts
//! summed), and the knee and the saturation rate as text. Written once so
//! the page and the report can never disagree on a number.

use crate::engine::models::rate::curve::SATURATED_BELOW;
use crate::engine::models::rate::rate_text;
use crate::record::rate::{OverRoundsRecord, QuantilesRecord, RateCurveRecord, RatePointRecord};
use crate::stats::median;

/// One offered rate of a curve over all its rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLevel {
    /// Messages a second the sender's schedule offered.
    pub offered_rate: f64,
    /// Rounds that ran this rate (points reduced).
    pub rounds: usize,
    /// Median over rounds of the achieved rate, msg/s.
    pub achieved_rate: f64,
    /// Median over rounds of each percentile from the intended send, ns,
    /// over the rounds in which a message arrived; `None` when none did
    /// (a point without a message has no latency, not one of 0).
    pub latency_ns: Option<QuantilesRecord>,
    /// Rounds in which no timed message arrived.
    pub rounds_without_arrival: usize,
    /// Timed messages sent, over rounds.
    pub sent: u64,
    /// Timed messages the channel dropped, over rounds.
    pub lost: u64,
    /// Messages sent more than one period late, over rounds.
    pub late: u64,
    /// The most the sender fell behind its schedule in any round, ns.
    pub behind_max_ns: u64,
}

impl RateLevel {
    /// Whether the level kept up with its offer (the median achieved rate
    /// within 5% of the offered one), as the saturation rate judges a point.
    pub fn kept_up(&self) -> bool {
        self.achieved_rate >= SATURATED_BELOW * self.offered_rate
    }
}

/// The median over `points` of each percentile.
fn median_quantiles(points: &[&RatePointRecord]) -> QuantilesRecord {
    let mid = |v: fn(&QuantilesRecord) -> f64| {
        median(&points.iter().map(|p| v(&p.latency_ns)).collect::<Vec<_>>())
    };
    QuantilesRecord {
        p50: mid(|q| q.p50),
        p90: mid(|q| q.p90),
        p99: mid(|q| q.p99),
        p999: mid(|q| q.p999),
        max: mid(|q| q.max),
        mean: mid(|q| q.mean),
    }
}

/// The curve's levels, one per offered rate, in increasing offered rate.
pub fn levels(c: &RateCurveRecord) -> Vec<RateLevel> {
    c.offered_rates()
        .into_iter()
        .map(|rate| {
            let points: Vec<&RatePointRecord> = c.at(rate).collect();
            let arrived: Vec<&RatePointRecord> =
                points.iter().copied().filter(|p| p.received > 0).collect();
            RateLevel {
                offered_rate: rate,
                rounds: points.len(),
                achieved_rate: median(&points.iter().map(|p| p.achieved_rate).collect::<Vec<_>>()),
                latency_ns: (!arrived.is_empty()).then(|| median_quantiles(&arrived)),
                rounds_without_arrival: points.len() - arrived.len(),
                sent: points.iter().map(|p| p.sent).sum(),
                lost: points.iter().map(|p| p.lost).sum(),
                late: points.iter().map(|p| p.late).sum(),
                behind_max_ns: points.iter().map(|p| p.behind_max_ns).max().unwrap_or(0),
            }
        })
        .collect()
}

/// A level over rounds: its median, its range where two rounds or more
/// have one, and how many rounds had one where not every round did.
fn over_rounds(o: &OverRoundsRecord, prefix: &str) -> String {
    let mut s = format!("{prefix}{}", rate_text(o.median));
    // A range that reads as one rate says nothing the median does not.
    if let Some(i) = &o.interval
        && rate_text(i.low) != rate_text(i.high)
    {
        s.push_str(&format!(" ({}–{})", rate_text(i.low), rate_text(i.high)));
    }
    let had = o.per_round.iter().flatten().count();
    if had < o.per_round.len() {
        s.push_str(&format!(", {had} of {} rounds", o.per_round.len()));
    }
    s
}

/// The knee, or that no rate offered reached it.
pub fn knee_text(c: &RateCurveRecord) -> String {
    match &c.knee_rate {
        Some(o) => over_rounds(o, ""),
        None => match c.offered_rates().last() {
            Some(&top) => format!("none ≤ {}", rate_text(top)),
            None => "-".into(),
        },
    }
}

/// Whether the saturation rate is only a bound: every round's highest
/// offered rate kept up, so the channel was never saturated.
pub fn saturation_is_bound(c: &RateCurveRecord) -> bool {
    let kept_up = (1..=c.rounds).all(|round| {
        c.points
            .iter()
            .filter(|p| p.round == round)
            .max_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate))
            .is_some_and(|p| p.achieved_rate >= SATURATED_BELOW * p.offered_rate)
    });
    kept_up || c.unsaturated
}

/// The saturation rate: a bound (≥) where the channel was never saturated
/// ([`saturation_is_bound`]); "none" where no point kept up, not even the
/// lowest.
pub fn saturation_text(c: &RateCurveRecord) -> String {
    let Some(o) = &c.saturation_rate else {
        return match c.offered_rates().first() {
            Some(&low) => format!("none (below {})", rate_text(low)),
            None => "-".into(),
        };
    };
    over_rounds(o, if saturation_is_bound(c) { "≥ " } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::rate::tests::curve;

    #[test]
    fn a_level_is_the_median_over_rounds_and_the_counts_summed() {
        let mut c = curve();
        c.points[0].late = 2;
        c.points[2].late = 5;
        c.points[2].behind_max_ns = 90_000;
        let l = levels(&c);
        assert_eq!(
            l.iter().map(|l| l.offered_rate).collect::<Vec<_>>(),
            [1000.0, 10_000.0]
        );
        // 1k: rounds of p50 5.0 and 5.1 µs.
        assert_eq!(l[0].rounds, 2);
        assert_eq!(l[0].latency_ns.unwrap().p50, 5050.0);
        assert_eq!(l[0].latency_ns.unwrap().p99, 10_100.0);
        assert_eq!(
            (l[0].late, l[0].behind_max_ns, l[0].sent),
            (7, 90_000, 2000)
        );
        assert!(l[0].kept_up());
        // 10k: one round only.
        assert_eq!(l[1].rounds, 1);
        assert_eq!(l[1].latency_ns.unwrap().p50, 6000.0);
    }

    #[test]
    fn a_rate_at_which_nothing_arrived_has_no_latency() {
        let mut c = curve();
        // Round 2's 1k point lost every message: its zeros are no latency.
        let p = &mut c.points[2];
        (p.received, p.lost, p.achieved_rate) = (0, 1000, 0.0);
        p.latency_ns = QuantilesRecord {
            p50: 0.0,
            p90: 0.0,
            p99: 0.0,
            p999: 0.0,
            max: 0.0,
            mean: 0.0,
        };
        let l = &levels(&c)[0];
        assert_eq!(l.latency_ns.unwrap().p50, 5000.0, "round 1's alone");
        assert_eq!(l.rounds_without_arrival, 1);
        c.points[0].received = 0;
        let l = &levels(&c)[0];
        assert_eq!(l.latency_ns, None);
        assert_eq!(l.rounds_without_arrival, 2);
    }

    #[test]
    fn a_knee_and_a_saturation_read_with_their_range() {
        let mut c = curve();
        assert_eq!(knee_text(&c), "none ≤ 10k");
        // Every round's highest rate kept up: a bound, from one round of two.
        assert_eq!(saturation_text(&c), "≥ 9.9k, 1 of 2 rounds");
        c.knee_rate = Some(OverRoundsRecord {
            median: 22_627.0,
            per_round: vec![Some(16_000.0), Some(32_000.0)],
            interval: Some(crate::record::facts::IntervalRecord {
                low: 16_000.0,
                high: 32_000.0,
            }),
        });
        assert_eq!(knee_text(&c), "22.63k (16k–32k)");
        // The highest rate fell short: the saturation is a level, not a bound.
        c.unsaturated = false;
        c.points[1].achieved_rate = 5000.0;
        c.saturation_rate.as_mut().unwrap().median = 1500.0;
        assert!(!saturation_is_bound(&c));
        assert_eq!(saturation_text(&c), "1.5k, 1 of 2 rounds");
        c.saturation_rate = None;
        assert_eq!(saturation_text(&c), "none (below 1k)");
    }
}
