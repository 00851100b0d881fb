//! The record every figure produces, whatever its timing model: what was
//! measured ([`Outcome`]), the facts its model adds ([`Facts`], one variant
//! per model, so the mode is derived from them and cannot disagree), and
//! what the run added (the sweep it was sampled in, its passes).

use crate::engine::measure::Measurement;
use crate::engine::models::oneway::OneWayFacts;
use crate::engine::models::oploop::CounterCheck;
use crate::engine::models::periodic::PeriodicFacts;
use crate::engine::models::rate::RateFacts;
use crate::engine::models::score::ScoreFacts;
use crate::engine::models::stream::StreamFacts;
use crate::engine::op::{Events, Findings};
use crate::engine::os::probe::KernelCheck;
use std::time::Duration;

/// One mechanism at one size, or one benchmark's figure.
#[derive(Debug, Clone)]
pub struct FigureResult {
    /// Mechanism or benchmark id.
    pub id: &'static str,
    /// Payload bytes per message; for an operation, bytes it moves (0 if none).
    pub size: usize,
    /// Result.
    pub outcome: Outcome,
    /// What the timing model adds to the measurement; its variant is the mode.
    pub facts: Facts,
    /// CPU of the client and (if any) the server, as reported by each side.
    pub cpus: Vec<usize>,
    /// The pair of CPUs (client, server) its level placed it on
    /// (`ipcmark map`); `None`: the run's own placement.
    pub pair: Option<(usize, usize)>,
    /// A fact the mechanism or benchmark recorded about its figure.
    pub note: Option<String>,
    /// Bytes of the region each side's messages walked (`--cold`); `None`: one
    /// warm buffer.
    pub cold_region: Option<usize>,
    /// A ping-pong figure sampled in rounds with others (`run::sweep`).
    pub sweep: Option<SweepFacts>,
    /// A figure measured in several passes (`run::passes`).
    pub passes: Option<PassFacts>,
    /// What the stated load did while it was measured (`--load`).
    pub load: Option<crate::engine::run::load::FigureLoad>,
    /// The figure corrected for the interrupt time of its load record.
    pub correction: Option<crate::engine::run::correct::Correction>,
    /// The peer ran on another host (`run --remote`).
    pub remote: Option<crate::engine::run::remote::RemoteFacts>,
}

impl FigureResult {
    /// A figure not yet run: no outcome, no CPUs; `facts` names its model.
    pub fn new(id: &'static str, facts: Facts, size: usize) -> FigureResult {
        FigureResult {
            id,
            size,
            outcome: Outcome::Skipped(String::new()),
            facts,
            cpus: Vec::new(),
            pair: None,
            note: None,
            cold_region: None,
            sweep: None,
            passes: None,
            load: None,
            correction: None,
            remote: None,
        }
    }

    /// How it was timed.
    pub fn mode(&self) -> Mode {
        self.facts.mode()
    }

    /// Adds `fact` to the figure's note, after what it says already.
    pub fn add_note(&mut self, fact: &str) {
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}; {fact}"),
            None => fact.to_string(),
        });
    }

    /// Turns a measured figure whose median reached or passed zero once the
    /// overheads were subtracted into [`Outcome::BelowResolution`]: a median
    /// of 0 (or less) is not a cost that was measured, and an interval
    /// relative to it means nothing. Samples are never floored at zero, so
    /// a median just above zero is still the median of what was measured.
    pub fn judge_resolution(&mut self) {
        let Outcome::Ok(m) = &self.outcome else {
            return;
        };
        if m.summary.median > 0.0 {
            return;
        }
        let median = m.summary.median;
        let why = if let Some(irq) = self.periodic().and_then(|p| p.irq.as_ref()) {
            format!(
                "its median cost per interrupt, {median:.1} ns ((loop time with the timer − \
                 without) ÷ interrupts, over {} rounds), is at or below zero: the handler \
                 costs less than the rounds' noise resolves here",
                irq.rounds
            )
        } else {
            let mut subtracted = Vec::new();
            if m.loop_overhead_ns != 0.0 || self.mode() != Mode::Event {
                subtracted.push(format!(
                    "the loop overhead ({:.1} ns per operation)",
                    m.loop_overhead_ns
                ));
            }
            if let Some(b) = self.proof().and_then(|p| p.baseline_ns) {
                subtracted.push(format!("the baseline ({b:.1} ns per operation)"));
            }
            format!(
                "its median, {median:.1} ns after subtracting {}, is at or below zero: the \
                 operation costs less than this clock resolves here",
                subtracted.join(" and ")
            )
        };
        self.outcome = Outcome::BelowResolution(why);
    }

    /// Modes op and event: what proves the operation was performed.
    pub fn proof(&self) -> Option<&OpProof> {
        match &self.facts {
            Facts::Op(p) | Facts::Event(p) => p.as_ref(),
            _ => None,
        }
    }

    /// Mode periodic: period, wake-ups, failures, timer slack, policy.
    pub fn periodic(&self) -> Option<&PeriodicFacts> {
        match &self.facts {
            Facts::Periodic(f) => f.as_ref(),
            _ => None,
        }
    }

    /// Mode oneway: pacing, messages, windows.
    pub fn oneway(&self) -> Option<&OneWayFacts> {
        match &self.facts {
            Facts::OneWay(f) => f.as_ref(),
            _ => None,
        }
    }

    /// Mode score: the score, its intervals, threads, counters and R.
    pub fn score(&self) -> Option<&ScoreFacts> {
        match &self.facts {
            Facts::Score(f) => f.as_ref(),
            _ => None,
        }
    }

    /// Mode score, to fill in R once the baseline is known.
    pub fn score_mut(&mut self) -> Option<&mut ScoreFacts> {
        match &mut self.facts {
            Facts::Score(f) => f.as_mut(),
            _ => None,
        }
    }

    /// Mode stream: throughput, CPU per message, counts and loss.
    pub fn stream(&self) -> Option<&StreamFacts> {
        match &self.facts {
            Facts::Stream(f) => f.as_ref(),
            _ => None,
        }
    }

    /// Mode rate: the curve of offered rates, its knee and saturation.
    pub fn rate(&self) -> Option<&RateFacts> {
        match &self.facts {
            Facts::Rate(f) => f.as_ref(),
            _ => None,
        }
    }
}

