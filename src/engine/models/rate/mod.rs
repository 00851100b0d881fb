//! The open-loop timing model (`--mode rate`): latency under an offered
//! load, timed from the schedule.
//!
//! The measuring process is the **sender**; the peer is the **receiver**.
//! At an offered rate R the sender sends message i at its intended time
//! `t_i = t0 + i/R` (absolute times, so no drift accumulates), whether or
//! not the messages before it have arrived: nothing waits for an answer.
//! Each message carries its sequence number in its first 8 bytes; the
//! receiver poisons those bytes before each receive, checks the number
//! (a gap fails the figure, or is counted as a loss on a lossy channel) and
//! stores its clock reading at arrival in a shared array, preallocated and
//! touched before the peer starts. The sender stores its own clock reading
//! when it sends (the read that ended its wait). After the point:
//!
//! ```text
//! latency (from the intended send) = arrival − t_i − one clock read
//! service (from the actual send)   = arrival − actual send − one clock read
//! ```
//!
//! The first is what a user of a service offered R messages a second sees:
//! a stall of the sender or the channel delays every message due during it,
//! and each of them counts it (no coordinated omission). The second is what
//! a closed loop would report. A sender that cannot keep the schedule (its
//! send blocks on a full queue, or it was not running) sends late: each
//! message sent more than one period after its intended time is counted
//! `late`, and the most it fell behind is reported.
//!
//! Waiting: when the gap between two messages is shorter than this
//! machine's wake-up margin (measured before the first point: the 90th
//! percentile of how late a short `clock_nanosleep` returns), the sender
//! spins on the clock; otherwise it sleeps to the margin before the
//! intended time and spins the rest. The figure says which.
//!
//! A figure is a curve: for each offered rate, a point with the achieved
//! rate (messages received over the time from the first intended send to
//! the last arrival), the percentiles of both latencies (HDR histogram),
//! losses and lateness, and each side's CPU time per message. The sweep
//! runs `rounds` times (each round a fresh channel per point); per round,
//! the **knee** (the lowest offered rate from which on the p99 from the
//! intended send stays at twice the low-rate p99 or more: the median p99
//! of the rates at a quarter of the saturation rate or below) and the **saturation rate**
//! (the highest achieved rate within 5% of its offered rate), with their
//! range over rounds.
//!
//! Whole-content verification runs outside the timed messages: `verify`
//! messages before the first timed one and after the last, each filled with
//! a pattern unique to it and compared byte for byte by the receiver.

pub mod curve;
pub mod receiver;
pub mod sender;
#[cfg(test)]
mod tests;

pub use curve::{Measured, rate_text, run_curve};
pub use receiver::{Receiver, receiver_role};
pub use sender::{send_point, wake_margin_ns};

use crate::stats::compare::Interval;
use std::time::Duration;

/// Bytes of the sequence number each message starts with; a figure needs
/// at least this payload.
pub const HEADER: usize = 8;

/// The offered rates of a figure.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// These rates, msg/s, in increasing order.
    List(Vec<f64>),
    /// A geometric series from [`SWEEP_FIRST`] (×2 each point) until the
    /// channel is saturated (achieved below 95% of offered) or
    /// [`SWEEP_LAST`], then ×2^¼ steps inside the grid's step that holds
    /// the knee and the one where the channel saturated.
    Sweep,
}

/// The first rate of a sweep, msg/s.
pub const SWEEP_FIRST: f64 = 1000.0;
/// The highest rate a sweep offers, msg/s.
pub const SWEEP_LAST: f64 = 16_384_000.0;

/// How a rate figure runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RatePlan {
    /// The offered rates.
    pub rates: Rates,
    /// Sweeps of the whole curve (the units of the knee's interval).
    pub rounds: usize,
    /// How long each point sends its timed messages.
    pub point_time: Duration,
    /// The fewest timed messages a point sends (so a low rate still has a
    /// p99.9): a point sends `max(min_messages, R × point_time)`, at most
    /// [`MAX_MESSAGES`].
    pub min_messages: u64,
}

