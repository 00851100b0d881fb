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
//! The receiver checks the sequence (no gap, no repeat: a mismatch fails the
//! figure), stores the raw latency in a shared array preallocated and touched
//! before the peer starts, and sends the message back unchanged as the
//! acknowledgement. The sender waits for it and checks that it is the message
//! it sent before it sends the next one: one message in flight. That works
//! for every mechanism, including those whose hand-off holds one message
//! (shared memory, signals, `process_vm_writev`) and those whose message is a
//! counter the sender checks on its way back (eventfd, sigqueue). Pacing:
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
use crate::engine::message::{clock_overhead_ns, fill_pattern};
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
    /// Smallest latency.
    pub min_ns: u64,
    /// Largest latency.
    pub max_ns: u64,
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
    /// Timed messages the receiver counted and timed; equal to `messages_sent`.
    pub messages_received: u64,
    /// Sequence gaps or repeats seen: always 0 in a result (a gap fails the figure).
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

/// Where the receiver leaves its count and each message's latency: a shared
/// mapping, so a forked receiver and the measuring process see the same
/// memory. Slot 0 holds the count; slot `i + 1` message `i`'s raw latency.
#[derive(Clone)]
pub struct Store(Arc<SharedMapping>);

impl Store {
    /// Room for `capacity` messages, every page touched now (before the peer
    /// forks) so that no page fault lands between two messages.
    pub fn new(capacity: u64) -> std::io::Result<Store> {
        let map = SharedMapping::new((capacity as usize + 1) * 8)?;
        let mut off = 0;
        while off < map.len() {
            map.atomic_u64(off).store(0, Ordering::Relaxed);
            off += 4096;
        }
        Ok(Store(Arc::new(map)))
    }

    fn capacity(&self) -> u64 {
        (self.0.len() / 8) as u64 - 1
    }

    fn received(&self) -> u64 {
        self.0.atomic_u64(0).load(Ordering::Acquire)
    }

