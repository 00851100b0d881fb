//! The run: a plan's figures measured in order, in passes, with the stages
//! that must follow one another (merge the passes, normalise the scores,
//! warn, correct the drift between passes, fit the cost models).

use crate::engine::run::figure::{FigureResult, Outcome};

/// Fills R = S / H in every measured score figure from the baseline figure
/// of the same run (the first one measured), as rates so that a period a
/// little longer than planned does not count. Without a baseline, R stays null.
pub fn normalise(results: &mut [FigureResult]) {
    let baseline = results.iter().find_map(|r| match (&r.outcome, r.score()) {
        (Outcome::Ok(_), Some(f)) if f.is_baseline => Some((r.id, f.ops_per_s)),
        _ => None,
    });
    for r in results.iter_mut() {
        let ok = matches!(r.outcome, Outcome::Ok(_));
        if let Some(f) = r.score_mut() {
            match baseline {
                Some((id, h)) if ok && h > 0.0 => {
                    f.baseline = Some(id);
                    f.relative_to_baseline = Some(f.ops_per_s / h);
                }
                _ => {
                    f.baseline = None;
                    f.relative_to_baseline = None;
                }
            }
        }
    }
}
