//! The sender of a rate figure: timed messages on a fixed schedule,
//! whatever the channel does, and the point built from what the receiver
//! stored.
//!
//! Inside the timed loop: the wait for the intended time (a sleep to the
//! wake-up margin before it where the gap allows, then spinning on the
//! clock), one store of the time it ended, writing the number and the send.
//! The watchdog is re-armed every [`CHUNK`] messages. No allocation,
//! formatting or locking.

use super::receiver::Receiver;
use super::{HEADER, Logged, Quantiles, RatePoint};
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::Budget;
use crate::engine::message::{clock_overhead_ns, fill_pattern, stamp};
use crate::engine::models::oneway::sleep_until;
use crate::engine::models::periodic::SlackGuard;
use crate::engine::models::region::Region;
use crate::engine::os::interrupt::{self, Watchdog};
use crate::stats::LatencyHistogram;
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use std::time::Duration;

/// Timed messages between two re-arms of the watchdog (and stop checks).
const CHUNK: u64 = 1024;

/// Sleeps whose lateness gives the wake-up margin.
const MARGIN_SLEEPS: usize = 21;

/// How long the first timed message is scheduled after the schedule is
/// drawn up: room for the first wait's set-up.
const LEAD_NS: u64 = 200_000;

/// This machine's wake-up margin, ns: the 90th percentile of how late a
/// 50 µs absolute `clock_nanosleep` returns (timer slack 1 ns), of
/// [`MARGIN_SLEEPS`] sleeps, measured once per figure before its first
/// point. A gap shorter than it is spun, never slept.
pub fn wake_margin_ns() -> Result<u64, ChannelError> {
    let _slack = SlackGuard::tight()?;
    let mut late: Vec<u64> = Vec::with_capacity(MARGIN_SLEEPS);
    for _ in 0..MARGIN_SLEEPS {
        let deadline = monotonic_ns() + 50_000;
        sleep_until(deadline)?;
        late.push(monotonic_ns().saturating_sub(deadline));
    }
    late.sort_unstable();
    Ok(late[late.len() * 9 / 10])
}

/// `CLOCK_REALTIME` now, ns since the epoch (where the interval logs place
/// a point; never used for a figure).
fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn cpu() -> Result<u64, ChannelError> {
    thread_cpu_ns().map_err(ChannelError::io("getrusage"))
}