/// The most timed messages one point sends (its stores: 16 B a message).
pub const MAX_MESSAGES: u64 = 4_000_000;

impl RatePlan {
    /// Timed messages of a point at `rate`.
    pub fn messages(&self, rate: f64) -> u64 {
        ((rate * self.point_time.as_secs_f64()).ceil() as u64)
            .max(self.min_messages)
            .min(MAX_MESSAGES)
    }
}

/// Percentiles of one latency population, ns (clock read subtracted).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quantiles {
    /// 50th percentile.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// One offered rate of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct RatePoint {
    /// The round (sweep) it belongs to, from 1.
    pub round: usize,
    /// Offered rate, msg/s.
    pub offered_rate: f64,
    /// Messages received ÷ (last arrival − first intended send), msg/s.
    pub achieved_rate: f64,
    /// Timed messages sent.
    pub sent: u64,
    /// Timed messages received.
    pub received: u64,
    /// Timed messages the channel dropped (lossy channels; 0 elsewhere).
    pub lost: u64,
    /// Messages sent more than one period after their intended time.
    pub late: u64,
    /// The most the sender fell behind its schedule, ns.
    pub behind_max_ns: u64,
    /// Latency from the intended send.
    pub latency_ns: Quantiles,
    /// Latency from the actual send (the service time).
    pub service_ns: Quantiles,
    /// Sender's CPU time (user + system, its thread) per message sent, ns.
    pub sender_cpu_ns: f64,
    /// Receiver's CPU time per message received, ns.
    pub receiver_cpu_ns: f64,
    /// Messages whose whole content was compared (before and after).
    pub verified: u64,
    /// The clock read subtracted from each of its latencies, ns (measured
    /// after its timed messages).
    pub clock_overhead_ns: f64,
    /// The point's two histograms and when it ran, for `--hdr`'s interval
    /// logs (not in the report).
    pub logged: Logged,
}

/// A point's histograms, encoded ([`crate::stats::LatencyHistogram::encode`]:
/// a few kilobytes each), and the span they cover.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Logged {
    /// `CLOCK_REALTIME` at the first intended send, ns since the epoch.
    pub start_unix_ns: u64,
    /// From the first intended send to the last arrival, ns.
    pub span_ns: u64,
    /// Latencies from the intended send.
    pub latency: Vec<u8>,
    /// Latencies from the actual send.
    pub service: Vec<u8>,
}

/// A level over rounds: each round's value, their median, and their range
/// (the lowest and the highest round: what one sweep to the next varies by
/// on this machine).
#[derive(Debug, Clone, PartialEq)]
pub struct OverRounds {
    /// Median over the rounds that have a value.
    pub median: f64,
    /// Each round's value, `None` where that round has none (no knee
    /// within the rates offered).
    pub per_round: Vec<Option<f64>>,
    /// The lowest and highest round's value (`None` under two rounds with one).
    pub interval: Option<Interval>,
}

/// What a rate figure recorded beyond the common
/// [`Measurement`](crate::engine::measure::Measurement), whose samples are
/// the latencies from the intended send at the lowest offered rate.
#[derive(Debug, Clone, PartialEq)]
pub struct RateFacts {
    /// Every point, round by round, each round's in increasing offered rate.
    pub points: Vec<RatePoint>,
    /// Rounds run.
    pub rounds: usize,
    /// "spin" (every gap below the wake-up margin), "sleep, then spin", or
    /// "spin and sleep" (by rate).
    pub waiting: &'static str,
    /// The wake-up margin the sender slept short of each intended time, ns.
    pub wake_margin_ns: u64,
    /// The knee: the lowest offered rate from which on the p99 from the
    /// intended send stays at twice the low-rate p99 or more
    /// ([`curve::low_rate_p99`]); `None` if the highest rate offered is
    /// below that.
    pub knee_rate: Option<OverRounds>,
    /// The highest achieved rate within 5% of its offered rate.
    pub saturation_rate: Option<OverRounds>,
    /// Whether the sweep stopped at its highest rate unsaturated.
    pub unsaturated: bool,
    /// Whether the channel may drop messages (losses counted, not failed).
    pub lossy: bool,
}
