//! The flags of the one-way, stream and rate modes, checked against the
//! mode and the preset, and the one-way and rate plans they make.

use crate::engine::channel::StreamSupport;
use crate::engine::models::oneway::OneWayPlan;
use crate::engine::models::rate::{RatePlan, Rates};
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
    if req.rates.is_some() && req.mode != Some(RunMode::Rate) {
        return Err(Failure::usage(format!(
            "--rates applies to --mode rate only (mode is {})",
            mode_name(req)
        )));
    }
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
            (
                "--messages",
                req.messages.is_some() && req.mode != Some(RunMode::Rate),
            ),
        ] {
            if given {
                return Err(Failure::usage(format!(
                    "{flag} applies to --mode oneway only (mode is {})",
                    mode_name(req)
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
        Item::OneWay(m, _) | Item::Rate(m, _) => Some(m.info().id),
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

/// The mode a usage error names: `--mode`'s, or ping-pong by default.
fn mode_name(req: &RunRequest) -> &'static str {
    req.mode.map_or("pingpong by default", RunMode::name)
}

/// Passes of a rate run with `--quick` and no `--passes` (a curve's
/// rounds): the fewest whose interval over rounds is still a number.
pub(super) const QUICK_ROUNDS: usize = 3;

/// The rate plan of each pass: `--rates` (a sweep by default), one round
/// (the session measures a rate figure once per pass and merges the
/// rounds: a curve's rounds are its passes, spread over the run, the units
/// of its knee's interval), and each point's length and fewest messages,
/// shorter with `--quick`.
pub(super) fn rate_plan(req: &RunRequest) -> RatePlan {
    let quick = req.budget.quick;
    RatePlan {
        rates: req.rates.clone().unwrap_or(Rates::Sweep),
        rounds: 1,
        // --messages: every point sends that many, whatever its rate.
        point_time: match req.messages {
            Some(_) => Duration::ZERO,
            None => Duration::from_millis(if quick { 100 } else { 200 }),
        },
        min_messages: req.messages.unwrap_or(if quick { 500 } else { 1000 }),
    }
}

/// The items of `--mode rate`: each mechanism offered `plan`'s rates.
/// Refused (exit 2): a preset (its study was not open-loop), `--cold`, and
/// anything but an IPC mechanism. With no names, the mechanisms that can
/// queue messages (those of `--mode stream`): offering a rate to the others
/// would only say that they cannot take one.
pub(super) fn rate_items(
    req: &RunRequest,
    selected: Vec<Item>,
    plan: &RatePlan,
) -> Result<Vec<Item>, Failure> {
    if let Some(p) = &req.preset {
        return Err(Failure::usage(format!(
            "--mode rate: --preset {p} reproduces a closed-loop study; drop one of them"
        )));
    }
    if req.cold {
        return Err(Failure::usage(
            "--cold applies to --mode pingpong only: a rate figure uses warm buffers",
        ));
    }
    let mut items = Vec::with_capacity(selected.len());
    for item in selected {
        let m = match item {
            Item::PingPong(m, _) | Item::Stream(m, _) | Item::OneWay(m, _) | Item::Rate(m, _) => m,
            other => {
                return Err(Failure::usage(format!(
                    "--mode rate offers rates to IPC mechanisms; '{}' is a single-process \
                     benchmark (the ipc group: {})",
                    other.id(),
                    mechanisms::ids().join(", ")
                )));
            }
        };
        if req.names.is_empty() && matches!(m.stream(), StreamSupport::No(_)) {
            continue;
        }
        items.push(Item::Rate(m, plan.clone()));
    }
    Ok(items)
}
