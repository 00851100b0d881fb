//! A mechanism's latency at the rate a need states, read from its measured
//! rate curves (`run --mode rate`): the p99 from the intended send at the
//! offered rates around it, interpolated in log rate, never extrapolated
//! past the highest rate measured.

use super::usable;
use crate::record::advise::{AtRate, Sourced};
use crate::record::rate::RateCurveRecord;
use crate::record::units::format_size;
use crate::record::{Mode, RunRecord};
use crate::stats::median;

/// A point is kept up with when it achieved this share of its offer.
const KEPT_UP: f64 = 0.95;

/// One offered rate of a curve, over its rounds: the medians of their p50
/// and p99 from the intended send, and whether every round kept up.
struct Level {
    rate: f64,
    p50: f64,
    p99: f64,
    kept_up: bool,
}

fn levels(c: &RateCurveRecord) -> Vec<Level> {
    let mut rates: Vec<f64> = c.points.iter().map(|p| p.offered_rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    rates
        .into_iter()
        .map(|rate| {
            let at: Vec<_> = c.points.iter().filter(|p| p.offered_rate == rate).collect();
            let of = |f: &dyn Fn(&crate::record::rate::RatePointRecord) -> f64| {
                median(&at.iter().map(|p| f(p)).collect::<Vec<f64>>())
            };
            Level {
                rate,
                p50: of(&|p| p.latency_ns.p50),
                p99: of(&|p| p.latency_ns.p99),
                kept_up: at
                    .iter()
                    .all(|p| p.achieved_rate >= KEPT_UP * p.offered_rate),
            }
        })
        .collect()
}

/// `a` to `b` at `x` between `xa` and `xb`, in log rate.
fn between(xa: f64, a: f64, xb: f64, b: f64, x: f64) -> f64 {
    let t = (x.ln() - xa.ln()) / (xb.ln() - xa.ln());
    a + t * (b - a)
}

/// The curve of `name` at `size` with the best evidence among `runs` (the
/// most rounds; of those, the latest), with its run's id.
fn best_curve<'a>(
    runs: &'a [(i64, RunRecord)],
    name: &str,
    size: usize,
    cpus: Option<&[usize]>,
) -> Option<(i64, &'a RateCurveRecord)> {
    let mut best: Option<(i64, &RateCurveRecord)> = None;
    for (id, run) in runs {
        for f in &run.results {
            if f.benchmark != name || f.size_bytes != size || !usable(f, Mode::Rate, cpus) {
                continue;
            }
            let Some(c) = f.rate_curve.as_ref().filter(|c| !c.points.is_empty()) else {
                continue;
            };
            // Runs come oldest first: a later one with as many rounds wins.
            if best.is_none_or(|(_, b)| c.rounds >= b.rounds) {
                best = Some((*id, c));
            }
        }
    }
    best
}

