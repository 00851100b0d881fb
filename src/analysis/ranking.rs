//! Which figure of a column is the best one, and only where that is real:
//! the best figure is ranked above the rest only if it beats every other
//! beyond its own uncertainty — paired within passes where both figures
//! have pass medians (the interval of their ratio pass by pass excludes 1),
//! else by 95% intervals that do not overlap. Otherwise the best and the
//! figures it does not beat are tied; where a figure has neither passes nor
//! an interval, its column ranks nothing. Pure: the page renders the outcome.

use crate::record::FigureRecord;
use crate::stats::interval::{median_interval, t_interval};

/// The confidence both tests are at.
const LEVEL: f64 = 0.95;

/// Which figure of a column is the best one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// The smallest (a time).
    Lower,
    /// The largest (a throughput).
    Higher,
}

/// What a figure's place in a column rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// The figure as shown (a time, or a throughput).
    pub value: f64,
    /// Its 95% interval as factors of its time (low ÷ centre, high ÷
    /// centre), if it has one.
    pub relative: Option<(f64, f64)>,
    /// Each pass's median time, in pass order (empty for one pass).
    pub passes: Vec<f64>,
}

impl Evidence {
    /// The evidence of figure `r`, shown as `value`: its precision
    /// interval taken relative to the level it is centred on (the passes'
    /// mean, else the samples' median) — for a mode without one, the
    /// order-statistic 95% interval of its samples' median, as precision's
    /// "batches" basis has it — and its pass medians (the drift-corrected
    /// ones only where the plain ones are missing).
    pub fn of(r: &FigureRecord, value: f64) -> Evidence {
        let passes = super::level::pass_medians(r).to_vec();
        let relative = r.precision.as_ref().and_then(|p| {
            let (low, high) = (p.interval_ns.low, p.interval_ns.high);
            let centre = if p.basis == "passes" && !passes.is_empty() {
                passes.iter().sum::<f64>() / passes.len() as f64
            } else if let Some(l) = &r.latency_ns {
                l.median
            } else {
                (low + high) / 2.0
            };
            factors(low, centre, high)
        });
        let relative = relative.or_else(|| {
            let samples = r.samples_ns.as_deref()?;
            let i = median_interval(samples, LEVEL)?;
            factors(i.low, crate::stats::median(samples), i.high)
        });
        Evidence {
            value,
            relative,
            passes,
        }
    }

    /// The figure as a cost (lower is better) and its interval in that
    /// scale: a throughput's cost is its time, ∝ 1 ÷ throughput.
    fn cost(&self, better: Better) -> f64 {
        match better {
            Better::Lower => self.value,
            Better::Higher => 1.0 / self.value,
        }
    }
}

/// An interval `low`..`high` around `centre` as factors of the centre.
fn factors(low: f64, centre: f64, high: f64) -> Option<(f64, f64)> {
    (centre > 0.0 && low.is_finite() && high.is_finite() && low <= high)
        .then(|| (low / centre, high / centre))
}

/// A figure's mark in its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// The best, beyond its uncertainty against every other figure.
    Best,
    /// Among the best, but not told apart from it.
    Tied,
    /// Neither.
    Unmarked,
}

/// Whether `a` costs less than `b` beyond their uncertainty: paired over
/// passes where both have the same number (≥ 2) of pass medians — the
/// Student t interval of the mean log ratio b ÷ a pass by pass lies above
/// 0 — else their 95% intervals are apart (`a`'s high below `b`'s low).
/// `None` where neither can be asked: nothing is known of their spread.
pub fn beats(a: &Evidence, b: &Evidence, better: Better) -> Option<bool> {
    let (ca, cb) = (a.cost(better), b.cost(better));
    if !(ca.is_finite() && cb.is_finite() && ca > 0.0 && cb > 0.0) {
        return None;
    }
    let n = a.passes.len();
    if n >= 2
        && b.passes.len() == n
        && a.passes
            .iter()
            .chain(&b.passes)
            .all(|v| *v > 0.0 && v.is_finite())
    {
        let logs: Vec<f64> = a
            .passes
            .iter()
            .zip(&b.passes)
            .map(|(x, y)| (y / x).ln())
            .collect();
        return t_interval(&logs, LEVEL).map(|t| t.interval.low > 0.0);
    }
    match (a.relative, b.relative) {
        (Some((_, a_high)), Some((b_low, _))) => Some(ca * a_high < cb * b_low),
        _ => None,
    }
}