/// What a figure's timing model adds to its [`Measurement`]: one variant per
/// model, `None` inside until the model has produced them (a skipped figure,
/// or one that failed before its facts existed).
#[derive(Debug, Clone)]
pub enum Facts {
    /// Round trips between the client and an echo server: nothing beyond
    /// the measurement.
    PingPong,
    /// One operation repeated in one process: what proves it was performed.
    Op(Option<OpProof>),
    /// Events timed by the benchmark's own threads: the same proof.
    Event(Option<OpProof>),
    /// Wake-ups at deadlines, or a loop under a periodic interrupt.
    Periodic(Option<PeriodicFacts>),
    /// Stamped messages one way, one in flight.
    OneWay(Option<OneWayFacts>),
    /// Operations counted over a period (kept on a failed figure, up to the failure).
    Score(Option<ScoreFacts>),
    /// Messages streamed one way.
    Stream(Option<StreamFacts>),
    /// Messages sent one way on a schedule, at each offered rate.
    Rate(Option<RateFacts>),
}

impl Facts {
    /// The timing model these facts belong to.
    pub fn mode(&self) -> Mode {
        match self {
            Facts::PingPong => Mode::PingPong,
            Facts::Op(_) => Mode::Op,
            Facts::Event(_) => Mode::Event,
            Facts::Periodic(_) => Mode::Periodic,
            Facts::OneWay(_) => Mode::OneWay,
            Facts::Score(_) => Mode::Score,
            Facts::Stream(_) => Mode::Stream,
            Facts::Rate(_) => Mode::Rate,
        }
    }
}

/// How a figure ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Measured.
    Ok(Box<Measurement>),
    /// Not run, and why.
    Skipped(String),
    /// Started but failed, and why.
    Failed(String),
    /// Measured, but what was left after subtracting the overheads reached
    /// or passed zero: the operation costs less than the clock can resolve
    /// here, and no number is reported as its cost. Says what was measured
    /// and what was subtracted.
    BelowResolution(String),
}

/// How a figure is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Round trips between the client and an echo server (`models::pingpong`).
    PingPong,
    /// One operation repeated in one process (`models::oploop`).
    Op,
    /// Events timed by the benchmark's own threads (`models::eventloop`).
    Event,
    /// Wake-ups at fixed deadlines, or a loop under a periodic interrupt (`models::periodic`).
    Periodic,
    /// Stamped messages from the client to a receiving peer, one in flight,
    /// saturated or sporadic (`models::oneway`).
    OneWay,
    /// Operations completed by a set of threads in a fixed period (`models::score`).
    Score,
    /// Messages streamed one way as fast as they go (`models::stream`).
    Stream,
    /// Messages sent one way on a fixed schedule at each offered rate,
    /// timed from their intended send (`models::rate`).
    Rate,
}

/// The evidence that an operation was performed (mode `op`).
#[derive(Debug, Clone)]
pub struct OpProof {
    /// For each system call the benchmark names, whether one operation made it.
    pub kernel_calls: Vec<KernelCheck>,
    /// The kernel's count of the operations' work, if the benchmark has one.
    pub counter: Option<CounterCheck>,
    /// What one operation is made of, if the figures are per event.
    pub events: Option<Events>,
    /// The baseline subtracted per operation (ns), if the benchmark has one.
    pub baseline_ns: Option<f64>,
    /// The policy its threads ran under, if the benchmark needs SCHED_FIFO.
    pub scheduling: Option<Scheduling>,
    /// What the operation observed besides its times.
    pub findings: Option<Findings>,
}