    fn latency(&self, i: u64) -> u64 {
        self.0
            .atomic_u64((i as usize + 1) * 8)
            .load(Ordering::Relaxed)
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

/// The receiving peer's loop: receive, read the clock, check the sequence,
/// store the latency, send the message back as the acknowledgement; until
/// stopped. Any mismatch ends it with an error the engine reports. `fault`
/// is the test-only fault of [`crate::engine::os::peer::Fault`], applied to what is
/// acknowledged.
fn receive(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    rx: &Receiver,
    fault: Option<Fault>,
) -> Result<(), ChannelError> {
    let cap = rx.store.capacity();
    let count = rx.store.0.atomic_u64(0);
    let mut seq = 0u64;
    loop {
        let buf = region.next();
        ep.recv(buf)?;
        let now = monotonic_ns();
        seq += 1;
        let h = read_header(buf);
        if h >> STAMP_BITS != seq & 0xFFFF {
            return Err(ChannelError::Sequence {
                expected: seq & 0xFFFF,
                got: h >> STAMP_BITS,
            });
        }
        let sent_at = rx.base_ns + (h & STAMP_MASK);
        if now < sent_at || seq > cap {
            return Err(ChannelError::Check(format!(
                "message {seq}: stamp {sent_at} ns is after its receipt at {now} ns, or beyond the {cap} messages planned"
            )));
        }
        rx.store
            .0
            .atomic_u64(seq as usize * 8)
            .store(now - sent_at, Ordering::Relaxed);
        count.store(seq, Ordering::Release);
        if let Some(f) = fault {
            inject(f, seq, buf)?;
        }
        ep.send(buf)?;
    }
}

/// Sends message `seq` stamped now and waits for its acknowledgement.
#[inline(always)]
fn one(ep: &mut dyn Endpoint, buf: &mut [u8], seq: u64, base: u64) -> Result<(), ChannelError> {
    let h = header(seq, monotonic_ns() - base);
    write_header(buf, h);
    ep.send(buf)?;
    ep.recv(buf)?;
    let back = read_header(buf);
    if back != h {
        return Err(ChannelError::Sequence {
            expected: h >> STAMP_BITS,
            got: back >> STAMP_BITS,
        });
    }
    Ok(())
}

/// Messages whose whole content is compared on their way back.
fn verify(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    expected: &mut [u8],
    seq0: u64,
    rounds: u64,
    base: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    for seq in seq0..seq0 + rounds {
        let _wd = Watchdog::arm(timeout);
        let buf = region.next();
        fill_pattern(buf, seq);
        let h = header(seq, monotonic_ns() - base);
        write_header(buf, h);
        expected.copy_from_slice(buf);
        ep.send(buf)?;
        ep.recv(buf)?;
        if let Some(offset) = buf.iter().zip(expected.iter()).position(|(a, b)| a != b) {
            return Err(ChannelError::Corrupt { seq, offset });
        }
    }
    Ok(())
}

/// Sleeps to the absolute `deadline`; a signal only ends the sleep if the
/// engine says to stop.
fn sleep_until(deadline: u64) -> Result<(), ChannelError> {
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
    let mut expected = vec![0u8; size];
    let verify_n = budget.verify_rounds;
    let mut seq = 1u64;
    verify(ep, &mut region, &mut expected, seq, verify_n, base, timeout)?;
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
                one(ep, region.next(), seq, base)?;
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
                    one(ep, region.next(), seq, base)?;
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

    verify(ep, &mut region, &mut expected, seq, verify_n, base, timeout)?;
    seq += verify_n;

    // Every message was acknowledged, so the receiver has stored it.
    let received_total = rx.store.received();
    if received_total != seq - 1 {
        return Err(ChannelError::Check(format!(
            "the receiver counted {received_total} messages, {} were sent",
            seq - 1
        )));
    }
    let clock_ns = clock_overhead_ns();
    let latencies: Vec<u64> = (first_timed - 1..first_timed - 1 + sent)
        .map(|i| (rx.store.latency(i) as f64 - clock_ns).max(0.0).round() as u64)
        .collect();
    let (m, facts) = summarise(&latencies, plan, clock_ns, 2 * verify_n)?;
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

/// The figure from the timed messages' latencies (clock read subtracted).
fn summarise(
    latencies: &[u64],
    plan: &OneWayPlan,
    clock_ns: f64,
    verified: u64,
) -> Result<(Measurement, OneWayFacts), ChannelError> {
    let window = plan.window.max(1);
    let windows: Vec<Window> = latencies
        .chunks(window as usize)
        .map(|w| Window {
            messages: w.len() as u64,
            min_ns: w.iter().copied().min().unwrap_or(0),
            max_ns: w.iter().copied().max().unwrap_or(0),
            mean_ns: w.iter().sum::<u64>() as f64 / w.len() as f64,
        })
        .collect();
    let mut hist = LatencyHistogram::new();
    for &l in latencies {
        hist.record(l);
    }
    let latency = hist
        .percentiles()
        .ok_or_else(|| ChannelError::Setup("no message was timed".into()))?;
    // Sporadic messages are independent samples; saturated ones are
    // summarised per window, as in the study.
    let samples_ns: Vec<f64> = if plan.interval.is_some() {
        latencies.iter().map(|&l| l as f64).collect()
    } else {
        windows.iter().map(|w| w.mean_ns).collect()
    };
    let summary = Summary::of(&samples_ns)
        .ok_or_else(|| ChannelError::Setup("no message was timed".into()))?;
    let n = latencies.len() as u64;
    let mean_ns = latencies.iter().sum::<u64>() as f64 / n as f64;
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
            messages_sent: n,
            messages_received: n,
            gaps: 0,
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
mod tests {
    use super::*;

    fn plan(interval: Option<Duration>, messages: u64, window: u64) -> OneWayPlan {
        OneWayPlan {
            interval,
            messages,
            window,
            max_time: Duration::from_secs(5),
        }
    }

    #[test]
    fn header_round_trips_and_wraps_the_sequence() {
        let h = header(0x1_0005, 123_456);
        assert_eq!(h >> STAMP_BITS, 5);
        assert_eq!(h & STAMP_MASK, 123_456);
        let mut buf = [0u8; 8];
        write_header(&mut buf, h);
        assert_eq!(read_header(&buf), h);
        // Never zero (an eventfd cannot carry 0): sequence 1 upwards and a stamp.
        assert_ne!(header(1, 0), 0);
    }

    #[test]
    fn windows_cover_every_message_and_the_last_may_be_short() {
        let lat: Vec<u64> = (1..=25).collect();
        let (m, f) = summarise(&lat, &plan(None, 25, 10), 0.0, 4).unwrap();
        assert_eq!(f.windows.len(), 3);
        assert_eq!(f.windows[0].min_ns, 1);
        assert_eq!(f.windows[0].max_ns, 10);
        assert_eq!(f.windows[0].mean_ns, 5.5);
        assert_eq!(f.windows[2].messages, 5);
        assert_eq!(f.mean_ns, 13.0);
        assert_eq!(m.samples_ns.len(), 3);
        assert_eq!(m.latency.count, 25);
        assert_eq!(f.pacing, "saturated");
        let (m, f) =
            summarise(&lat, &plan(Some(Duration::from_millis(1)), 25, 10), 0.0, 4).unwrap();
        assert_eq!(m.samples_ns.len(), 25);
        assert_eq!(f.interval_ns, Some(1_000_000));
    }
}
