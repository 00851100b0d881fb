//! Ping-pong figures measured together: samples interleaved in rounds.
//!
//! Run one after another, each figure lives through its own second of the
//! machine's drift (another guest, a frequency change), and that drift
//! becomes a difference between figures: the cost model bends where the
//! machine did, and two runs of one configuration differ by whatever each
//! figure happened to meet. Here every figure's channel and peer are opened
//! first, each figure is checked, warmed up and calibrated, and then the
//! samples are taken in rounds, one per figure (see
//! [`sampling::take_interleaved`]), each after a short untimed re-warm of its
//! channel. Then each figure's single round trips are timed and its content
//! checked again, as alone. The figures may be one mechanism's sizes or
//! several mechanisms'.
//!
//! A peer waiting for its next turn is blocked in a receive and costs no CPU,
//! so this is for mechanisms that do not busy-wait. A figure whose channel
//! cannot be held beside the others (System V keys, the POSIX message-queue
//! byte limit, descriptors) runs alone afterwards, and its note says why.

use crate::engine::channel::{ChannelError, Endpoint, Mechanism, Topology};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::models::pingpong::{self, Prepared};
use crate::engine::models::sampling;
use crate::engine::os::interrupt;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::peer::Peer;
use crate::engine::os::placement::{HomeGuard, PlacementGuard};
use crate::engine::run::figure::{Facts, FigureResult, Outcome, SweepFacts};
use crate::engine::run::runner::{self, RunSettings};
use crate::stats::drift;
use std::time::Duration;

/// One figure's open channel. Dropping it stops the peer before the client
/// end (and with it the OS objects) is released.
struct Open {
    peer: Option<Peer>,
    client: Box<dyn Endpoint>,
    self_loop: bool,
    /// Index of its figure among the sweep's results.
    figure: usize,
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(p) = self.peer.take() {
            p.stop();
        }
    }
}

/// Whether a ping-pong figure of `mech` may join a sweep: not when it
/// busy-waits (its peer would spin while the others run), not when its
/// channel needs the process to itself ([`Mechanism::process_wide`]), and
/// not with cold buffers (each figure's region is twice the last-level
/// cache on each side: a sweep would hold all of them).
pub fn joins(mech: &dyn Mechanism, cold: bool) -> bool {
    !mech.info().spins && !mech.process_wide() && !cold
}

/// Shortest sample of a sweep: two clock reads stay negligible beside it.
const MIN_SAMPLE: Duration = Duration::from_millis(2);

/// How long each sample of a sweep of `figures` figures lasts: a round
/// should be short against the drift it is to correct, so it lasts about
/// four samples' worth of the budget, whatever the number of figures (and
/// no sample lasts less than [`MIN_SAMPLE`]).
pub fn sample_time(nominal: Duration, figures: usize) -> Duration {
    (nominal * 4 / figures.max(1) as u32).clamp(MIN_SAMPLE.min(nominal), nominal)
}

/// Runs the ping-pong figures `figures` (mechanism and size, each able to
/// [`joins`] with warm buffers) as one interleaved sweep; results in the
/// same order. Fewer than two that can run: one after another.
pub fn run(
    figures: &[(&dyn Mechanism, usize)],
    s: &RunSettings,
    names: &ObjectNamer,
) -> Vec<FigureResult> {
    let mut live = Vec::with_capacity(figures.len());
    let mut results: Vec<FigureResult> = figures
        .iter()
        .enumerate()
        .map(|(i, &(mech, size))| {
            let mut r = FigureResult::new(mech.info().id, Facts::PingPong, size);
            match runner::skip_reason(mech, size, s) {
                Some(reason) => r.outcome = Outcome::Skipped(reason),
                None => live.push(i),
            }
            r
        })
        .collect();
    let alone: Vec<(usize, Option<String>)> = if live.len() < 2 {
        live.iter().map(|&i| (i, None)).collect()
    } else {
        interleaved(figures, &live, s, names, &mut results)
    };
    for (i, why) in alone {
        if interrupt::stop_requested().is_some() {
            results[i].outcome = Outcome::Failed("interrupted before it ran".into());
            continue;
        }
        let (mech, size) = figures[i];
        let mut r = runner::run_figure(mech, size, false, s, names);
        if let Some(why) = why {
            r.note = Some(match r.note.take() {
                Some(n) => format!("{n}; measured alone: {why}"),
                None => format!("measured alone: {why}"),
            });
        }
        results[i] = r;
    }
    results
}