/// The latency `name` gives at `rate` messages a second at `size`, from its
/// best rate curve; `None` when no run has one. Beyond the highest rate the
/// curve kept up with, it predicts no latency and says so.
pub fn at_rate(
    runs: &[(i64, RunRecord)],
    name: &str,
    size: usize,
    rate: f64,
    cpus: Option<&[usize]>,
) -> Option<AtRate> {
    let (run_id, c) = best_curve(runs, name, size, cpus)?;
    let levels = levels(c);
    let figure = format!("{name} rate {}", format_size(size));
    let rounds = format!("{} round(s), run {run_id}", c.rounds);
    let highest_kept = levels
        .iter()
        .filter(|l| l.kept_up)
        .map(|l| l.rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let sourced = |value: f64, from: String| Sourced {
        value,
        run_id,
        from,
    };
    let (p50, p99, note) = match highest_kept {
        Some(top) if rate <= top => {
            let below = levels.iter().rev().find(|l| l.rate <= rate);
            let above = levels.iter().find(|l| l.rate >= rate);
            match (below, above) {
                (Some(b), Some(a)) if a.rate > b.rate => {
                    let from = format!(
                        "{figure}: between its {} and {} msg/s points ({rounds})",
                        rate_words(b.rate),
                        rate_words(a.rate)
                    );
                    (
                        Some(sourced(
                            between(b.rate, b.p50, a.rate, a.p50, rate),
                            from.clone(),
                        )),
                        Some(sourced(between(b.rate, b.p99, a.rate, a.p99, rate), from)),
                        None,
                    )
                }
                (Some(l), _) | (None, Some(l)) => {
                    let from = if l.rate == rate {
                        format!(
                            "{figure}: its {} msg/s point ({rounds})",
                            rate_words(l.rate)
                        )
                    } else {
                        format!(
                            "{figure}: its lowest rate, {} msg/s, above the {} asked ({rounds})",
                            rate_words(l.rate),
                            rate_words(rate)
                        )
                    };
                    (
                        Some(sourced(l.p50, from.clone())),
                        Some(sourced(l.p99, from)),
                        None,
                    )
                }
                (None, None) => (None, None, None),
            }
        }
        Some(top) => (
            None,
            None,
            Some(format!(
                "{} msg/s is beyond the highest rate {figure} kept up with ({} msg/s, {rounds}): \
                 no latency is predicted there",
                rate_words(rate),
                rate_words(top)
            )),
        ),
        None => (
            None,
            None,
            Some(format!(
                "{figure} kept up with none of its rates ({rounds})"
            )),
        ),
    };
    Some(AtRate {
        rate,
        p50,
        p99,
        highest_kept_up: highest_kept.map(|v| {
            sourced(
                v,
                format!("the highest rate {figure} kept up with ({rounds})"),
            )
        }),
        knee: c.knee_rate.as_ref().map(|k| {
            sourced(
                k.median,
                format!("the knee of {figure}, median of its rounds ({rounds})"),
            )
        }),
        note,
    })
}

/// A rate in words: `100k`, `1.5M`.
fn rate_words(rate: f64) -> String {
    crate::engine::models::rate::rate_text(rate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::fixture;

    /// tests/reports/rate.json: pipe 64 B measured at 2k (p99 727.6 µs) and
    /// 20k msg/s (p99 41.1 µs), one round, both kept up with.
    fn history() -> Vec<(i64, RunRecord)> {
        vec![(7, fixture("rate"))]
    }

    #[test]
    fn between_two_rates_the_p99_is_read_in_log_rate_and_named() {
        let h = history();
        // √(2k · 20k): halfway in log rate.
        let r = at_rate(&h, "pipe", 64, (2000.0f64 * 20_000.0).sqrt(), None).unwrap();
        let p99 = r.p99.unwrap();
        assert!(
            (p99.value - (727_551.0 + 41_119.0) / 2.0).abs() < 1.0,
            "{p99:?}"
        );
        assert_eq!(p99.run_id, 7);
        assert!(
            p99.from.contains("between its 2k and 20k msg/s points"),
            "{}",
            p99.from
        );
        assert_eq!(r.highest_kept_up.unwrap().value, 20_000.0);
        assert_eq!(r.note, None);
        // At a measured rate, that point; below the lowest, the lowest, said.
        let at = at_rate(&h, "pipe", 64, 20_000.0, None).unwrap();
        assert_eq!(at.p99.unwrap().value, 41_119.0);
        let below = at_rate(&h, "pipe", 64, 500.0, None).unwrap().p99.unwrap();
        assert_eq!(below.value, 727_551.0);
        assert!(
            below.from.contains("its lowest rate, 2k msg/s"),
            "{}",
            below.from
        );
    }

    #[test]
    fn past_the_highest_rate_kept_up_with_nothing_is_predicted() {
        let r = at_rate(&history(), "pipe", 64, 100_000.0, None).unwrap();
        assert_eq!((r.p50, r.p99), (None, None));
        let why = r.note.unwrap();
        assert!(why.contains("beyond the highest rate"), "{why}");
        assert!(why.contains("20k"), "{why}");
    }

    #[test]
    fn no_curve_at_the_size_or_for_the_mechanism_is_none() {
        let h = history();
        assert!(at_rate(&h, "pipe", 128, 1000.0, None).is_none());
        assert!(at_rate(&h, "vmsplice", 64, 1000.0, None).is_none());
    }
}