/// Waits, within `timeout`, until the receiver has received message `seq`
/// (on a channel that keeps order, every message before it has arrived or
/// never will).
fn wait_for(rx: &Receiver, seq: u64, timeout: Duration) -> Result<(), ChannelError> {
    let deadline = monotonic_ns() + timeout.as_nanos() as u64;
    while rx.last_received() < seq {
        interrupt::check()?;
        if monotonic_ns() > deadline {
            return Err(ChannelError::Check(format!(
                "the receiver has not received message {seq} within {} ms (its last: {})",
                timeout.as_millis(),
                rx.last_received()
            )));
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    Ok(())
}

/// How long a lossy channel's receiver may take nothing before the timed
/// messages it has not taken are judged lost.
const QUIET: Duration = Duration::from_millis(50);

/// On a lossy channel, waits until the receiver has taken every timed
/// message that will arrive (up to `last`, or nothing new for [`QUIET`]):
/// past saturation its buffer is full, and a verify message sent into a
/// full buffer is dropped like any other, which would fail the figure for
/// a loss the point already counts. At most `timeout`: a receiver that
/// stopped is the verify's to report.
fn settle(rx: &Receiver, last: u64, timeout: Duration) -> Result<(), ChannelError> {
    let start = monotonic_ns();
    let (mut seen, mut since) = (rx.last_received(), start);
    while rx.last_received() < last {
        interrupt::check()?;
        let now = monotonic_ns();
        let l = rx.last_received();
        if l != seen {
            (seen, since) = (l, now);
        } else if now - since > QUIET.as_nanos() as u64 || now - start > timeout.as_nanos() as u64 {
            break;
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    Ok(())
}

/// Sends the whole-content messages `first..first + n`, one at a time,
/// each received before the next: nothing else is in flight, so a lossy
/// channel has no reason to drop them.
fn verify(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    rx: &Receiver,
    first: u64,
    n: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    for k in 0..n {
        let buf = region.next();
        fill_pattern(buf, first + k);
        {
            // The send alone: the wait after it keeps its own deadline.
            let _wd = Watchdog::arm(timeout);
            ep.send(buf)?;
        }
        wait_for(rx, first + k, timeout)?;
    }
    Ok(())
}

/// The intended send time of timed message `i` (from 0): `t0 + i/R`,
/// computed from `i` each time so that no error accumulates.
#[inline(always)]
fn intended(t0: u64, period_ns: f64, i: u64) -> u64 {
    t0 + (i as f64 * period_ns) as u64
}

/// The timed messages: message `i` at its intended time, or at once if
/// that time has passed; `sent_at[i]` gets the clock read that ended its
/// wait. `sleep`: whether the gap is long enough to sleep part of.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn timed_loop(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    t0: u64,
    period_ns: f64,
    first_seq: u64,
    sent_at: &mut [u64],
    sleep: bool,
    margin_ns: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    let n = sent_at.len() as u64;
    let mut i = 0u64;
    while i < n {
        let end = (i + CHUNK).min(n);
        let span = Duration::from_nanos((((end - i) as f64) * period_ns) as u64);
        let _wd = Watchdog::arm(timeout + span);
        interrupt::check()?;
        while i < end {
            let due = intended(t0, period_ns, i);
            let mut now = monotonic_ns();
            if sleep && due > now + margin_ns {
                sleep_until(due - margin_ns)?;
                now = monotonic_ns();
            }
            while now < due {
                std::hint::spin_loop();
                now = monotonic_ns();
            }
            sent_at[i as usize] = now;
            let buf = region.next();
            stamp(buf, first_seq + i, HEADER);
            ep.send(buf)?;
            i += 1;
        }
    }
    Ok(())
}

/// Sends one point: `messages` timed messages of `size` bytes at `rate`
/// msg/s through `ep`, whose peer runs [`super::receiver_role`] with `rx`,
/// between `budget.verify_rounds` whole-content messages before and after;
/// the point and the latencies from the intended send (ns, one clock read
/// subtracted) of every timed message received.
#[allow(clippy::too_many_arguments)]
pub fn send_point(
    ep: &mut dyn Endpoint,
    size: usize,
    rate: f64,
    messages: u64,
    rx: &Receiver,
    budget: &Budget,
    margin_ns: u64,
    round: usize,
) -> Result<(RatePoint, Vec<f64>), ChannelError> {
    if size < HEADER {
        return Err(ChannelError::Setup(format!(
            "a {size}-byte message cannot carry the {HEADER}-byte sequence number"
        )));
    }
    if !(rate > 0.0 && rate.is_finite()) || messages == 0 || messages != rx.timed {
        return Err(ChannelError::Setup(format!(
            "a point of {messages} messages at {rate} msg/s for a receiver planned for {}",
            rx.timed
        )));
    }
    let timeout = budget.timeout;
    let v = rx.verify;
    let mut region = Region::warm(size);
    // Touched now, so no page fault lands in the timed loop.
    let mut sent_at = vec![1u64; messages as usize];
    verify(ep, &mut region, rx, 1, v, timeout)?;

    let period_ns = 1e9 / rate;
    let sleep = period_ns > margin_ns as f64;
    let slack = SlackGuard::tight()?;
    let cpu0 = cpu()?;
    let t0 = monotonic_ns() + LEAD_NS;
    let start_unix_ns = realtime_ns() + LEAD_NS;
    timed_loop(
        ep,
        &mut region,
        t0,
        period_ns,
        rx.timed_seq(0),
        &mut sent_at,
        sleep,
        margin_ns,
        timeout,
    )?;
    let sender_cpu = cpu()? - cpu0;
    drop(slack);

    // The verify messages after follow the timed ones on an ordered channel:
    // once they are received, every timed message that will arrive has.
    if rx.lossy {
        settle(rx, rx.timed_seq(messages - 1), timeout)?;
    }
    verify(ep, &mut region, rx, v + messages + 1, v, timeout)?;

    let clock_ns = clock_overhead_ns();
    let period = period_ns as u64;
    let mut latency = LatencyHistogram::new();
    let mut service = LatencyHistogram::new();
    let mut latencies = Vec::with_capacity(messages as usize);
    let (mut late, mut behind_max, mut last_arrival) = (0u64, 0u64, t0);
    for i in 0..messages {
        let due = intended(t0, period_ns, i);
        let behind = sent_at[i as usize] - due;
        behind_max = behind_max.max(behind);
        late += u64::from(behind > period);
        if let Some(a) = rx.arrival(i) {
            let from_due = a as f64 - due as f64 - clock_ns;
            latency.record_ns(from_due);
            service.record_ns(a as f64 - sent_at[i as usize] as f64 - clock_ns);
            latencies.push(from_due);
            last_arrival = last_arrival.max(a);
        }
    }
    let received = latencies.len() as u64;
    if received != rx.timed_received() || (!rx.lossy && received != messages) {
        return Err(ChannelError::Check(format!(
            "the receiver counted {} timed messages and stored {received} of the {messages} sent",
            rx.timed_received()
        )));
    }
    let span_s = (last_arrival.saturating_sub(t0)) as f64 / 1e9;
    let point = RatePoint {
        round,
        offered_rate: rate,
        achieved_rate: if span_s > 0.0 {
            received as f64 / span_s
        } else {
            0.0
        },
        sent: messages,
        received,
        lost: messages - received,
        late,
        behind_max_ns: behind_max,
        latency_ns: quantiles(&latency),
        service_ns: quantiles(&service),
        sender_cpu_ns: sender_cpu as f64 / messages as f64,
        receiver_cpu_ns: if received > 0 {
            rx.cpu_ns() as f64 / received as f64
        } else {
            0.0
        },
        verified: 2 * v,
        clock_overhead_ns: clock_ns,
        logged: Logged {
            start_unix_ns,
            span_ns: last_arrival.saturating_sub(t0),
            latency: latency.encode(),
            service: service.encode(),
        },
    };
    Ok((point, latencies))
}

/// The percentiles of `h` (all 0 when it is empty: no message arrived).
fn quantiles(h: &LatencyHistogram) -> Quantiles {
    h.percentiles()
        .map(|p| Quantiles {
            p50: p.p50 as f64,
            p90: p.p90 as f64,
            p99: p.p99 as f64,
            p999: p.p999 as f64,
            max: p.max as f64,
            mean: p.mean,
        })
        .unwrap_or_default()
}
