//! The one-way timing model (mode `oneway`: the 2011 POSIX message-queue
//! study's method, "sporadic vs saturated").
//!
//! The measuring process sends; the peer receives. Each message carries, in
//! its first 8 bytes, a header: the low 16 bits of its sequence number and the
//! sender's `CLOCK_MONOTONIC` reading, in ns since a base taken before the
//! peer started (48 bits: 78 hours). Both processes read the same clock on the
//! same machine, so
//!
//! ```text
//! one-way latency = receiver's clock read after recv returns − stamp − one clock read
//! ```
//!
//! Inside that interval: the tail of the sender's clock read, the header
//! store, `send`, the transfer, the receiver's wake-up, `recv`'s return and
//! the head of the receiver's clock read. The two partial clock reads add up
//! to about one clock read, whose cost (median of back-to-back reads) is
//! subtracted and reported; no loop overhead is inside the interval, so none
//! is subtracted.
//!
//! The receiver counts every message and every gap in the sequence (a lost
//! or repeated number: any fails the figure), stores the raw latency in a
//! shared array preallocated and touched before the peer starts, and sends
//! the message back as the acknowledgement, its header complemented (see
//! [`crate::engine::message`]: the sender's own message coming back cannot
//! pass for it). The sender waits for it and checks that it is the
//! complement of the header it sent before it sends the next one: one
//! message in flight. That works
//! for every mechanism, including those whose hand-off holds one message
//! (shared memory, signals, `process_vm_writev`) and those whose message is a
//! counter or a signal's value (eventfd, sigqueue). Pacing:
//!
//! - **saturated**: the next message right after the acknowledgement;
//! - **sporadic**: the next message at the next absolute deadline, `interval`
//!   apart (`clock_nanosleep(TIMER_ABSTIME)`, timer slack 1 ns), so between
//!   messages both sides sleep and their CPUs may idle, as in the study's one
//!   message per second.
//!
//! Whole-content verification runs outside the timed messages, as in
//! ping-pong: `verify` messages before and after, filled with a pattern
//! unique to each, compared byte for byte when they come back. The windows of
//! the study (min / max / mean per N messages) and the histogram are computed
//! from the stored latencies after the run: nothing is formatted or allocated
//! while messages flow.

use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::{
    check_lent, check_whole, clock_overhead_ns, echo_transform, fill_pattern, poison,
    receive_lent_whole,
};
use crate::engine::models::periodic::SlackGuard;
use crate::engine::models::region::Region;
use crate::engine::os::interrupt::{self, Watchdog};
use crate::engine::os::peer::{Fault, PeerRole, inject};
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::{sched, timer};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Bytes of the header each message starts with; a figure needs at least this payload.
pub const HEADER: usize = 8;
const STAMP_BITS: u32 = 48;
const STAMP_MASK: u64 = (1 << STAMP_BITS) - 1;
/// Saturated messages between two re-arms of the watchdog (and stop checks).
const CHUNK: u64 = 1024;

/// How one figure of mode `oneway` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneWayPlan {
    /// `None`: saturated; otherwise one message per interval (sporadic).
    pub interval: Option<Duration>,
    /// Timed messages to send.
    pub messages: u64,
    /// Messages per window of min / max / mean.
    pub window: u64,
    /// Saturated only: the timed messages stop (mid-window if need be) once
    /// they have taken this long, so a slow channel cannot run for hours.
    pub max_time: Duration,
}

/// Min / max / mean of one window of consecutive messages, ns, clock read subtracted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Messages in the window (the last one may be short).
    pub messages: u64,
    /// Smallest latency (at or below 0 only below the clock's resolution).
    pub min_ns: f64,
    /// Largest latency.
    pub max_ns: f64,
    /// Mean latency.
    pub mean_ns: f64,
}

