//! A rate figure's curve: the sweep of offered rates, round by round, its
//! knee and its saturation rate, and the figure's common measurement.

use super::{OverRounds, RateFacts, RatePlan, RatePoint, Rates, SWEEP_FIRST, SWEEP_LAST};
use crate::engine::measure::Measurement;
use crate::stats::compare::Interval;
use crate::stats::{LatencyHistogram, Summary, median};

/// A point is saturated when it achieved less than this share of its offered rate.
pub const SATURATED_BELOW: f64 = 0.95;
/// The knee: the p99 from the intended send at this multiple of the lowest rate's.
pub const KNEE_FACTOR: f64 = 2.0;

/// The p99 a curve is judged against: the median p99 from the intended
/// send of its points at a quarter of its saturation rate or below (the
/// low-rate region, where the channel is far from full), or the lowest
/// rate's where no point lies there. One point alone is no reference: at a
/// low rate each message wakes a sleeping receiver, and one stall of a
/// shared machine moves its p99 several times over.
pub fn low_rate_p99(points: &[RatePoint]) -> Option<f64> {
    let first = points.first()?;
    let quarter = saturation(points).map_or(0.0, |s| s / 4.0);
    let low: Vec<f64> = points
        .iter()
        .filter(|p| p.offered_rate <= quarter)
        .map(|p| p.latency_ns.p99)
        .collect();
    Some(if low.is_empty() {
        first.latency_ns.p99
    } else {
        median(&low)
    })
}

/// The knee of one round's points (in increasing offered rate): where the
/// p99 from the intended send crosses [`KNEE_FACTOR`] times the low-rate
/// p99 ([`low_rate_p99`]) for good (at that rate and every higher one), its
/// rate interpolated between the two measured rates around the crossing
/// (linearly in log rate and log p99, so a knee is not held to the sweep's
/// grid); `None` if the last rate is below it. A rate whose p99 jumped and
/// fell back (one stall of a shared machine) is no knee: the curve has not
/// turned up for good.
pub fn knee(points: &[RatePoint]) -> Option<f64> {
    let base = low_rate_p99(points)?.max(1.0);
    let target = KNEE_FACTOR * base;
    let above = |p: &RatePoint| p.latency_ns.p99 >= target;
    let first_of_tail = points.iter().rposition(|p| !above(p)).map_or(0, |i| i + 1);
    let hi = points.get(first_of_tail.max(1))?;
    let lo = &points[first_of_tail.max(1) - 1];
    Some(log_crossing(
        (lo.offered_rate, lo.latency_ns.p99),
        (hi.offered_rate, hi.latency_ns.p99),
        target,
    ))
}

/// The rate between `lo` and `hi` (rate, p99) at which the line through
/// them in log rate and log p99 reaches `target`; `hi`'s rate where `lo`
/// is not below it.
fn log_crossing(lo: (f64, f64), hi: (f64, f64), target: f64) -> f64 {
    let (r0, p0) = (lo.0.max(1.0).ln(), lo.1.max(1.0).ln());
    let (r1, p1) = (hi.0.max(1.0).ln(), hi.1.max(1.0).ln());
    let t = target.max(1.0).ln();
    if !(p0 < t && t <= p1) || r1 <= r0 {
        return hi.0;
    }
    (r0 + (t - p0) / (p1 - p0) * (r1 - r0)).exp().round()
}

/// The rates a sweep adds between `lo` and `hi` (two neighbours of its
/// grid): [`REFINE_STEPS`] − 1 rates splitting the step evenly in log rate.
fn refinement(lo: f64, hi: f64) -> impl Iterator<Item = f64> {
    let step = (hi / lo).powf(1.0 / REFINE_STEPS as f64);
    (1..REFINE_STEPS).map(move |k| (lo * step.powi(k as i32)).round())
}

/// Parts a sweep splits its grid's step around the knee and around the
/// saturation rate into (×2^¼ rates between a ×2 step).
pub const REFINE_STEPS: usize = 4;

/// Whether `p` kept up with its offered rate.
fn kept_up(p: &RatePoint) -> bool {
    p.achieved_rate >= SATURATED_BELOW * p.offered_rate
}

