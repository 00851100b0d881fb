//! One stream figure from what its two sides counted. Local streams
//! ([`measure`](super::measure::measure)), remote ones against an agent and
//! MPI's windows all end here, so their figures cannot drift apart as copies
//! of one computation do.
//!
//! ```text
//! sample j            = (window_j − one clock read) ÷ messages_j − loop overhead of the bounding side
//! bytes/s, messages/s = size ÷ median, 1 ÷ median        (none for a median at or below zero)
//! CPU per message     = that side's CPU time ÷ its messages − its loop overhead
//! busy                = that side's CPU time ÷ its span
//! loss                = 1 − received ÷ sent               (0 for a lossless channel)
//! ```
//!
//! Nothing is floored: a time at or below zero is below the clock's
//! resolution and is reported as such, never as a rate.

use super::facts::{Bound, Busy, CpuPerMessage, StreamFacts, bound};
use crate::engine::measure::{Achieved, Measurement};
use crate::stats::{LatencyHistogram, Summary};
use std::fmt;

/// One sample as the receiver's clock (or, for MPI, the sender's) timed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The window's span, ns, one clock read included.
    pub ns: u64,
    /// Messages that arrived in it.
    pub messages: u64,
}

impl Window {
    /// Time per message, ns: the span less `clock_ns` (one clock read), ÷
    /// the messages, less `loop_ns`. Never floored: at or below zero is
    /// below the clock's resolution. A caller that samples to a precision
    /// times its samples with this, so they are the figure's exactly.
    pub fn per_message_ns(self, clock_ns: f64, loop_ns: f64) -> f64 {
        (self.ns as f64 - clock_ns) / self.messages as f64 - loop_ns
    }
}

/// What one side counted over the timed part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SideTally {
    /// Messages it handled: sent (sender) or received (receiver).
    pub messages: u64,
    /// Its thread's user + system time, ns.
    pub cpu_ns: u64,
    /// Its own span of the timed part, ns.
    pub span_ns: u64,
    /// Its loop per message, ns (timed against an endpoint that does
    /// nothing); 0 where the loop is not timed apart from the mechanism.
    pub loop_ns: f64,
}

/// Where the stream figures of the three callers differ. Each keeps its
/// own behaviour through these; nothing else in the assembly differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Messages a sample needs to be timed (at least 1). Fewer: a lossy
    /// channel's sample is untimed and counted in the note, a lossless
    /// channel's refuses the figure. The local receiver stamps a lost
    /// boundary at the first later message, so a window of one message may
    /// span another sample's: it needs 2 ([`Rules::LOCAL`]). A remote
    /// window runs from its first receipt to the next window's first, and
    /// an MPI phase times all its messages: 1 is enough.
    pub fewest: u64,
    /// Whether a lossless figure with no message compared whole is refused
    /// (a lossy one always is: a lost check proves nothing). The remote
    /// receiver only spot-checks, so one it never compared proves nothing
    /// either; the local sink and MPI's receivers fail the figure
    /// themselves on any mismatch.
    pub verify_lossless: bool,
}

impl Rules {
    /// A local stream's: samples bounded by boundary messages.
    pub const LOCAL: Rules = Rules {
        fewest: 2,
        verify_lossless: false,
    };
}

/// Everything a stream figure is assembled from, in plain numbers.
#[derive(Debug, Clone, Copy)]
pub struct StreamCounts<'a> {
    /// Bytes per message.
    pub size: usize,
    /// Whether the channel may lose messages.
    pub lossy: bool,
    /// Each sample's window, in order.
    pub samples: &'a [Window],
    /// The sender's tally.
    pub sender: SideTally,
    /// The receiver's tally.
    pub receiver: SideTally,
    /// Messages compared byte for byte by the receiver.
    pub verified: u64,
    /// One clock read, ns, subtracted from every window (0 where the
    /// windows are timed by a clock whose read is not known here).
    pub clock_overhead_ns: f64,
    /// The precision the samples reached, for a figure sampled to one.
    pub precision: Option<Achieved>,
    /// Messages in flight per acknowledged window (MPI's); `None` for a
    /// continuous stream.
    pub window: Option<u64>,
    /// Sender–receiver pairs counted together (MPI's rate); `None` for one.
    pub pairs: Option<u64>,
    /// Where the callers differ.
    pub rules: Rules,
}