/// What a one-way figure recorded beyond the common [`Measurement`].
#[derive(Debug, Clone, PartialEq)]
pub struct OneWayFacts {
    /// "saturated" or "sporadic".
    pub pacing: &'static str,
    /// Sporadic: ns between two sends; `null` when saturated.
    pub interval_ns: Option<u64>,
    /// Timed messages sent (and acknowledged).
    pub messages_sent: u64,
    /// Timed messages the receiver counted and timed (any missing fails
    /// the figure, so a result has `messages_sent`).
    pub messages_received: u64,
    /// Gaps or repeats in the sequence the receiver counted (any fails the
    /// figure, so a result has 0).
    pub gaps: u64,
    /// Messages per window.
    pub window: u64,
    /// One entry per window, in order.
    pub windows: Vec<Window>,
    /// Mean latency over every timed message, ns.
    pub mean_ns: f64,
    /// Whether the saturated phase stopped at its time bound before `messages`.
    pub time_bounded: bool,
    /// Timer slack of the sending thread while it sent, ns.
    pub sender_timer_slack_ns: u64,
    /// Scheduling policy of the sending thread.
    pub sender_sched_policy: &'static str,
}

/// Where the receiver leaves its counts and each message's latency: a
/// shared mapping, so a forked receiver and the measuring process see the
/// same memory. Slot 0 holds the count of messages received, slot 1 the
/// gaps in their sequence, slot `s + 1` message `s`'s raw latency marked
/// [`WRITTEN`] (so a message the receiver never timed reads as missing, not
/// as a latency of 0).
#[derive(Clone)]
pub struct Store(Arc<SharedMapping>);

/// Marks a latency slot the receiver wrote.
const WRITTEN: u64 = 1 << 63;

impl Store {
    /// Room for `capacity` messages, every page touched now (before the peer
    /// forks) so that no page fault lands between two messages.
    pub fn new(capacity: u64) -> std::io::Result<Store> {
        let map = SharedMapping::new((capacity as usize + 2) * 8)?;
        let mut off = 0;
        while off < map.len() {
            map.atomic_u64(off).store(0, Ordering::Relaxed);
            off += 4096;
        }
        Ok(Store(Arc::new(map)))
    }

    fn capacity(&self) -> u64 {
        (self.0.len() / 8) as u64 - 2
    }

    fn count(&self) -> &std::sync::atomic::AtomicU64 {
        self.0.atomic_u64(0)
    }

    fn gap_count(&self) -> &std::sync::atomic::AtomicU64 {
        self.0.atomic_u64(8)
    }

    fn slot(&self, seq: u64) -> &std::sync::atomic::AtomicU64 {
        self.0.atomic_u64((seq as usize + 1) * 8)
    }

    /// Messages the receiver counted (read after the last acknowledgement).
    fn received(&self) -> u64 {
        self.count().load(Ordering::Acquire)
    }

    /// Gaps or repeats in the sequence the receiver counted.
    fn gaps(&self) -> u64 {
        self.gap_count().load(Ordering::Relaxed)
    }

    /// Message `seq`'s raw latency, if the receiver timed it.
    fn latency(&self, seq: u64) -> Option<u64> {
        let v = self.slot(seq).load(Ordering::Relaxed);
        (v & WRITTEN != 0).then_some(v & !WRITTEN)
    }
}

/// What the receiving peer needs: the store and the clock base of the stamps.
#[derive(Clone)]
pub struct Receiver {
    /// Shared results.
    pub store: Store,
    /// `CLOCK_MONOTONIC` reading the stamps are relative to.
    pub base_ns: u64,
}

#[inline(always)]
fn header(seq: u64, stamp: u64) -> u64 {
    ((seq & 0xFFFF) << STAMP_BITS) | (stamp & STAMP_MASK)
}

#[inline(always)]
fn write_header(buf: &mut [u8], h: u64) {
    buf[..HEADER].copy_from_slice(&h.to_le_bytes());
}

#[inline(always)]
fn read_header(buf: &[u8]) -> u64 {
    let mut b = [0u8; HEADER];
    b.copy_from_slice(&buf[..HEADER]);
    u64::from_le_bytes(b)
}

/// The peer's role in a one-way figure: [`receive`] into `rx`.
pub fn receiver_role(rx: Receiver) -> PeerRole {
    PeerRole::new("one-way receiver", move |ep, serving| {
        let mut region = Region::for_peer(serving);
        receive(ep, &mut region, &rx, serving.fault)
    })
}

/// What the receiver writes where the header goes before each receive: all
/// ones, a stamp 78 hours after the base (beyond any figure's span), so a
/// receive that writes nothing is told from a message.
const POISON: u64 = u64::MAX;

