//! The run report's records (`record::run`) built from the engine's
//! figures: one [`FigureRecord`] per figure ([`figure`]).

use crate::engine::os::peer::PeerKind;
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::record::run::{FigureRecord, Latency, Peer, Status};

/// What a figure's samples are (`latency_ns.median_of`) and what its
/// percentiles are of (`latency_ns.percentiles_of`), by timing model.
fn populations(f: &FigureResult) -> (&'static str, &'static str) {
    match f.mode() {
        Mode::PingPong => ("batch_means", "single_round_trips"),
        Mode::Op => ("batch_means", "single_operations"),
        Mode::Event => ("event_means", "sampled_events"),
        Mode::Periodic if f.periodic().is_some_and(|p| p.irq.is_some()) => ("rounds", "rounds"),
        Mode::Periodic => ("slice_means", "wakeups"),
        Mode::OneWay if f.oneway().is_some_and(|o| o.pacing == "sporadic") => {
            ("messages", "messages")
        }
        Mode::OneWay => ("window_means", "messages"),
        // The lowest offered rate's latencies from the intended send, every
        // round's: each sample and each percentile is one message.
        Mode::Rate => ("messages", "messages"),
        // Neither writes `latency_ns`.
        Mode::Stream | Mode::Score => ("samples", "samples"),
    }
}

/// The record's name for an engine timing model.
pub fn mode(m: Mode) -> crate::record::Mode {
    use crate::record::Mode as M;
    match m {
        Mode::PingPong => M::PingPong,
        Mode::Op => M::Op,
        Mode::Event => M::Event,
        Mode::Periodic => M::Periodic,
        Mode::OneWay => M::OneWay,
        Mode::Score => M::Score,
        Mode::Stream => M::Stream,
        Mode::Rate => M::Rate,
    }
}

/// The record's name for how the echo server ran.
pub fn peer(p: PeerKind) -> Peer {
    match p {
        PeerKind::Process => Peer::Process,
        PeerKind::Thread => Peer::Thread,
    }
}

/// The record of an engine result.
pub fn figure(f: &FigureResult) -> FigureRecord {
    let mut r = FigureRecord {
        benchmark: f.id.to_string(),
        mode: mode(f.mode()),
        size_bytes: f.size,
        status: Status::Ok,
        reason: None,
        error: None,
        cpus: f.cpus.clone(),
        pair: f.pair.map(|(c, s)| [c, s]),
        note: f.note.clone(),
        iterations: None,
        samples_ns: None,
        latency_ns: None,
        precision: None,
        loop_overhead_ns: None,
        clock_overhead_ns: None,
        timed_round_trips: None,
        verified_round_trips: None,
        throughput_bytes_per_s: None,
        cold_region_bytes: f.cold_region,
        timed_ops: None,
        kernel_calls: f
            .proof()
            .map(|p| p.kernel_calls.iter().map(Into::into).collect()),
        kernel_counter: None,
        events: None,
        baseline_ns: None,
        scheduling: f
            .proof()
            .and_then(|p| p.scheduling.as_ref())
            .map(Into::into),
        observations: None,
        periodic: f.periodic().map(Into::into),
        oneway: f.oneway().map(Into::into),
        score: f.score().map(Into::into),
        stream: None,
        rate_curve: f.rate().map(Into::into),
        sweep: f.sweep.as_ref().map(Into::into),
        passes: f.passes.as_ref().map(Into::into),
        load: f.load.as_ref().map(Into::into),
        correction: f.correction.as_ref().map(Into::into),
        remote: super::remote::of(f),
        explain: None,
    };
    match &f.outcome {
        Outcome::Skipped(why) => {
            r.status = Status::Skipped;
            r.reason = Some(why.clone());
        }
        Outcome::Failed(why) => {
            r.status = Status::Failed;
            r.error = Some(why.clone());
        }
        Outcome::BelowResolution(why) => {
            r.status = Status::BelowResolution;
            r.reason = Some(why.clone());
        }
        Outcome::Ok(m) => {
            let s = m.summary;
            let l = m.latency;
            let ns = |v: u64| l.resolved(v).map(|v| v as f64);
            r.iterations = Some(m.iterations);
            r.samples_ns = Some(m.samples_ns.clone());
            r.loop_overhead_ns = Some(m.loop_overhead_ns);
            r.clock_overhead_ns = Some(m.clock_overhead_ns);
            if f.mode() == Mode::Stream {
                // No single-message latencies: time per message per
                // sample, and the stream's own facts.
                r.stream = f.stream().map(Into::into);
                r.throughput_bytes_per_s = f.stream().and_then(|x| x.bytes_per_s);
                // Sampled to a precision (MPI's windows) or not (local streams: none).
                r.precision = m.precision.as_ref().map(Into::into);
                return r;
            }
            let (median_of, percentiles_of) = populations(f);
            r.latency_ns = Some(Latency {
                median: s.median,
                mean: s.mean,
                stddev: s.stddev,
                median_of: median_of.into(),
                percentiles_of: percentiles_of.into(),
                single_mean: l.mean,
                min: ns(l.min),
                max: ns(l.max),
                p50: ns(l.p50),
                p90: ns(l.p90),
                p99: ns(l.p99),
                p999: ns(l.p999),
                at_or_below_zero: (l.at_or_below_zero > 0).then_some(l.at_or_below_zero),
            });
            r.precision = m.precision.as_ref().map(Into::into);
            match f.mode() {
                // Counts over a period: no single operation is timed, so
                // only the intervals' time per operation is reported.
                Mode::Score => {
                    r.latency_ns = None;
                    r.loop_overhead_ns = None;
                    r.clock_overhead_ns = None;
                }
                Mode::Op | Mode::Event => {
                    r.observations = f
                        .proof()
                        .as_ref()
                        .and_then(|p| p.findings.as_ref())
                        .map(|x| x.counts.iter().map(|(k, v)| (k.to_string(), *v)).collect());
                    r.timed_ops = Some(l.count);
                    r.kernel_counter = f.proof().and_then(|p| p.counter.as_ref()).map(Into::into);
                    r.events = f.proof().and_then(|p| p.events.as_ref()).map(Into::into);
                    r.baseline_ns = f.proof().as_ref().and_then(|p| p.baseline_ns);
                }
                Mode::PingPong => {
                    r.timed_round_trips = Some(l.count);
                    r.verified_round_trips = Some(m.verified_round_trips);
                }
                // Counts are in the periodic fields; nothing moves bytes.
                // (Stream returned above.)
                Mode::Periodic | Mode::Stream => {}
                // Counts are in the oneway fields.
                Mode::OneWay => r.verified_round_trips = Some(m.verified_round_trips),
                // Counts are in the curve's points, each point's own.
                Mode::Rate => {}
            }
            r.throughput_bytes_per_s = (matches!(f.mode(), Mode::PingPong | Mode::Op)
                && s.median > 0.0)
                .then(|| f.size as f64 / (s.median * 1e-9));
        }
    }
    r
}
