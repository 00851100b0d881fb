//! What every figure of a run shares, from the arguments and the machine:
//! placement, the budget, the score model's settings, and the defaults of
//! each.

use super::Machine;
use crate::engine::measure::{Budget, Precision};
use crate::engine::models::score::{self, ScoreSettings};
use crate::engine::os::placement::SidePlacement;
use crate::run::Failure;
use crate::run::request::{InjectedFault, RunRequest};
use std::time::Duration;

/// Client and server placement, and a remark when the machine forces one.
/// `preset_rt`: the preset's SCHED_FIFO priority, used when permitted and
/// `--rt` is not given; when it is not permitted the run goes on under
/// SCHED_OTHER and the note says so.
pub(super) fn placement(
    req: &RunRequest,
    preset_rt: Option<i32>,
    machine: &Machine,
) -> Result<(SidePlacement, SidePlacement, Option<String>, usize), Failure> {
    let allowed = &machine.allowed_cpus;
    let show = |v: &[usize]| {
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut note = None;
    let cpus = match &req.cpus {
        Some(list) => {
            let list = &list.0;
            for &c in list {
                if !allowed.contains(&c) {
                    return Err(Failure::usage(format!(
                        "--cpus: CPU {c} does not exist or is not available to ipcmark; available CPUs: {}",
                        show(allowed)
                    )));
                }
            }
            list.clone()
        }
        None if allowed.len() >= 2 => allowed[..2].to_vec(),
        None => {
            note = Some(format!(
                "only CPU {} is available: both sides share it",
                allowed[0]
            ));
            vec![allowed[0]]
        }
    };
    let client_cpu = cpus[0];
    let server_cpu = if req.same_cpu || cpus.len() == 1 {
        cpus[0]
    } else {
        cpus[1]
    };
    if let Some(prio) = req.rt
        && let Some(e) = machine.fifo_refused(prio)
    {
        return Err(Failure::usage(format!(
            "--rt {prio}: SCHED_FIFO is not permitted here ({e}); run as root or grant CAP_SYS_NICE"
        )));
    }
    let mut rt = req.rt;
    if let (None, Some(prio)) = (req.rt, preset_rt) {
        match machine.fifo_refused(prio) {
            None => rt = Some(prio),
            Some(e) => {
                let fact = format!(
                    "SCHED_FIFO {prio}, as in the study, is not permitted here ({e}): running under SCHED_OTHER"
                );
                note = Some(match note {
                    Some(n) => format!("{n}; {fact}"),
                    None => fact,
                });
            }
        }
    }
    let side = |cpu| SidePlacement {
        cpu: Some(cpu),
        rt_priority: rt,
    };
    Ok((side(client_cpu), side(server_cpu), note, allowed.len()))
}

/// The run's budget from its flags; a preset's own sampling time
/// ([`crate::presets::Preset::max_time`]) where `--max-time` is not given,
/// never longer than the default (`--quick`'s included).
pub(super) fn budget(req: &RunRequest, preset: Option<&crate::presets::Preset>) -> Budget {
    let quick = req.budget.quick;
    let default_max_time = Duration::from_millis(if quick { 250 } else { 1000 });
    Budget {
        warmup: Duration::from_millis(if quick { 30 } else { 100 }),
        sample_time: req
            .budget
            .sample_time
            .unwrap_or(Duration::from_millis(if quick { 15 } else { 40 })),
        samples: req
            .budget
            .samples
            .map_or(if quick { 7 } else { 11 }, |n| n as usize),
        precision: Precision {
            target: req.budget.precision.unwrap_or(
                if req.sizes.as_ref().is_some_and(|s| s.sweep) {
                    SWEEP_PRECISION
                } else {
                    PRECISION
                },
            ),
            max_time: req.budget.max_time.unwrap_or(
                preset
                    .and_then(|p| p.max_time)
                    .map_or(default_max_time, |t| t.min(default_max_time)),
            ),
        },
        histogram_time: Duration::from_millis(if quick { 50 } else { 200 }),
        verify_rounds: 16,
        timeout: req.budget.timeout,
    }
}

/// `--precision` when none is given.
const PRECISION: f64 = 0.02;

/// `--passes` when none is given. On a 2-vCPU guest a pass median moves by
/// 10–20% from one pass to the next (the host's load changes every few
/// seconds), so the test between runs needs several: with three, one pass
/// caught in a slow spell decides it; five detected pipe's −35% on one CPU
/// (p ≤ 0.002) in each of three tries while back-to-back runs differed in
/// 0–7 of 21 results. Each pass has a fifth of the budget, so a run takes
/// about as long as one pass did.
pub(super) const PASSES: usize = 5;

/// `--precision` with `--sizes sweep`: the cost model reads a nearly flat
/// range (small messages) from the differences between its sizes' medians,
/// a few per cent apart, which a ±2% median blurs (pipe's 1 B–8 KiB range:
/// R² 0.95–0.99 on a 2-vCPU VM at ±2%, 0.98–0.99 at ±1%, for about a fifth
/// more time: the sweep's short samples make the extra ones cheap).
const SWEEP_PRECISION: f64 = 0.01;

/// The timer group's `--period` when none is given.
pub(super) const TIMER_PERIOD: Duration = Duration::from_millis(1);

/// Thread-Metric's counting period when `--period` is not given (its
/// `TM_TEST_DURATION`), and with `--quick`.
const SCORE_PERIOD: Duration = Duration::from_secs(30);
const SCORE_PERIOD_QUICK: Duration = Duration::from_secs(2);

/// Shortest counting period: each of its reports must hold operations.
const SCORE_PERIOD_MIN: Duration = Duration::from_millis(10);

/// The score model's settings, checked: `--period` of at least
/// [`SCORE_PERIOD_MIN`], and whether SCHED_FIFO is permitted (if not, why).
pub(super) fn score_settings(
    req: &RunRequest,
    client: &SidePlacement,
    machine: &Machine,
) -> Result<(ScoreSettings, Option<String>), Failure> {
    let period = req.timer.period.unwrap_or(if req.budget.quick {
        SCORE_PERIOD_QUICK
    } else {
        SCORE_PERIOD
    });
    if period < SCORE_PERIOD_MIN {
        return Err(Failure::usage(format!(
            "--period {period:?} is too short for thread-metric: its counting period must be at least {SCORE_PERIOD_MIN:?}"
        )));
    }
    let refused = machine.fifo_refused(score::REPORTER_FIFO);
    Ok((
        ScoreSettings {
            period,
            intervals: score::INTERVALS,
            cpu: client.cpu,
            fifo: refused.is_none(),
            timeout: req.budget.timeout,
            unfair: req.fault == Some(InjectedFault::Unfair),
        },
        refused,
    ))
}