/// The saturation rate of one round's points: the highest achieved rate of
/// a point that kept up with its offer (within 5%); `None` if none did.
pub fn saturation(points: &[RatePoint]) -> Option<f64> {
    points
        .iter()
        .filter(|p| kept_up(p))
        .map(|p| p.achieved_rate)
        .max_by(f64::total_cmp)
}

/// Each round's value, their median and their range.
fn over_rounds(per_round: Vec<Option<f64>>) -> Option<OverRounds> {
    let values: Vec<f64> = per_round.iter().flatten().copied().collect();
    if values.is_empty() {
        return None;
    }
    let interval = (values.len() >= 2).then(|| Interval {
        low: values.iter().copied().fold(f64::INFINITY, f64::min),
        high: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    });
    Some(OverRounds {
        median: median(&values),
        per_round,
        interval,
    })
}

/// A point measured by the caller: the point and its latencies from the
/// intended send.
pub type Measured = (RatePoint, Vec<f64>);

/// One round of `plan`: its points in increasing offered rate, the
/// latencies of its lowest rate, and whether a sweep ended unsaturated.
fn round(
    plan: &RatePlan,
    r: usize,
    point: &mut impl FnMut(f64, u64, usize) -> Result<Measured, String>,
) -> Result<(Vec<RatePoint>, Vec<f64>, bool), String> {
    let mut measure = |rate: f64| {
        point(rate, plan.messages(rate), r)
            .map_err(|e| format!("at {} msg/s (round {r}): {e}", rate_text(rate)))
    };
    let mut points: Vec<RatePoint> = Vec::new();
    let mut lowest: Vec<f64> = Vec::new();
    let mut unsaturated = false;
    match &plan.rates {
        Rates::List(rates) => {
            for &rate in rates {
                let (p, lat) = measure(rate)?;
                if points.is_empty() {
                    lowest = lat;
                }
                points.push(p);
            }
        }
        Rates::Sweep => {
            let mut rate = SWEEP_FIRST;
            loop {
                let (p, lat) = measure(rate)?;
                if points.is_empty() {
                    lowest = lat;
                }
                let saturated = !kept_up(&p);
                points.push(p);
                if saturated {
                    break;
                }
                if rate * 2.0 > SWEEP_LAST {
                    unsaturated = true;
                    break;
                }
                rate *= 2.0;
            }
            // Finer rates where the curve turns: inside the step of the
            // grid that holds the knee, and the one past the last rate kept
            // up with (the saturation rate's step), each once.
            let step_to =
                |j: usize| (j > 0).then(|| (points[j - 1].offered_rate, points[j].offered_rate));
            let at_knee = knee(&points)
                .and_then(|k| points.iter().position(|p| p.offered_rate >= k))
                .and_then(step_to);
            let at_saturation = points.iter().position(|p| !kept_up(p)).and_then(step_to);
            let mut steps: Vec<(f64, f64)> = at_knee.into_iter().collect();
            if let Some(s) = at_saturation.filter(|s| !steps.contains(s)) {
                steps.push(s);
            }
            for (lo, hi) in steps {
                for rate in refinement(lo, hi) {
                    let (p, _) = measure(rate)?;
                    let at = points.partition_point(|q| q.offered_rate < rate);
                    points.insert(at, p);
                }
            }
        }
    }
    Ok((points, lowest, unsaturated))
}

