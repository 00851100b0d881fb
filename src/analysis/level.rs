//! A figure's uncertainty said as two: the machine's level during the run
//! and the figure's own.
//!
//! Every figure of a pass is measured under the machine's speed of that
//! pass (another tenant, a frequency step), so part of the spread of a
//! figure's pass medians is common to all figures. That part is the run's
//! *level*: each pass's factor is the median over the figures with a
//! median in every pass of (the figure's pass median ÷ its geometric mean
//! over passes), and its 95% interval is the Student t interval of the
//! factors' logarithms ([`t_interval`]) — one number per run, the machine's
//! share of every figure's interval. A figure's *own* interval is the same
//! Student t interval over its pass medians each divided by its pass's
//! factor.
//!
//! Separating needs figures enough that one figure's own variation does not
//! pass for the machine's ([`MIN_FIGURES`]) and two passes at least; with
//! fewer, the level is recorded as not separable and no own interval is
//! given rather than one that would be too narrow.

use crate::record::facts::IntervalRecord;
use crate::record::run::LevelRecord;
use crate::record::{FigureRecord, RunRecord, Status};
use crate::stats::interval::t_interval;
use crate::stats::median;

/// The confidence of both intervals (that of every figure's interval).
const LEVEL: f64 = 0.95;

/// Fewest figures the level is read from: with two, each is half of the
/// level, and a figure's own slow pass would be taken for the machine's.
pub const MIN_FIGURES: usize = 3;

/// Fewest passes: a level needs two to vary over.
pub const MIN_PASSES: usize = 2;

/// The run's level and each figure's own interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Separation {
    /// The run's level.
    pub level: LevelRecord,
    /// For each figure of the run (in order), its own interval as factors of
    /// its centre, where it has a median in every pass.
    pub own: Vec<Option<IntervalRecord>>,
}

/// A figure's median in each pass: the plain ones, else the drift-corrected
/// ones (a sweep figure may have only those), as the ranking reads them.
pub fn pass_medians(r: &FigureRecord) -> &[f64] {
    match &r.passes {
        Some(p) if p.medians_ns.is_empty() => &p.drift_corrected_medians_ns,
        Some(p) => &p.medians_ns,
        None => &[],
    }
}

/// Each pass's factor: the median over figures of the log of (the
/// figure's pass median ÷ the geometric mean of its pass medians), taken
/// back to a factor. The median, so that one figure's slow pass is not
/// read as the machine's; the geometric mean as a figure's typical value,
/// so that a factor common to every figure in one pass moves that pass's
/// level by exactly that factor and every figure's own values by none.
fn pass_factors(series: &[&[f64]], passes: usize) -> Vec<f64> {
    let logs: Vec<Vec<f64>> = series
        .iter()
        .map(|m| {
            let l: Vec<f64> = m.iter().map(|v| v.ln()).collect();
            let mean = l.iter().sum::<f64>() / l.len() as f64;
            l.iter().map(|v| v - mean).collect()
        })
        .collect();
    (0..passes)
        .map(|k| median(&logs.iter().map(|l| l[k]).collect::<Vec<_>>()).exp())
        .collect()
}

/// The 95% interval of the mean of `units` as factors of that mean.
fn relative(units: &[f64]) -> Option<IntervalRecord> {
    let t = t_interval(units, LEVEL)?;
    (t.centre > 0.0).then(|| IntervalRecord {
        low: t.interval.low / t.centre,
        high: t.interval.high / t.centre,
    })
}

/// The level of a run of `passes` passes over `results`, and each figure's
/// own interval; `None` for a run of one pass.
pub fn separate(results: &[FigureRecord], passes: usize) -> Option<Separation> {
    if passes < MIN_PASSES {
        return None;
    }
    let members: Vec<usize> = (0..results.len())
        .filter(|&i| {
            let m = pass_medians(&results[i]);
            results[i].status == Status::Ok
                && m.len() == passes
                && m.iter().all(|v| *v > 0.0 && v.is_finite())
        })
        .collect();
    let not_separable = || Separation {
        level: LevelRecord {
            figures: members.len(),
            passes,
            factors: Vec::new(),
            interval: None,
        },
        own: vec![None; results.len()],
    };
    if members.len() < MIN_FIGURES {
        return Some(not_separable());
    }
    let series: Vec<&[f64]> = members.iter().map(|&i| pass_medians(&results[i])).collect();
    let factors = pass_factors(&series, passes);
    // The level's interval is of the factors' logarithms (a level is a
    // ratio), taken back to factors of its centre.
    let logs: Vec<f64> = factors.iter().map(|f| f.ln()).collect();
    let interval = t_interval(&logs, LEVEL).map(|t| IntervalRecord {
        low: (t.interval.low - t.centre).exp(),
        high: (t.interval.high - t.centre).exp(),
    });
    let mut own = vec![None; results.len()];
    for (&i, medians) in members.iter().zip(&series) {
        let divided: Vec<f64> = medians.iter().zip(&factors).map(|(m, f)| m / f).collect();
        own[i] = relative(&divided);
    }
    Some(Separation {
        level: LevelRecord {
            figures: members.len(),
            passes,
            factors,
            interval,
        },
        own,
    })
}