/// The mark of each figure of a column (`None`: no number): the best one
/// `Best` if it beats every other, else it and those it does not beat
/// `Tied`. A column of one figure ranks nothing, nor one where a figure
/// cannot be weighed against the best (neither passes nor an interval).
pub fn rank(column: &[Option<Evidence>], better: Better) -> Vec<Rank> {
    let mut marks = vec![Rank::Unmarked; column.len()];
    let figures: Vec<(usize, &Evidence)> = column
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|e| (i, e)))
        .filter(|(_, e)| e.cost(better).is_finite() && e.cost(better) > 0.0)
        .collect();
    if figures.len() < 2 {
        return marks;
    }
    let (best, top) = *figures
        .iter()
        .min_by(|(_, a), (_, b)| a.cost(better).total_cmp(&b.cost(better)))
        .expect("two figures");
    let mut tied = Vec::new();
    for (i, e) in figures.iter().filter(|(i, _)| *i != best) {
        match beats(top, e, better) {
            Some(true) => {}
            Some(false) => tied.push(*i),
            None => return marks,
        }
    }
    if tied.is_empty() {
        marks[best] = Rank::Best;
    } else {
        marks[best] = Rank::Tied;
        for i in tied {
            marks[i] = Rank::Tied;
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure of `value` with an interval ± `half` (a fraction) and no passes.
    fn fig(value: f64, half: f64) -> Option<Evidence> {
        Some(Evidence {
            value,
            relative: Some((1.0 - half, 1.0 + half)),
            passes: vec![],
        })
    }

    fn passes(value: f64, passes: &[f64]) -> Option<Evidence> {
        Some(Evidence {
            value,
            relative: Some((0.85, 1.15)),
            passes: passes.to_vec(),
        })
    }

    #[test]
    fn a_clear_winner_is_ranked() {
        let marks = rank(&[fig(6.0, 0.02), fig(8.0, 0.02), None], Better::Lower);
        assert_eq!(marks, [Rank::Best, Rank::Unmarked, Rank::Unmarked]);
        // The highest, for a throughput.
        let marks = rank(&[fig(6.0, 0.02), fig(8.0, 0.02)], Better::Higher);
        assert_eq!(marks, [Rank::Unmarked, Rank::Best]);
    }

    #[test]
    fn figures_within_each_others_interval_are_tied() {
        // 6.39 against 6.41 (0.3% apart), each ±8%: not told apart.
        let marks = rank(
            &[fig(6.41, 0.08), fig(6.39, 0.08), fig(9.0, 0.08)],
            Better::Lower,
        );
        assert_eq!(marks, [Rank::Tied, Rank::Tied, Rank::Unmarked]);
        // The same two figures known to ±0.1% are apart.
        let marks = rank(&[fig(6.41, 0.001), fig(6.39, 0.001)], Better::Lower);
        assert_eq!(marks, [Rank::Unmarked, Rank::Best]);
    }

    #[test]
    fn paired_passes_that_keep_their_order_are_ranked() {
        // The machine's level moves by ±10% from pass to pass, carrying both
        // figures; one stays 2% under the other in every pass, so their
        // ±15% intervals overlap but the pairs tell them apart.
        let level = [100.0, 110.0, 92.0, 105.0, 97.0];
        let a: Vec<f64> = level.iter().map(|l| l * 1.000).collect();
        let b: Vec<f64> = level
            .iter()
            .zip([1.021, 1.019, 1.020, 1.022, 1.018])
            .map(|(l, f)| l * f)
            .collect();
        let marks = rank(&[passes(100.8, &a), passes(102.8, &b)], Better::Lower);
        assert_eq!(marks, [Rank::Best, Rank::Unmarked]);
        // Pairs that swap their order are tied, however far apart their medians.
        let c: Vec<f64> = level
            .iter()
            .zip([1.05, 0.97, 1.06, 0.98, 1.04])
            .map(|(l, f)| l * f)
            .collect();
        let marks = rank(&[passes(100.8, &a), passes(102.8, &c)], Better::Lower);
        assert_eq!(marks, [Rank::Tied, Rank::Tied]);
    }

    #[test]
    fn a_figure_alone_or_without_evidence_is_not_ranked() {
        assert_eq!(
            rank(&[fig(6.0, 0.02), None], Better::Lower)[0],
            Rank::Unmarked
        );
        let bare = |v| {
            Some(Evidence {
                value: v,
                relative: None,
                passes: vec![],
            })
        };
        assert_eq!(
            rank(&[bare(1.0), bare(9.0), fig(5.0, 0.01)], Better::Lower),
            [Rank::Unmarked; 3]
        );
    }
}
