//! One mechanism at several sizes, its ping-pong samples interleaved.
//!
//! Run one after another, each size's figure lives through its own second of
//! the machine's drift (another guest, a frequency change), and that drift
//! becomes a difference between sizes: the cost model then bends where the
//! machine did. Here every size's channel and peer are opened first, each
//! figure is checked, warmed up and calibrated, and then the samples are
//! taken in turns, one per size (see [`sampling::take_interleaved`]), each
//! after a short untimed re-warm of its channel. Then each figure's single
//! round trips are timed and its content checked again, as alone.
//!
//! A peer waiting for its next turn is blocked in a receive and costs no CPU,
//! so this is for mechanisms that do not busy-wait. When the channels cannot
//! all be held at once (System V keys, the POSIX message-queue byte limit,
//! descriptors), or set-up fails, the sizes run one after another instead,
//! and each figure's note says why.

use super::channel::{ChannelError, Endpoint, Mechanism, OpenContext, Topology};
use super::interrupt;
use super::objects::ObjectNamer;
use super::peer::{Peer, PeerRole};
use super::pingpong::{Budget, Measurement, Prepared};
use super::placement::PlacementGuard;
use super::runner::{self, FigureResult, Mode, Outcome, RunSettings};
use super::sampling;
use crate::stats::drift;
use std::time::Duration;

/// How a figure of an interleaved sweep was sampled.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SweepFacts {
    /// Sizes sampled together, this one included.
    pub figures: usize,
    /// Rounds this figure took part in (one sample each), from the first.
    pub rounds: usize,
    /// How long each of its samples lasted, ms ([`sample_time`]).
    #[serde(serialize_with = "super::pingpong::ser_ms")]
    pub sample_time: Duration,
    /// Median of this figure's samples with the drift common to the sweep's
    /// rounds divided out (`stats::drift`), ns; `None` if it could not be
    /// estimated. The cost model fits this.
    pub drift_corrected_median_ns: Option<f64>,
}