/// Runs `plan`'s rounds, each point by `point(rate, messages, round)` (a
/// fresh channel each), and builds the figure: the common measurement from
/// the lowest rate's latencies from the intended send (every round's: one
/// population for its centre and its percentiles), and the curve with each
/// round's knee and saturation rate. A point that fails fails the figure,
/// naming its rate.
pub fn run_curve(
    plan: &RatePlan,
    margin_ns: u64,
    lossy: bool,
    mut point: impl FnMut(f64, u64, usize) -> Result<Measured, String>,
) -> Result<(Measurement, RateFacts), String> {
    let rounds = plan.rounds.max(1);
    let mut points = Vec::new();
    let mut lowest = Vec::new();
    // The clock reads the headline's latencies had subtracted (each
    // round's lowest rate's), so the figure reports what was subtracted.
    let mut clocks = Vec::new();
    let (mut knees, mut saturations) = (Vec::new(), Vec::new());
    let mut unsaturated = false;
    let (mut spun, mut slept) = (false, false);
    for r in 1..=rounds {
        let (ps, low, open) = round(plan, r, &mut point)?;
        knees.push(knee(&ps));
        saturations.push(saturation(&ps));
        unsaturated |= open;
        for p in &ps {
            if 1e9 / p.offered_rate > margin_ns as f64 {
                slept = true;
            } else {
                spun = true;
            }
        }
        lowest.extend(low);
        clocks.extend(ps.first().map(|p| p.clock_overhead_ns));
        points.extend(ps);
    }
    if clocks.is_empty() {
        return Err("no rate was offered".into());
    }
    let measurement = headline(
        &lowest,
        points.iter().map(|p| p.verified).sum(),
        median(&clocks),
    )?;
    Ok((
        measurement,
        RateFacts {
            points,
            rounds,
            waiting: match (spun, slept) {
                (true, false) => "spin",
                (false, _) => "sleep, then spin",
                (true, true) => "spin and sleep (by rate)",
            },
            wake_margin_ns: margin_ns,
            knee_rate: over_rounds(knees),
            saturation_rate: over_rounds(saturations),
            unsaturated,
            lossy,
        },
    ))
}

/// Adds `next`, a figure's round measured in a later pass of the run, to
/// `into`, the rounds of the earlier passes, as round `round`: its points
/// renumbered, each round's knee and saturation rate computed again from
/// the points of that round, the wake-up margin the largest either
/// measured. A run measures its rate figures once per pass, so that a
/// curve's rounds are spread over the run as other figures' passes are.
pub fn merge_round(into: &mut RateFacts, next: RateFacts, round: usize) {
    into.points.extend(next.points.into_iter().map(|mut p| {
        p.round = round;
        p
    }));
    into.rounds = into.rounds.max(round);
    into.unsaturated |= next.unsaturated;
    into.lossy |= next.lossy;
    into.wake_margin_ns = into.wake_margin_ns.max(next.wake_margin_ns);
    if into.waiting != next.waiting {
        into.waiting = "spin and sleep (by rate)";
    }
    let rounds: Vec<Vec<RatePoint>> = (1..=into.rounds)
        .map(|r| {
            into.points
                .iter()
                .filter(|p| p.round == r)
                .cloned()
                .collect()
        })
        .collect();
    into.knee_rate = over_rounds(rounds.iter().map(|ps| knee(ps)).collect());
    into.saturation_rate = over_rounds(rounds.iter().map(|ps| saturation(ps)).collect());
}

/// The latency percentiles of a rate figure's pooled headline latencies
/// (its lowest rate's, every round's): what [`headline`] computes for one
/// pass, again over the passes merged.
pub fn pooled_latency(latencies: &[f64]) -> Option<crate::stats::Percentiles> {
    let mut hist = LatencyHistogram::new();
    for &l in latencies {
        hist.record_ns(l);
    }
    hist.percentiles()
}

/// The common measurement of a rate figure: the lowest rate's latencies
/// from the intended send, every round's, and the clock read they had
/// subtracted.
fn headline(latencies: &[f64], verified: u64, clock_ns: f64) -> Result<Measurement, String> {
    let mut hist = LatencyHistogram::new();
    for &l in latencies {
        hist.record_ns(l);
    }
    let latency = hist
        .percentiles()
        .ok_or("no message of the lowest rate arrived")?;
    let summary = Summary::of(latencies).ok_or("no message of the lowest rate arrived")?;
    Ok(Measurement {
        iterations: latencies.len() as u64,
        samples_ns: latencies.to_vec(),
        summary,
        // The message count is fixed by the plan, not by a precision target.
        precision: None,
        loop_overhead_ns: 0.0,
        clock_overhead_ns: clock_ns,
        latency,
        verified_round_trips: verified,
        histogram: None,
    })
}

/// A rate as the page writes it: `250k`, `1.5M`, `800`.
pub fn rate_text(rate: f64) -> String {
    let trim = |v: f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if rate >= 1e6 {
        format!("{}M", trim(rate / 1e6))
    } else if rate >= 1e3 {
        format!("{}k", trim(rate / 1e3))
    } else {
        trim(rate)
    }
}
