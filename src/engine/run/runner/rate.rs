//! One figure of mode `rate` (`models::rate`): a curve of offered rates,
//! each point over a fresh channel whose peer receives and stamps arrivals.

use super::{RunSettings, open_context, stream_skip_reason, with_channel};
use crate::engine::channel::{Mechanism, StreamSupport, Topology};
use crate::engine::models::rate::{self, RatePlan};
use crate::engine::os::objects::ObjectNamer;
use crate::engine::run::figure::{Facts, FigureResult, Outcome};

/// Why a mechanism cannot run in mode `rate` at `size`, if it cannot: a
/// rate is offered only to a channel that queues messages (a sender on a
/// schedule does not wait for the last one to be taken), to a second
/// process, in messages that carry the sequence number; or any reason a
/// stream figure has.
pub fn rate_skip_reason(mech: &dyn Mechanism, size: usize, s: &RunSettings) -> Option<String> {
    if let StreamSupport::No(why) = mech.stream() {
        return Some(format!(
            "cannot be offered a rate: it cannot queue messages ({why})"
        ));
    }
    if mech.info().topology == Topology::SelfLoop {
        return Some("one process sends to itself: there is no receiver to offer a rate".into());
    }
    if size < rate::HEADER {
        return Some(format!(
            "a {size}-byte message cannot carry the {}-byte sequence number",
            rate::HEADER
        ));
    }
    stream_skip_reason(mech, size, s)
}

/// Runs one figure of mode `rate`: the wake-up margin measured, then
/// `plan`'s rounds of points, each point a fresh channel and peer
/// ([`rate::run_curve`]). Never panics on a channel failure: the first
/// point that fails fails the figure, and says why.
pub fn run_rate_figure(
    mech: &dyn Mechanism,
    size: usize,
    plan: &RatePlan,
    s: &RunSettings,
    names: &ObjectNamer,
) -> FigureResult {
    let info = mech.info();
    let mut result = FigureResult::new(info.id, Facts::Rate(None), size);
    if let Some(reason) = rate_skip_reason(mech, size, s) {
        result.outcome = Outcome::Skipped(reason);
        return result;
    }
    let lossy = mech.stream() == StreamSupport::Lossy;
    // Measured once, before the first point, so that every point of the
    // figure sleeps short of its schedule by the same margin.
    let margin = match rate::wake_margin_ns() {
        Ok(m) => m,
        Err(e) => {
            result.outcome = Outcome::Failed(format!("set-up: the wake-up margin: {e}"));
            return result;
        }
    };
    let point = |offered: f64, messages: u64, round: usize| -> Result<rate::Measured, String> {
        // The receiver's stores exist (pages touched) before its peer forks.
        let rx = rate::Receiver::new(messages, s.budget.verify_rounds, lossy)
            .map_err(|e| format!("set-up: mmap arrival store: {e}"))?;
        with_channel(
            || mech.open_stream(&open_context(size, names, s)),
            info.topology,
            rate::receiver_role(rx.clone()),
            size,
            s,
            &mut result,
            |client, _| {
                rate::send_point(
                    client, size, offered, messages, &rx, &s.budget, margin, round,
                )
            },
        )
    };
    let curve = rate::run_curve(plan, margin, lossy, point);
    // Every point appended its two sides' CPUs; each is named once, in the
    // order first seen (the client's, then the peer's).
    let mut seen = Vec::with_capacity(2);
    result.cpus.retain(|c| {
        let first = !seen.contains(c);
        seen.push(*c);
        first
    });
    result.outcome = match curve {
        Ok((m, facts)) => {
            result.facts = Facts::Rate(Some(facts));
            Outcome::Ok(Box::new(m))
        }
        Err(e) => Outcome::Failed(e),
    };
    result
}
