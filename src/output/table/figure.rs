//! A figure as the tables read it: its record ([`FigureRecord`], the same
//! whether the run just measured it or `ipcmark show` read it back), how it
//! ended, and what a measured one's samples give.

use crate::record::facts::PrecisionRecord;
use crate::record::run::Latency;
use crate::record::{FigureRecord, Mode, Status};
use crate::stats::Summary;

/// What a measured figure's record gives a table.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// Median, mean, spread of the samples (`samples_ns`).
    pub summary: Summary,
    /// The single times' percentiles (absent in modes stream and score).
    pub latency: Option<&'a Latency>,
    /// How precisely the median is known.
    pub precision: Option<&'a PrecisionRecord>,
}

/// How a figure ended, with what its record holds for each ending.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// Measured.
    Ok(Measured<'a>),
    /// Not attempted, and why.
    Skipped(&'a str),
    /// Attempted and failed, and why.
    Failed(&'a str),
    /// Measured, but nothing was left once the overheads were subtracted.
    BelowResolution(&'a str),
}

/// How `r` ended. A record that says "ok" without samples (a damaged
/// report) reads as failed, naming what is missing.
pub fn outcome(r: &FigureRecord) -> Outcome<'_> {
    fn why(w: &Option<String>) -> &str {
        w.as_deref().unwrap_or("")
    }
    match r.status {
        Status::Ok => match r.samples_ns.as_deref().and_then(Summary::of) {
            Some(summary) => Outcome::Ok(Measured {
                summary,
                latency: r.latency_ns.as_ref(),
                precision: r.precision.as_ref(),
            }),
            None => Outcome::Failed("the report holds no samples of it"),
        },
        Status::Skipped => Outcome::Skipped(why(&r.reason)),
        Status::Failed => Outcome::Failed(why(&r.error)),
        Status::BelowResolution => Outcome::BelowResolution(why(&r.reason)),
    }
}

/// How many single times `r`'s percentiles are over: round trips, operations
/// or messages.
pub fn single_count(r: &FigureRecord) -> u64 {
    match r.mode {
        Mode::PingPong => r.timed_round_trips,
        Mode::Op | Mode::Event => r.timed_ops,
        Mode::OneWay => r.oneway.as_ref().map(|o| o.messages_received),
        _ => None,
    }
    .unwrap_or(0)
}
