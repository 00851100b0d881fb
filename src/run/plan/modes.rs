//! The flags of the one-way and stream modes, checked against the mode and
//! the preset, and the one-way plan they make.

use crate::engine::models::oneway::OneWayPlan;
use crate::engine::run::session::Item;
use crate::mechanisms;
use crate::run::Failure;
use crate::run::request::{RunMode, RunRequest};
use std::time::Duration;

/// The one-way plan for a figure set: `--interval`, `--window`, `--messages`
/// and `--quick`, or a preset column's interval and count.
pub(super) fn oneway_plan(
    req: &RunRequest,
    interval: Option<Duration>,
    preset_messages: Option<u64>,
) -> OneWayPlan {
    let quick = req.budget.quick;
    let window = req.window.unwrap_or(if quick { 10_000 } else { 100_000 });
    let default_messages = match interval {
        Some(_) => preset_messages
            .filter(|_| !quick)
            .unwrap_or(if quick { 10 } else { 30 }),
        None => preset_messages.unwrap_or(window * if quick { 2 } else { 3 }),
    };
    OneWayPlan {
        interval,
        messages: req.messages.unwrap_or(default_messages),
        window,
        max_time: Duration::from_secs(if quick { 10 } else { 60 }),
    }
}

/// Checks the one-way flags against `--mode` and `--preset` (exit 2).
pub(super) fn check_mode_flags(
    req: &RunRequest,
    preset: Option<&crate::presets::Preset>,
) -> Result<(), Failure> {
    if let Some(p) = preset {
        if req.mode.is_some() || req.interval.is_some() {
            return Err(Failure::usage(format!(
                "--preset {} sets each column's mode and interval; drop --mode and --interval",
                p.name
            )));
        }
        let has_oneway = p
            .columns
            .iter()
            .any(|c| matches!(c.mode, crate::presets::ColumnMode::OneWay { .. }));
        if !has_oneway && (req.window.is_some() || req.messages.is_some()) {
            return Err(Failure::usage(format!(
                "--window and --messages apply to mode oneway; preset {} has no one-way column",
                p.name
            )));
        }
        return Ok(());
    }
    if req.mode != Some(RunMode::Oneway) {
        for (flag, given) in [
            ("--interval", req.interval.is_some()),
            ("--window", req.window.is_some()),
            ("--messages", req.messages.is_some()),
        ] {
            if given {
                return Err(Failure::usage(format!(
                    "{flag} applies to --mode oneway only (mode is {})",
                    match req.mode {
                        Some(RunMode::Stream) => "stream",
                        Some(_) => "pingpong",
                        None => "pingpong by default",
                    }
                )));
            }
        }
    }
    Ok(())
}

/// `--mode stream` streams IPC mechanisms only, and its board holds a
/// bounded number of samples.
pub(super) fn check_stream_args(req: &RunRequest, selected: &[Item]) -> Result<(), Failure> {
    if let Some(p) = &req.preset {
        return Err(Failure::usage(format!(
            "--mode stream: --preset {p} reproduces a ping-pong study; drop one of them"
        )));
    }
    if let Some(other) = selected.iter().find_map(|s| match s {
        Item::PingPong(..) => None,
        Item::Stream(..) => None,
        Item::Op(b) => Some(b.info().id),
        Item::Periodic(b) => Some(b.info().id),
        Item::Scored(b) => Some(b.info().id),
        Item::OneWay(m, _) => Some(m.info().id),
        Item::External(x) => Some(x.id()),
    }) {
        return Err(Failure::usage(format!(
            "--mode stream: '{other}' is not an IPC mechanism; stream runs mechanisms only \
             (the ipc group: {})",
            mechanisms::ids().join(", ")
        )));
    }
    if let Some(n) = req.budget.samples
        && n as usize > crate::engine::models::stream::MAX_SAMPLES
    {
        return Err(Failure::usage(format!(
            "--samples {n}: --mode stream takes at most {} samples",
            crate::engine::models::stream::MAX_SAMPLES
        )));
    }
    Ok(())
}