/// Why the counts make no figure. `Display` words it as a local figure's
/// failure; a caller with its own words maps the variants it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The receiver counted more than were sent, or (lossless) fewer.
    Counts {
        /// Messages sent.
        sent: u64,
        /// Messages received.
        received: u64,
    },
    /// A lossless channel's sample had too few messages to be timed.
    Sample {
        /// Which, from 1.
        index: usize,
        /// Its messages.
        messages: u64,
    },
    /// No sample could be timed.
    NoSample {
        /// Messages sent.
        sent: u64,
        /// Messages received.
        received: u64,
        /// [`Rules::fewest`].
        fewest: u64,
    },
    /// No message was compared whole where one must be.
    Unverified,
}

/// `n` as the notes and errors spell a count of messages.
fn spelled(n: u64) -> String {
    match n {
        1 => "one".into(),
        2 => "two".into(),
        n => n.to_string(),
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refused::Counts { sent, received } => {
                write!(f, "the receiver counted {received} messages of {sent} sent")
            }
            Refused::Sample { index, messages } => {
                write!(f, "sample {index} delivered {messages} message(s)")
            }
            Refused::NoSample {
                sent,
                received,
                fewest,
            } => {
                let what = if fewest == 1 { "message" } else { "messages" };
                write!(
                    f,
                    "no sample had {} {what} arrive to time ({received} of {sent} arrived)",
                    spelled(fewest)
                )
            }
            Refused::Unverified => write!(f, "none of the whole-content check messages arrived"),
        }
    }
}

impl std::error::Error for Refused {}

