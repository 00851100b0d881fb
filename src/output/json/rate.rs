//! Mode rate's record (`rate_curve`) built from the engine's
//! [`RateFacts`], field for field, in the order the schema lists them.

use crate::engine::models::rate::{OverRounds, Quantiles, RateFacts, RatePoint};
use crate::record::facts::IntervalRecord;
use crate::record::rate::{OverRoundsRecord, QuantilesRecord, RateCurveRecord, RatePointRecord};

impl From<&RateFacts> for RateCurveRecord {
    fn from(f: &RateFacts) -> Self {
        RateCurveRecord {
            rounds: f.rounds,
            waiting: f.waiting.to_string(),
            wake_margin_ns: f.wake_margin_ns,
            lossy: f.lossy,
            unsaturated: f.unsaturated,
            knee_rate: f.knee_rate.as_ref().map(Into::into),
            saturation_rate: f.saturation_rate.as_ref().map(Into::into),
            points: f.points.iter().map(Into::into).collect(),
        }
    }
}

impl From<&OverRounds> for OverRoundsRecord {
    fn from(o: &OverRounds) -> Self {
        OverRoundsRecord {
            median: o.median,
            per_round: o.per_round.clone(),
            interval: o.interval.map(|i| IntervalRecord {
                low: i.low,
                high: i.high,
            }),
        }
    }
}

impl From<&RatePoint> for RatePointRecord {
    fn from(p: &RatePoint) -> Self {
        RatePointRecord {
            round: p.round,
            offered_rate: p.offered_rate,
            achieved_rate: p.achieved_rate,
            sent: p.sent,
            received: p.received,
            lost: p.lost,
            late: p.late,
            behind_max_ns: p.behind_max_ns,
            latency_ns: p.latency_ns.into(),
            service_ns: p.service_ns.into(),
            sender_cpu_ns: p.sender_cpu_ns,
            receiver_cpu_ns: p.receiver_cpu_ns,
            verified: p.verified,
        }
    }
}

impl From<Quantiles> for QuantilesRecord {
    fn from(q: Quantiles) -> Self {
        QuantilesRecord {
            p50: q.p50,
            p90: q.p90,
            p99: q.p99,
            p999: q.p999,
            max: q.max,
            mean: q.mean,
        }
    }
}