/// The full sequence number nearest to `expected` whose low 16 bits are
/// `low`: where the receiver's numbering goes on after a gap or a repeat.
fn resync(expected: u64, low: u64) -> u64 {
    let delta = (low as u16).wrapping_sub(expected as u16) as i16;
    expected.wrapping_add_signed(delta as i64)
}

/// What the receiver has counted so far.
struct Counts {
    received: u64,
    gaps: u64,
    /// The number of the last message (the sender's, after a gap).
    seq: u64,
}

impl Counts {
    /// Counts a message with header `h` received at `now`: any gap or
    /// repeat in the sequence (then follows the sender's numbering), and
    /// stores its latency. A stamp after its receipt or a number beyond the
    /// plan is an error.
    #[inline(always)]
    fn count(&mut self, rx: &Receiver, h: u64, now: u64) -> Result<(), ChannelError> {
        let cap = rx.store.capacity();
        self.received += 1;
        self.seq += 1;
        if h >> STAMP_BITS != self.seq & 0xFFFF {
            self.gaps += 1;
            rx.store.gap_count().store(self.gaps, Ordering::Relaxed);
            self.seq = resync(self.seq, h >> STAMP_BITS);
        }
        let seq = self.seq;
        let sent_at = rx.base_ns + (h & STAMP_MASK);
        if now < sent_at || seq == 0 || seq > cap {
            return Err(ChannelError::Check(format!(
                "message {seq}: stamp {sent_at} ns is after its receipt at {now} ns, or outside the {cap} messages planned"
            )));
        }
        rx.store
            .slot(seq)
            .store(WRITTEN | (now - sent_at), Ordering::Relaxed);
        // Release: the counts and the latency are visible once the sender
        // has the acknowledgement that follows.
        rx.store.count().store(self.received, Ordering::Release);
        Ok(())
    }
}

/// The receiving peer's loop: receive, read the clock, count the message
/// ([`Counts::count`]), send the message back with its header complemented
/// as the acknowledgement; until stopped. A copying end's header is
/// poisoned before each receive, so that a receive that writes nothing is
/// told from a message; an end that lends is read and answered in place
/// and the message sent back as it is (the loan returned), and its number
/// must be the next (lent memory holds no poison). `fault` is the test-only
/// fault of [`crate::engine::os::peer::Fault`], applied to what is
/// acknowledged.
fn receive(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    rx: &Receiver,
    fault: Option<Fault>,
) -> Result<(), ChannelError> {
    let mut counts = Counts {
        received: 0,
        gaps: 0,
        seq: 0,
    };
    if ep.lends() {
        loop {
            let buf = ep.lend()?;
            let now = monotonic_ns();
            let h = read_header(buf);
            let next = counts.seq + 1;
            if h >> STAMP_BITS != next & 0xFFFF {
                return Err(ChannelError::NotLent { seq: next, got: h });
            }
            counts.count(rx, h, now)?;
            if let Some(f) = fault {
                inject(f, counts.received, buf)?;
            }
            echo_transform(buf, HEADER);
            ep.send_lent()?;
        }
    }
    loop {
        let buf = region.next();
        write_header(buf, POISON);
        ep.recv(buf)?;
        let now = monotonic_ns();
        let h = read_header(buf);
        if h == POISON {
            return Err(ChannelError::NothingReceived {
                seq: counts.seq + 1,
            });
        }
        counts.count(rx, h, now)?;
        if let Some(f) = fault {
            inject(f, counts.received, buf)?;
        }
        echo_transform(buf, HEADER);
        ep.send(buf)?;
    }
}

/// Sends message `seq` stamped now and waits for its acknowledgement: the
/// header complemented. The header the sender wrote is itself the poison of
/// its receive buffer (a receive that writes nothing leaves it, and it is
/// not its complement). An end that `lend`s is read in place: its
/// acknowledgement is the header's complement, the sender's own header
/// coming back is reported as such, and anything else was never reached
/// by the acknowledgement.
#[inline(always)]
fn one(
    ep: &mut dyn Endpoint,
    buf: &mut [u8],
    seq: u64,
    base: u64,
    lend: bool,
) -> Result<(), ChannelError> {
    let h = header(seq, monotonic_ns() - base);
    write_header(buf, h);
    ep.send(buf)?;
    if lend {
        let ack = ep.lend()?;
        check_lent(ack, !h, Some(h), seq, HEADER)?;
        return ep.release();
    }
    ep.recv(buf)?;
    let back = read_header(buf);
    if back != !h {
        return Err(bad_ack(back, h, seq));
    }
    Ok(())
}