/// The stream figure of `c`: its [`Measurement`] and [`StreamFacts`] (the
/// note on untimed samples among them).
pub fn assemble(c: &StreamCounts) -> Result<(Measurement, StreamFacts), Refused> {
    let (sent, received) = (c.sender.messages, c.receiver.messages);
    if received > sent || (!c.lossy && received != sent) {
        return Err(Refused::Counts { sent, received });
    }
    let busy = Busy {
        sender: c.sender.cpu_ns as f64 / c.sender.span_ns.max(1) as f64,
        receiver: c.receiver.cpu_ns as f64 / c.receiver.span_ns.max(1) as f64,
    };
    let bounded_by = bound(busy, c.lossy && received < sent);
    // The time per message is the pace of the side that bounds the stream,
    // so that side's loop is in it; never more than either side's.
    let subtracted = match bounded_by {
        Bound::Sender => c.sender.loop_ns,
        Bound::Receiver => c.receiver.loop_ns,
        Bound::Both => c.sender.loop_ns.min(c.receiver.loop_ns),
    };
    let fewest_needed = c.rules.fewest.max(1);
    let mut samples_ns = Vec::with_capacity(c.samples.len());
    let mut fewest = u64::MAX;
    let mut untimed = 0;
    for (i, w) in c.samples.iter().enumerate() {
        if w.messages < fewest_needed {
            if c.lossy {
                // (Almost) all of this sample was lost: no window to time
                // it. Its messages still count as sent.
                untimed += 1;
                continue;
            }
            return Err(Refused::Sample {
                index: i + 1,
                messages: w.messages,
            });
        }
        fewest = fewest.min(w.messages);
        samples_ns.push(w.per_message_ns(c.clock_overhead_ns, subtracted));
    }
    let summary = Summary::of(&samples_ns).ok_or(Refused::NoSample {
        sent,
        received,
        fewest: fewest_needed,
    })?;
    if (c.lossy || c.rules.verify_lossless) && c.verified == 0 {
        return Err(Refused::Unverified);
    }
    let mut hist = LatencyHistogram::new();
    for &s in &samples_ns {
        hist.record_ns(s);
    }
    // A rate exists only for a time above zero.
    let rate = |ns: f64, per: f64| (ns > 0.0).then(|| per * 1e9 / ns);
    let size = c.size as f64;
    // Each side's own loop is CPU time too; the mechanism's share is what is
    // left, if anything is (the CPU clock is exact to 1 µs only).
    let cpu_left = |side: &SideTally| {
        (side.messages > 0)
            .then(|| side.cpu_ns as f64 / side.messages as f64 - side.loop_ns)
            .filter(|&left| left > 0.0)
    };
    let facts = StreamFacts {
        bytes_per_s: rate(summary.median, size),
        messages_per_s: rate(summary.median, 1.0),
        cpu_ns_per_message: CpuPerMessage {
            sender: cpu_left(&c.sender),
            receiver: cpu_left(&c.receiver),
        },
        busy,
        bounded_by,
        sent,
        received,
        // A lossless channel whose counts agree lost nothing, even when
        // neither side counted a message (1 − 0 ÷ 1 would say all).
        loss_ratio: if c.lossy {
            1.0 - received as f64 / sent.max(1) as f64
        } else {
            0.0
        },
        samples_bytes_per_s: samples_ns.iter().map(|&ns| rate(ns, size)).collect(),
        verified_messages: c.verified,
        sender_loop_overhead_ns: c.sender.loop_ns,
        receiver_loop_overhead_ns: c.receiver.loop_ns,
        note: (untimed > 0).then(|| {
            let why = match fewest_needed {
                1 => "none of their messages arrived".to_string(),
                n => format!("fewer than {} of their messages arrived", spelled(n)),
            };
            format!("{untimed} of {} samples untimed: {why}", c.samples.len())
        }),
        lossy: c.lossy,
        window: c.window,
        pairs: c.pairs,
    };
    let measurement = Measurement {
        precision: c.precision,
        iterations: fewest,
        samples_ns,
        summary,
        loop_overhead_ns: subtracted,
        clock_overhead_ns: c.clock_overhead_ns,
        latency: hist.percentiles().expect("a sample was recorded"),
        verified_round_trips: 0,
        histogram: None,
    };
    Ok((measurement, facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows of `(ns, messages)`, sender and receiver tallies that agree
    /// with them, nothing subtracted.
    fn counts(samples: &[Window], lossy: bool, sent: u64) -> StreamCounts<'_> {
        let received = samples.iter().map(|w| w.messages).sum();
        StreamCounts {
            size: 1000,
            lossy,
            samples,
            sender: SideTally {
                messages: sent,
                cpu_ns: 0,
                span_ns: 0,
                loop_ns: 0.0,
            },
            receiver: SideTally {
                messages: received,
                cpu_ns: 0,
                span_ns: 0,
                loop_ns: 0.0,
            },
            verified: 8,
            clock_overhead_ns: 0.0,
            precision: None,
            window: None,
            pairs: None,
            rules: Rules::LOCAL,
        }
    }

    fn w(ns: u64, messages: u64) -> Window {
        Window { ns, messages }
    }

    #[test]
    fn each_sample_is_its_window_less_a_clock_read_per_message_less_the_loop() {
        let samples = [w(10_000, 100), w(20_000, 100), w(30_000, 100)];
        let mut c = counts(&samples, false, 300);
        c.clock_overhead_ns = 1000.0;
        // The sender busier: its loop is in the pace.
        c.sender = SideTally {
            messages: 300,
            cpu_ns: 600_000,
            span_ns: 1_000_000,
            loop_ns: 5.0,
        };
        c.receiver.cpu_ns = 100_000;
        c.receiver.span_ns = 1_000_000;
        c.receiver.loop_ns = 2.0;
        let (m, f) = assemble(&c).unwrap();
        assert_eq!(m.samples_ns, [85.0, 185.0, 285.0]);
        assert_eq!(m.summary.median, 185.0);
        assert_eq!((m.iterations, m.loop_overhead_ns), (100, 5.0));
        assert_eq!(m.clock_overhead_ns, 1000.0);
        assert_eq!(f.bounded_by, Bound::Sender);
        assert_eq!(f.bytes_per_s, Some(1000.0 * 1e9 / 185.0));
        assert_eq!(f.messages_per_s, Some(1e9 / 185.0));
        assert_eq!(f.samples_bytes_per_s[0], Some(1000.0 * 1e9 / 85.0));
        // CPU per message: each side's own loop off its own CPU time.
        assert_eq!(f.cpu_ns_per_message.sender, Some(2000.0 - 5.0));
        assert_eq!(f.cpu_ns_per_message.receiver, Some(100_000.0 / 300.0 - 2.0));
        assert_eq!((f.busy.sender, f.busy.receiver), (0.6, 0.1));
        assert_eq!((f.sent, f.received, f.loss_ratio), (300, 300, 0.0));
        assert_eq!(f.note, None);
    }

    #[test]
    fn the_counts_must_agree() {
        let samples = [w(1000, 10)];
        // More received than sent: never.
        let c = counts(&samples, true, 9);
        let refused = assemble(&c).unwrap_err();
        assert_eq!(
            refused,
            Refused::Counts {
                sent: 9,
                received: 10
            }
        );
        assert_eq!(
            refused.to_string(),
            "the receiver counted 10 messages of 9 sent"
        );
        // Fewer on a lossless channel: a broken one.
        assert!(matches!(
            assemble(&counts(&samples, false, 11)),
            Err(Refused::Counts { .. })
        ));
        // Fewer on a lossy one: loss.
        let (_, f) = assemble(&counts(&samples, true, 40)).unwrap();
        assert_eq!((f.sent, f.received, f.loss_ratio), (40, 10, 0.75));
        assert_eq!(f.bounded_by, Bound::Receiver);
    }

    #[test]
    fn a_lossless_channel_loses_nothing_even_when_nothing_was_counted() {
        let samples = [w(1000, 10)];
        let mut c = counts(&samples, false, 0);
        c.receiver.messages = 0;
        assert_eq!(assemble(&c).unwrap().1.loss_ratio, 0.0);
        c.lossy = true;
        assert_eq!(assemble(&c).unwrap().1.loss_ratio, 1.0);
    }

    #[test]
    fn a_sample_with_too_few_messages_is_untimed_if_lossy_and_refused_if_not() {
        let samples = [w(1000, 10), w(5000, 0), w(3000, 1), w(2000, 10)];
        let (m, f) = assemble(&counts(&samples, true, 30)).unwrap();
        // Only the two samples with two messages or more are timed.
        assert_eq!(m.samples_ns, [100.0, 200.0]);
        assert_eq!(f.samples_bytes_per_s.len(), 2);
        assert_eq!(m.iterations, 10);
        assert_eq!(
            f.note.as_deref(),
            Some("2 of 4 samples untimed: fewer than two of their messages arrived")
        );
        let refused = assemble(&counts(&samples, false, 21)).unwrap_err();
        assert_eq!(
            refused,
            Refused::Sample {
                index: 2,
                messages: 0
            }
        );
        assert_eq!(refused.to_string(), "sample 2 delivered 0 message(s)");
        // One message is enough where the rules say so; none never is.
        let mut c = counts(&samples, true, 30);
        c.rules.fewest = 1;
        let (m, f) = assemble(&c).unwrap();
        assert_eq!(m.samples_ns, [100.0, 3000.0, 200.0]);
        assert_eq!(
            f.note.as_deref(),
            Some("1 of 4 samples untimed: none of their messages arrived")
        );
        c.rules.fewest = 0;
        assert_eq!(assemble(&c).unwrap().0.samples_ns.len(), 3);
    }

    #[test]
    fn no_sample_to_time_refuses_the_figure() {
        let samples = [w(1000, 1), w(1000, 0)];
        let refused = assemble(&counts(&samples, true, 5)).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "no sample had two messages arrive to time (1 of 5 arrived)"
        );
        assert!(matches!(
            assemble(&counts(&[], false, 0)),
            Err(Refused::NoSample { .. })
        ));
    }

    #[test]
    fn a_figure_must_show_a_message_compared_whole_where_the_rules_say() {
        let samples = [w(1000, 10)];
        let mut c = counts(&samples, true, 10);
        c.verified = 0;
        assert_eq!(assemble(&c).unwrap_err(), Refused::Unverified);
        c.lossy = false;
        assert!(assemble(&c).is_ok());
        c.rules.verify_lossless = true;
        assert_eq!(assemble(&c).unwrap_err(), Refused::Unverified);
    }

    #[test]
    fn times_at_or_below_zero_are_kept_but_give_no_rate() {
        // Two of three samples at or below zero once a clock read is off.
        let samples = [w(100, 10), w(100, 10), w(1100, 10)];
        let mut c = counts(&samples, false, 30);
        c.clock_overhead_ns = 100.0;
        let (m, f) = assemble(&c).unwrap();
        // Never floored: the values stay as they were.
        assert_eq!(m.samples_ns, [0.0, 0.0, 100.0]);
        assert_eq!(f.samples_bytes_per_s, [None, None, Some(1e10)]);
        assert_eq!(m.latency.at_or_below_zero, 2);
        // The median itself is at zero: no rate at all.
        assert_eq!((f.bytes_per_s, f.messages_per_s), (None, None));
        c.clock_overhead_ns = 200.0;
        let (m, f) = assemble(&c).unwrap();
        assert_eq!(m.samples_ns, [-10.0, -10.0, 90.0]);
        assert_eq!(m.summary.median, -10.0);
        assert_eq!(f.bytes_per_s, None);
    }

    #[test]
    fn cpu_per_message_left_at_or_below_zero_is_none() {
        let samples = [w(1000, 10)];
        let mut c = counts(&samples, false, 10);
        c.sender.cpu_ns = 50;
        c.sender.loop_ns = 5.0;
        c.receiver.cpu_ns = 40;
        c.receiver.loop_ns = 5.0;
        let (_, f) = assemble(&c).unwrap();
        assert_eq!(f.cpu_ns_per_message.sender, None);
        assert_eq!(f.cpu_ns_per_message.receiver, None);
        // No CPU time read at all: nothing to say either.
        let (_, f) = assemble(&counts(&samples, false, 10)).unwrap();
        assert_eq!(f.cpu_ns_per_message.sender, None);
    }

    #[test]
    fn both_sides_busy_subtract_the_smaller_loop() {
        let samples = [w(1000, 10)];
        let mut c = counts(&samples, false, 10);
        for side in [&mut c.sender, &mut c.receiver] {
            side.cpu_ns = 1000;
            side.span_ns = 1000;
        }
        c.sender.loop_ns = 3.0;
        c.receiver.loop_ns = 2.0;
        let (m, f) = assemble(&c).unwrap();
        assert_eq!(f.bounded_by, Bound::Both);
        assert_eq!(m.loop_overhead_ns, 2.0);
        assert_eq!(m.samples_ns, [98.0]);
        assert_eq!(
            (f.sender_loop_overhead_ns, f.receiver_loop_overhead_ns),
            (3.0, 2.0)
        );
    }

    #[test]
    fn the_window_the_pairs_and_the_precision_pass_through() {
        let samples = [w(6400, 64)];
        let mut c = counts(&samples, false, 64);
        c.window = Some(64);
        c.pairs = Some(2);
        let (m, f) = assemble(&c).unwrap();
        assert_eq!((f.window, f.pairs, f.lossy), (Some(64), Some(2), false));
        assert_eq!(m.precision, None);
        assert_eq!((m.verified_round_trips, m.histogram.is_none()), (0, true));
        assert_eq!(f.verified_messages, 8);
    }
}