/// Opens every live figure's channel and peer, then measures those that
/// opened together. Returns the figures left to run alone, with why: those
/// whose channel could not be held beside the others', and, when a figure
/// fails mid-sweep (reported failed), all the others it stopped.
fn interleaved(
    figures: &[(&dyn Mechanism, usize)],
    live: &[usize],
    s: &RunSettings,
    names: &ObjectNamer,
    results: &mut [FigureResult],
) -> Vec<(usize, Option<String>)> {
    // The previous figure's peer exit (stop request, SIGCHLD) must not leak
    // into this sweep.
    interrupt::reset_for_figure();
    // Held until every channel of the sweep is released (see runner's
    // `with_channel`); dropped after `open`, which is declared after it.
    let _home = match HomeGuard::apply(s.home) {
        Ok(h) => h,
        Err(e) => {
            return live
                .iter()
                .map(|&i| (i, Some(format!("set-up: {e}"))))
                .collect();
        }
    };
    let mut alone = Vec::new();
    let mut open: Vec<Open> = Vec::with_capacity(live.len());
    for &i in live {
        let (mech, size) = figures[i];
        let info = mech.info();
        let opened = (|| {
            let (mut client, peer, note) = runner::open_with_peer(
                || mech.open(&runner::open_context(size, names, s)),
                info.topology,
                pingpong::echo_role(),
                size,
                s,
                None,
            )?;
            results[i].note = note;
            if let Some(p) = &peer {
                client.attach(p.identity()).map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(Open {
                peer,
                client,
                self_loop: info.topology == Topology::SelfLoop,
                figure: i,
            })
        })();
        match opened {
            Ok(o) => open.push(o),
            Err(e) => alone.push((
                i,
                Some(format!(
                    "its channel could not be held open beside {} others ({e})",
                    open.len()
                )),
            )),
        }
    }
    // A peer that failed to start was reaped above; its exit must not read
    // as the death of one that runs.
    interrupt::reset_for_figure();
    // Fewer than two to interleave, or no placement: all run alone.
    let placed = match open.len() {
        0 | 1 => Err(None),
        _ => PlacementGuard::apply(&s.client).map_err(|e| Some(format!("set-up: {e}"))),
    };
    let placed = match placed {
        Ok(p) => p,
        Err(why) => {
            let rest: Vec<_> = open.iter().map(|o| (o.figure, why.clone())).collect();
            drop(open);
            interrupt::reset_for_figure();
            return rest.into_iter().chain(alone).collect();
        }
    };
    let cpu = crate::sys::sched::current_cpu();
    for o in &open {
        let r = &mut results[o.figure];
        r.cpus.extend(cpu);
        if let Some(p) = &o.peer {
            r.cpus.extend(p.server_cpu);
        }
    }

    let outcome = measure_all(&mut open, s, results);
    drop(placed);
    // Peers stop here, all at once, before any figure is run alone: a peer's
    // exit would otherwise read as the death of the next figure's peer.
    let errors: Vec<Option<String>> = open
        .iter()
        .map(|o| o.peer.as_ref().and_then(Peer::reported_error))
        .collect();
    let order: Vec<usize> = open.iter().map(|o| o.figure).collect();
    drop(open);
    interrupt::reset_for_figure();
    match outcome {
        Ok(measurements) => {
            let all: Vec<&[f64]> = measurements
                .iter()
                .map(|m| m.samples_ns.as_slice())
                .collect();
            let factors = drift::round_factors(&all);
            let n = order.len();
            for (&i, m) in order.iter().zip(measurements) {
                results[i].sweep = Some(SweepFacts {
                    figures: n,
                    rounds: m.samples_ns.len(),
                    sample_time: sample_time(s.budget.sample_time, n),
                    drift_corrected_median_ns: factors
                        .as_ref()
                        .map(|f| drift::corrected_median(&m.samples_ns, f)),
                });
                results[i].outcome = Outcome::Ok(Box::new(m));
            }
            alone
        }
        Err((k, e)) => {
            let failed = order[k];
            let why = runner::describe_failure(&e, errors[k].clone());
            results[failed].outcome = Outcome::Failed(why.clone());
            if matches!(e, ChannelError::Interrupted(_)) {
                for &i in &order {
                    if i != failed {
                        results[i].outcome = Outcome::Failed(why.clone());
                    }
                }
                return Vec::new();
            }
            let name = format!("{} {} B", results[failed].id, results[failed].size);
            let stopped = format!("the interleaved sweep stopped when {name} failed");
            order
                .into_iter()
                .filter(|&i| i != failed)
                .map(|i| (i, Some(stopped.clone())))
                .chain(alone)
                .collect()
        }
    }
}

/// Prepares, samples in turns and finishes every open figure. The first
/// error ends it, with the index (into `open`) of the figure it came from.
fn measure_all(
    open: &mut [Open],
    s: &RunSettings,
    results: &[FigureResult],
) -> Result<Vec<Measurement>, (usize, ChannelError)> {
    let budget = &Budget {
        sample_time: sample_time(s.budget.sample_time, open.len()),
        ..s.budget
    };
    let mut prepared = Vec::with_capacity(open.len());
    for (k, o) in open.iter_mut().enumerate() {
        let size = results[o.figure].size;
        prepared.push(
            Prepared::new(o.client.as_mut(), size, o.self_loop, budget, None)
                .map_err(|e| (k, e))?,
        );
    }
    let mut last = None;
    let sampled = sampling::take_interleaved(open.len(), budget.samples, &budget.precision, |k| {
        let ep = open[k].client.as_mut();
        // Back-to-back samples of one figure need no re-warm; a turn does.
        if last != Some(k) {
            prepared[k].rewarm(ep)?;
            last = Some(k);
        }
        prepared[k].sample(ep)
    })?;
    let mut out = Vec::with_capacity(open.len());
    for (k, ((p, o), (samples, precision))) in prepared
        .into_iter()
        .zip(open.iter_mut())
        .zip(sampled)
        .enumerate()
    {
        out.push(
            p.finish(
                o.client.as_mut(),
                samples,
                precision,
                o.peer.as_ref().map(|p| pingpong::echo_count(p.board())),
            )
            .map_err(|e| (k, e))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_lasts_about_four_samples_whatever_the_sizes() {
        let ms = Duration::from_millis;
        assert_eq!(sample_time(ms(40), 2), ms(40));
        assert_eq!(sample_time(ms(40), 4), ms(40));
        assert_eq!(sample_time(ms(40), 8), ms(20));
        let eighteen = sample_time(ms(40), 18) * 18;
        assert!(
            eighteen.abs_diff(ms(160)) < Duration::from_micros(1),
            "{eighteen:?}"
        );
        assert_eq!(sample_time(ms(40), 200), MIN_SAMPLE);
        // A budget already below the floor is kept as given.
        assert_eq!(sample_time(ms(1), 18), ms(1));
    }
}