/// Writes the run's level and each figure's own interval into `report`
/// (once every figure is measured); a run of one pass gets neither, nor a
/// run of several levels (`--load-sweep`, `ipcmark map`'s pairs), whose
/// pass k of one level and pass k of another ran at different times.
pub fn apply(report: &mut RunRecord) {
    let levels = report.settings.load_sweep.is_some() || report.settings.map.is_some();
    let separated = (!levels)
        .then(|| separate(&report.results, report.settings.passes))
        .flatten();
    let Some(s) = separated else {
        report.level = None;
        return;
    };
    for (r, own) in report.results.iter_mut().zip(s.own) {
        if let Some(p) = &mut r.passes {
            p.own_interval = own;
        }
    }
    report.level = Some(s.level);
}

/// The larger side of an interval of factors, as a fraction (0.031 for
/// 0.97–1.031).
pub fn half_width(i: &IntervalRecord) -> f64 {
    (1.0 - i.low).max(i.high - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::facts::PassesRecord;

    /// A figure with pass medians `m`.
    fn figure(m: &[f64]) -> FigureRecord {
        let report = RunRecord::parse(include_str!("../../tests/reports/passes.json")).unwrap();
        let mut r = report.results[0].clone();
        r.passes = Some(PassesRecord {
            count: m.len(),
            medians_ns: m.to_vec(),
            drift_corrected_medians_ns: vec![],
            own_interval: None,
        });
        r
    }

    /// Four figures of their own wobble (a few %, not in step) over 5
    /// passes, each pass scaled by `level`.
    fn run(level: [f64; 5]) -> Vec<FigureRecord> {
        let own = [
            [1.00, 1.03, 0.98, 1.01, 0.99],
            [0.99, 1.00, 1.02, 0.97, 1.01],
            [1.02, 0.98, 1.00, 1.01, 0.99],
            [1.00, 1.01, 0.99, 1.02, 0.97],
        ];
        own.iter()
            .zip([100.0, 250.0, 4000.0, 80.0])
            .map(|(w, base)| {
                let m: Vec<f64> = w.iter().zip(level).map(|(w, l)| base * w * l).collect();
                figure(&m)
            })
            .collect()
    }

    #[test]
    fn a_common_factor_in_one_pass_moves_the_level_not_the_own_intervals() {
        let calm = separate(&run([1.0; 5]), 5).unwrap();
        let slow = separate(&run([1.0, 1.0, 1.1, 1.0, 1.0]), 5).unwrap();
        // The slow pass is the level's, by the factor it was slowed.
        let f = &slow.level.factors;
        assert!((f[2] / f[0] - 1.1).abs() < 0.02, "{f:?}");
        let (c, s) = (
            half_width(calm.level.interval.as_ref().unwrap()),
            half_width(slow.level.interval.as_ref().unwrap()),
        );
        assert!(s > 2.0 * c, "the level's interval widens: {c} → {s}");
        // Each figure's own interval is as it was without the slow pass.
        for (a, b) in calm.own.iter().zip(&slow.own) {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
            assert!((a.low - b.low).abs() < 1e-9, "{a:?} {b:?}");
            assert!((a.high - b.high).abs() < 1e-9, "{a:?} {b:?}");
        }
        // While the whole interval of a figure (the pass medians as they
        // are) is wider than its own.
        let whole = relative(pass_medians(&run([1.0, 1.0, 1.1, 1.0, 1.0])[0])).unwrap();
        assert!(half_width(&whole) > half_width(slow.own[0].as_ref().unwrap()));
    }

    #[test]
    fn one_figures_slow_pass_is_its_own_not_the_machines() {
        let mut figures = run([1.0; 5]);
        let m = &mut figures[1].passes.as_mut().unwrap().medians_ns;
        m[4] *= 5.0;
        let s = separate(&figures, 5).unwrap();
        assert!(
            s.level.factors.iter().all(|f| (f - 1.0).abs() < 0.05),
            "{:?}",
            s.level.factors
        );
        // The others' own intervals stay narrow; the one that jumped is wide.
        assert!(
            half_width(s.own[0].as_ref().unwrap()) < 0.1,
            "{:?}",
            s.own[0]
        );
        assert!(
            half_width(s.own[1].as_ref().unwrap()) > 1.0,
            "{:?}",
            s.own[1]
        );
    }

    #[test]
    fn too_few_figures_or_passes_are_said_not_separable() {
        let two = &run([1.0; 5])[..2];
        let s = separate(two, 5).unwrap();
        assert_eq!((s.level.figures, s.level.passes), (2, 5));
        assert!(s.level.factors.is_empty() && s.level.interval.is_none());
        assert!(s.own.iter().all(Option::is_none));
        // One pass: no level at all.
        assert!(separate(&run([1.0; 5]), 1).is_none());
        // A figure missing a pass is not read into the level.
        let mut figures = run([1.0; 5]);
        figures[3].passes.as_mut().unwrap().medians_ns.pop();
        let s = separate(&figures, 5).unwrap();
        assert_eq!(s.level.figures, 3);
        assert!(s.own[3].is_none() && s.own[0].is_some());
    }

    #[test]
    fn apply_writes_the_level_and_the_own_intervals() {
        let mut report = RunRecord::parse(include_str!("../../tests/reports/passes.json")).unwrap();
        report.results = run([1.0, 0.95, 1.1, 1.0, 1.02]);
        report.settings.passes = 5;
        apply(&mut report);
        let level = report.level.as_ref().unwrap();
        assert_eq!(level.factors.len(), 5);
        assert!(
            report
                .results
                .iter()
                .all(|r| r.passes.as_ref().unwrap().own_interval.is_some())
        );
        // A map's passes are per pair, at different times: no level.
        let mut map = RunRecord::parse(include_str!("../../tests/reports/map.json")).unwrap();
        assert!(map.settings.passes >= 2);
        apply(&mut map);
        assert_eq!(map.level, None);
    }
}
