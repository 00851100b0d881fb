//! The corrections of `run::correct` applied to a run's figures measured
//! under a load: each figure's interrupt fraction from its load record,
//! then R' = S' / H from the run's baseline.

use crate::engine::run::correct::{Corrected, Correction, correct_score, correct_time};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::engine::run::load::FigureLoad;

/// The interrupt fraction on `cpus` in `load`'s window, with the interrupt
/// time it rests on.
fn fraction(load: &FigureLoad, cpus: &[usize]) -> (u64, f64) {
    let interrupt_ns: u64 = cpus.iter().map(|&c| load.interrupt_ns_on(c)).sum();
    let span = load.window_ns as f64 * cpus.len() as f64;
    let f = if span > 0.0 {
        interrupt_ns as f64 / span
    } else {
        0.0
    };
    (interrupt_ns, f)
}

/// The correction of one figure measured under a load, or `None` (no load
/// record, not measured, or a mode the corrections do not cover).
pub fn correction(r: &FigureResult) -> Option<Correction> {
    let load = r.load.as_ref()?;
    let Outcome::Ok(m) = &r.outcome else {
        return None;
    };
    let cpus = if r.cpus.is_empty() {
        load.cpus.iter().map(|c| c.cpu).collect()
    } else {
        r.cpus.clone()
    };
    let (interrupt_ns, f) = fraction(load, &cpus);
    let (status, kind) = match r.mode() {
        Mode::Op | Mode::Event | Mode::PingPong => correct_time(m.summary.median, f),
        Mode::Score => {
            let s = r.score()?;
            let interrupts: u64 = load
                .cpus
                .iter()
                .filter(|c| cpus.contains(&c.cpu))
                .flat_map(|c| c.interrupts.values())
                .sum();
            // A score's threads share one CPU: its interrupt time over the window.
            let per_cpu = interrupt_ns / cpus.len().max(1) as u64;
            correct_score(
                s.operations,
                s.elapsed_ns,
                per_cpu,
                interrupts,
                load.window_ns,
            )
        }
        Mode::Periodic | Mode::OneWay | Mode::Stream | Mode::Rate => return None,
    };
    Some(Correction {
        cpus,
        window_ns: load.window_ns,
        interrupt_ns,
        fraction: f,
        status,
        kind,
    })
}

/// Corrects every figure measured under a load, then fills R' = S' / H
/// in every corrected score from the baseline's rate as measured (the
/// first baseline of the run, as R is).
pub fn correct_all(results: &mut [FigureResult]) {
    for r in results.iter_mut() {
        r.correction = correction(r);
    }
    let h = results.iter().find_map(|r| match (&r.outcome, r.score()) {
        (Outcome::Ok(_), Some(f)) if f.is_baseline && f.ops_per_s > 0.0 => Some(f.ops_per_s),
        _ => None,
    });
    for r in results.iter_mut() {
        if let Some(Correction {
            kind:
                Corrected::Score {
                    corrected_ops_per_s,
                    corrected_relative_to_baseline,
                    ..
                },
            ..
        }) = &mut r.correction
        {
            *corrected_relative_to_baseline = h.zip(*corrected_ops_per_s).map(|(h, s)| s / h);
        }
    }
}