/// Why the acknowledgement `back` of header `h` (message `seq`) is wrong.
#[cold]
fn bad_ack(back: u64, h: u64, seq: u64) -> ChannelError {
    let got = !back;
    if back == h {
        ChannelError::NotReturned { seq }
    } else if got >> STAMP_BITS != h >> STAMP_BITS {
        ChannelError::Sequence {
            expected: h >> STAMP_BITS,
            got: got >> STAMP_BITS,
        }
    } else {
        let (a, b) = (got.to_le_bytes(), h.to_le_bytes());
        let offset = (0..HEADER).find(|&i| a[i] != b[i]).unwrap_or(0);
        ChannelError::Corrupt { seq, offset }
    }
}

/// Buffers of the whole-content checks: the message as sent and the
/// acknowledgement expected.
struct Expect {
    sent: Vec<u8>,
    ack: Vec<u8>,
}

/// Messages whose whole content is compared on their way back, each receive
/// buffer first poisoned against the acknowledgement expected.
fn verify(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    expect: &mut Expect,
    seq0: u64,
    rounds: u64,
    base: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    let Expect { sent, ack } = expect;
    for seq in seq0..seq0 + rounds {
        let _wd = Watchdog::arm(timeout);
        let buf = region.next();
        fill_pattern(buf, seq);
        let h = header(seq, monotonic_ns() - base);
        write_header(buf, h);
        sent.copy_from_slice(buf);
        ack.copy_from_slice(buf);
        echo_transform(ack, HEADER);
        ep.send(buf)?;
        if ep.lends() {
            receive_lent_whole(ep, h, HEADER, ack, sent, seq)?;
            continue;
        }
        poison(buf, ack);
        ep.recv(buf)?;
        check_whole(buf, ack, sent, seq)?;
    }
    Ok(())
}

/// Sleeps to the absolute `deadline`; a signal only ends the sleep if the
/// engine says to stop. (The rate model's sender sleeps the same way.)
pub(in crate::engine::models) fn sleep_until(deadline: u64) -> Result<(), ChannelError> {
    loop {
        match timer::sleep_until_ns(deadline) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => interrupt::check()?,
            Err(e) => {
                return Err(ChannelError::Io {
                    op: "clock_nanosleep",
                    source: e,
                });
            }
        }
    }
}

/// Messages the receiver's store must hold for `plan` under `budget`.
pub fn capacity(plan: &OneWayPlan, budget: &Budget) -> u64 {
    plan.messages + 2 * budget.verify_rounds
}