/// One size's open channel. Dropping it stops the peer before the client
/// end (and with it the OS objects) is released.
struct Open {
    peer: Option<Peer>,
    client: Box<dyn Endpoint>,
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

/// Whether `mech` at `sizes` is measured as one interleaved sweep: not when
/// it busy-waits, and not with cold buffers (each figure's region is twice
/// the last-level cache on each side: a sweep would hold all of them).
pub fn interleaves(mech: &dyn Mechanism, sizes: &[usize], cold: bool) -> bool {
    sizes.len() > 1 && !mech.info().spins && !cold
}

/// Shortest sample of a sweep: two clock reads stay negligible beside it.
const MIN_SAMPLE: Duration = Duration::from_millis(2);

/// How long each sample of a sweep of `figures` sizes lasts: a round should
/// be short against the drift it is to correct, so it lasts about four
/// samples' worth of the budget, whatever the number of sizes (and no
/// sample lasts less than [`MIN_SAMPLE`]).
pub fn sample_time(nominal: Duration, figures: usize) -> Duration {
    (nominal * 4 / figures.max(1) as u32).clamp(MIN_SAMPLE.min(nominal), nominal)
}

/// Runs the ping-pong figures of `mech` at every size in `sizes`, in that
/// order; interleaved when [`interleaves`] says so, else one after another.
pub fn run(
    mech: &dyn Mechanism,
    sizes: &[usize],
    cold: bool,
    s: &RunSettings,
    names: &ObjectNamer,
) -> Vec<FigureResult> {
    let info = mech.info();
    let mut results: Vec<FigureResult> = sizes
        .iter()
        .map(|&size| {
            let mut r = FigureResult::new(info.id, Mode::PingPong, size);
            r.cold_region = cold.then(super::region::cold_region_bytes);
            if let Some(reason) = runner::skip_reason(mech, size, s) {
                r.outcome = Outcome::Skipped(reason);
            }
            r
        })
        .collect();
    let live: Vec<usize> = (0..sizes.len())
        .filter(|&i| runner::skip_reason(mech, sizes[i], s).is_none())
        .collect();
    let sizes_live: Vec<usize> = live.iter().map(|&i| sizes[i]).collect();
    if !interleaves(mech, &sizes_live, cold) {
        for &i in &live {
            results[i] = runner::run_figure(mech, sizes[i], cold, s, names);
        }
        return results;
    }
    let Err(Stop { unfinished, why }) = interleaved(mech, &live, s, names, &mut results) else {
        return results;
    };
    if interrupt::stop_requested().is_some() {
        for i in unfinished {
            results[i].outcome = Outcome::Failed(why.clone());
        }
        return results;
    }
    for i in unfinished {
        let mut r = runner::run_figure(mech, sizes[i], cold, s, names);
        r.note = Some(match r.note.take() {
            Some(n) => format!("{n}; measured alone: {why}"),
            None => format!("measured alone: {why}"),
        });
        results[i] = r;
    }
    results
}

/// Why an interleaved sweep stopped, and the figures it left unmeasured.
struct Stop {
    unfinished: Vec<usize>,
    why: String,
}

/// Opens every live figure's channel and peer, then measures them together.
/// A figure that fails is recorded as failed; the sweep then stops, and the
/// figures it did not finish are returned to be run alone.
fn interleaved(
    mech: &dyn Mechanism,
    live: &[usize],
    s: &RunSettings,
    names: &ObjectNamer,
    results: &mut [FigureResult],
) -> Result<(), Stop> {
    let info = mech.info();
    let self_loop = info.topology == Topology::SelfLoop;
    interrupt::reset_for_figure();
    let mut open: Vec<Open> = Vec::with_capacity(live.len());
    for &i in live {
        let size = results[i].size;
        let opened = (|| {
            let channel = mech
                .open(&OpenContext { size, names })
                .map_err(|e| format!("set-up: {e}"))?;
            results[i].note = channel.note;
            let mut client = channel.client;
            let peer = runner::spawn_peer(
                info.topology,
                channel.server,
                PeerRole::Echo,
                size,
                s,
                results[i].cold_region,
            )?;
            if let Some(p) = &peer {
                client
                    .attach(p.identity())
                    .map_err(|e| format!("set-up: {e}"))?;
            }
            Ok::<_, String>(Open {
                peer,
                client,
                figure: i,
            })
        })();
        match opened {
            Ok(o) => open.push(o),
            Err(e) => {
                return Err(Stop {
                    unfinished: live.to_vec(),
                    why: format!("{} channels could not be open at once ({e})", live.len()),
                });
            }
        }
    }
    let placed = match PlacementGuard::apply(&s.client) {
        Ok(p) => p,
        Err(e) => {
            return Err(Stop {
                unfinished: live.to_vec(),
                why: format!("set-up: {e}"),
            });
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

    let outcome = measure_all(&mut open, self_loop, s, results);
    drop(placed);
    // Peers stop here, all at once, before any figure is run alone: a peer's
    // exit would otherwise read as the death of the next figure's peer.
    let errors: Vec<Option<String>> = open
        .iter()
        .map(|o| o.peer.as_ref().and_then(Peer::reported_error))
        .collect();
    drop(open);
    match outcome {
        Ok(measurements) => {
            let all: Vec<&[f64]> = measurements
                .iter()
                .map(|m| m.samples_ns.as_slice())
                .collect();
            let factors = drift::round_factors(&all);
            for (&i, m) in live.iter().zip(measurements) {
                results[i].sweep = Some(SweepFacts {
                    figures: live.len(),
                    rounds: m.samples_ns.len(),
                    sample_time: sample_time(s.budget.sample_time, live.len()),
                    drift_corrected_median_ns: factors
                        .as_ref()
                        .map(|f| drift::corrected_median(&m.samples_ns, f)),
                });
                results[i].outcome = Outcome::Ok(Box::new(m));
            }
            Ok(())
        }
        Err((k, e)) => {
            let failed = live[k];
            let why = runner::describe_failure(&e, errors[k].clone());
            results[failed].outcome = Outcome::Failed(why.clone());
            let size = format!("{} {} B", results[failed].mechanism, results[failed].size);
            Err(Stop {
                unfinished: live.iter().copied().filter(|&i| i != failed).collect(),
                why: if matches!(e, ChannelError::Interrupted(_)) {
                    why
                } else {
                    format!("the interleaved sweep stopped when {size} failed")
                },
            })
        }
    }
}

/// Prepares, samples in turns and finishes every open figure. The first
/// error ends it, with the index (into `open`) of the figure it came from.
fn measure_all(
    open: &mut [Open],
    self_loop: bool,
    s: &RunSettings,
    results: &[FigureResult],
) -> Result<Vec<Measurement>, (usize, ChannelError)> {
    let budget = &Budget {
        sample_time: sample_time(s.budget.sample_time, open.len()),
        ..s.budget
    };
    let mut prepared = Vec::with_capacity(open.len());
    for (k, o) in open.iter_mut().enumerate() {
        let r = &results[o.figure];
        prepared.push(
            Prepared::new(o.client.as_mut(), r.size, self_loop, budget, r.cold_region)
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
            p.finish(o.client.as_mut(), samples, precision)
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