/// The scheduling of a benchmark that needs SCHED_FIFO at explicit priorities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduling {
    /// `SCHED_FIFO`, or `SCHED_OTHER` when SCHED_FIFO was refused.
    pub policy: &'static str,
    /// The measuring thread's SCHED_FIFO priority (helpers run above it);
    /// `None` under SCHED_OTHER.
    pub base_priority: Option<i32>,
    /// Why SCHED_FIFO was not used and what the figure loses; `None` when it was.
    pub fifo_refused: Option<String>,
}

/// How a figure of an interleaved sweep was sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepFacts {
    /// Figures sampled together, this one included.
    pub figures: usize,
    /// Rounds this figure took part in (one sample each), from the first.
    pub rounds: usize,
    /// How long each of its samples lasted, ms ([`crate::engine::run::sweep::sample_time`]).
    pub sample_time: Duration,
    /// Median of this figure's samples with the drift common to the sweep's
    /// rounds divided out (`stats::drift`), ns; `None` if it could not be
    /// estimated. With passes, the drift between passes is divided out too
    /// (`run::passes::correct_between_passes`). The cost model fits this.
    pub drift_corrected_median_ns: Option<f64>,
}

/// What the passes of a merged figure measured one by one.
#[derive(Debug, Clone, PartialEq)]
pub struct PassFacts {
    /// Passes merged into the figure.
    pub count: usize,
    /// Each pass's median one-way time, ns, in the order they ran.
    pub medians_ns: Vec<f64>,
    /// Each pass's drift-corrected median (a figure of a sweep), ns; empty
    /// unless every pass had one.
    pub drift_corrected_medians_ns: Vec<f64>,
    /// Each pass's relative range of samples ((max − min) / median), in the
    /// order they ran: a pass far more scattered than the others was
    /// disturbed (`analysis::warnings`), where a spread every pass shows is
    /// the figure's own distribution.
    pub relative_ranges: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::periodic::IrqFacts;
    use crate::stats::{LatencyHistogram, Summary};

    /// A measured figure of `facts` whose samples are `samples`.
    fn measured(facts: Facts, samples: &[f64]) -> FigureResult {
        let mut hist = LatencyHistogram::new();
        samples.iter().for_each(|&v| hist.record_ns(v));
        let mut f = FigureResult::new("x", facts, 0);
        f.outcome = Outcome::Ok(Box::new(Measurement {
            iterations: 10,
            samples_ns: samples.to_vec(),
            summary: Summary::of(samples).unwrap(),
            precision: None,
            loop_overhead_ns: if f.mode() == Mode::Op { 2.0 } else { 0.0 },
            clock_overhead_ns: 0.0,
            latency: hist.percentiles().unwrap(),
            verified_round_trips: 0,
            histogram: None,
        }));
        f
    }

    fn proof(baseline_ns: Option<f64>) -> Option<OpProof> {
        Some(OpProof {
            kernel_calls: Vec::new(),
            counter: None,
            events: None,
            baseline_ns,
            scheduling: None,
            findings: None,
        })
    }

    fn reason(mut f: FigureResult) -> String {
        f.judge_resolution();
        match f.outcome {
            Outcome::BelowResolution(why) => why,
            other => panic!("not below resolution: {other:?}"),
        }
    }

    #[test]
    fn below_resolution_names_what_was_subtracted() {
        let op = reason(measured(Facts::Op(proof(Some(-1.5))), &[-1.0, 0.0, 1.0]));
        assert!(
            op.contains("the loop overhead (2.0 ns per operation) and the baseline (-1.5 ns"),
            "{op}"
        );
        let event = reason(measured(Facts::Event(proof(Some(90.0))), &[-3.0]));
        assert!(!event.contains("loop overhead"), "{event}");
        assert!(event.contains("the baseline (90.0 ns"), "{event}");
        let irq = PeriodicFacts {
            period_ns: 100_000,
            frequency_hz: 10_000.0,
            duration_ms: 10.0,
            timer_slack_ns: 1,
            sched_policy: "SCHED_OTHER",
            wakeups: None,
            tolerance: None,
            failures: None,
            fail_ratio: None,
            irq: Some(IrqFacts {
                rounds: 3,
                loop_without_ns: 1e6,
                loop_with_ns: 1e6,
                interrupts: 30,
                overruns: 0,
                dropped_blocks: 0,
                cost_per_interrupt_ns: -4.0,
                round_costs_ns: vec![-4.0, -5.0, 2.0],
            }),
        };
        let why = reason(measured(Facts::Periodic(Some(irq)), &[-4.0, -5.0, 2.0]));
        assert!(
            why.contains("cost per interrupt, -4.0 ns") && why.contains("3 rounds"),
            "{why}"
        );
        // A positive median stands, negative samples and all.
        let mut fine = measured(Facts::Op(proof(None)), &[-1.0, 3.0, 4.0]);
        fine.judge_resolution();
        assert!(matches!(fine.outcome, Outcome::Ok(_)));
    }
}