/// Sends one figure's messages through `ep`, the client end of a channel
/// whose peer runs [`receive`] with `rx`, then builds the figure from what the
/// receiver stored.
pub fn measure(
    ep: &mut dyn Endpoint,
    size: usize,
    plan: &OneWayPlan,
    budget: &Budget,
    rx: &Receiver,
) -> Result<(Measurement, OneWayFacts), ChannelError> {
    if size < HEADER {
        return Err(ChannelError::Setup(format!(
            "a {size}-byte message cannot carry the {HEADER}-byte stamp"
        )));
    }
    let base = rx.base_ns;
    let timeout = budget.timeout;
    let mut region = Region::warm(size);
    let mut expect = Expect {
        sent: vec![0u8; size],
        ack: vec![0u8; size],
    };
    let verify_n = budget.verify_rounds;
    let lend = ep.lends();
    let mut seq = 1u64;
    verify(ep, &mut region, &mut expect, seq, verify_n, base, timeout)?;
    seq += verify_n;
    let first_timed = seq;

    let slack = SlackGuard::tight()?;
    let timer_slack_ns = sched::timer_slack().map_err(ChannelError::io("PR_GET_TIMERSLACK"))?;
    let mut time_bounded = false;
    match plan.interval {
        Some(interval) => {
            let step = interval.as_nanos() as u64;
            let mut deadline = monotonic_ns() + step;
            for _ in 0..plan.messages {
                let _wd = Watchdog::arm(interval + timeout);
                sleep_until(deadline)?;
                deadline += step;
                one(ep, region.next(), seq, base, lend)?;
                seq += 1;
            }
        }
        None => {
            let start = monotonic_ns();
            let bound = plan.max_time.as_nanos() as u64;
            let mut left = plan.messages;
            while left > 0 {
                let n = left.min(CHUNK);
                let _wd = Watchdog::arm(timeout);
                for _ in 0..n {
                    one(ep, region.next(), seq, base, lend)?;
                    seq += 1;
                }
                left -= n;
                if left > 0 && monotonic_ns() - start > bound {
                    time_bounded = true;
                    break;
                }
            }
        }
    }
    drop(slack);
    let sent = seq - first_timed;

    verify(ep, &mut region, &mut expect, seq, verify_n, base, timeout)?;
    seq += verify_n;

    // Every message was acknowledged, so the receiver has counted it: the
    // figure is of what it counted.
    let received_total = rx.store.received();
    let gaps = rx.store.gaps();
    let clock_ns = clock_overhead_ns();
    let latencies: Vec<f64> = (first_timed..first_timed + sent)
        .filter_map(|s| rx.store.latency(s))
        .map(|raw| raw as f64 - clock_ns)
        .collect();
    let timed_received = latencies.len() as u64;
    if gaps > 0 || received_total != seq - 1 || timed_received != sent {
        return Err(ChannelError::Check(format!(
            "the receiver counted {received_total} messages of the {} sent ({timed_received} of \
             the {sent} timed ones) and {gaps} gaps in their sequence",
            seq - 1
        )));
    }
    let (m, facts) = summarise(&latencies, sent, plan, clock_ns, 2 * verify_n, gaps)?;
    Ok((
        m,
        OneWayFacts {
            time_bounded,
            sender_timer_slack_ns: timer_slack_ns,
            sender_sched_policy: sched::policy_name(),
            ..facts
        },
    ))
}

/// The figure from the latencies of the timed messages the receiver
/// counted (clock read subtracted, never floored), of the `sent` timed
/// messages, and the gaps it counted.
pub fn summarise(
    latencies: &[f64],
    sent: u64,
    plan: &OneWayPlan,
    clock_ns: f64,
    verified: u64,
    gaps: u64,
) -> Result<(Measurement, OneWayFacts), ChannelError> {
    let window = plan.window.max(1);
    let windows: Vec<Window> = latencies
        .chunks(window as usize)
        .map(|w| Window {
            messages: w.len() as u64,
            min_ns: w.iter().copied().fold(f64::INFINITY, f64::min),
            max_ns: w.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean_ns: w.iter().sum::<f64>() / w.len() as f64,
        })
        .collect();
    let mut hist = LatencyHistogram::new();
    for &l in latencies {
        hist.record_ns(l);
    }
    let latency = hist
        .percentiles()
        .ok_or_else(|| ChannelError::Setup("no message was timed".into()))?;
    // Sporadic messages are independent samples; saturated ones are
    // summarised per window, as in the study.
    let samples_ns: Vec<f64> = if plan.interval.is_some() {
        latencies.to_vec()
    } else {
        windows.iter().map(|w| w.mean_ns).collect()
    };
    let summary = Summary::of(&samples_ns)
        .ok_or_else(|| ChannelError::Setup("no message was timed".into()))?;
    let n = latencies.len() as u64;
    let mean_ns = latencies.iter().sum::<f64>() / n as f64;
    Ok((
        Measurement {
            iterations: n,
            samples_ns,
            summary,
            // The message count is fixed by the plan, not by a precision target.
            precision: None,
            loop_overhead_ns: 0.0,
            clock_overhead_ns: clock_ns,
            latency,
            verified_round_trips: verified,
            histogram: None,
        },
        OneWayFacts {
            pacing: if plan.interval.is_some() {
                "sporadic"
            } else {
                "saturated"
            },
            interval_ns: plan.interval.map(|d| d.as_nanos() as u64),
            messages_sent: sent,
            messages_received: n,
            gaps,
            window,
            windows,
            mean_ns,
            time_bounded: false,
            sender_timer_slack_ns: 0,
            sender_sched_policy: "",
        },
    ))
}

#[cfg(test)]
mod tests;
