//! The ping-pong timing model (the QNX study's echo method).
//!
//! One iteration is a round trip: the client stamps a sequence number into the
//! message, sends it, waits for the echo and checks the number. Then
//!
//! ```text
//! one-way = (batch time / iterations − loop overhead per round trip) / 2
//! ```
//!
//! which is the study's `(time − 2 × loop overhead) / (2 × iterations)` with the
//! client's and the server's loop overhead both counted. The loop overhead is
//! the same loop run against an endpoint that does nothing. Nothing inside a
//! timed batch allocates, logs, formats or locks.

use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::Achieved;
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::{check_seq, clock_overhead_ns, fill_pattern, seq_len, stamp};
use crate::engine::models::calibrate::{iterations_for, warm_up};
use crate::engine::models::region::Region;
use crate::engine::models::sampling;
use crate::engine::os::interrupt::Watchdog;
use crate::engine::os::peer::{Fault, PeerRole, inject};
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;
use std::hint::black_box;
use std::time::Duration;

/// An endpoint that does nothing: the loop overhead is timed against it.
struct NullEndpoint;

impl Endpoint for NullEndpoint {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Ok(())
    }
    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        Ok(())
    }
}

#[inline(always)]
fn round_trip<const SELF_LOOP: bool>(
    ep: &mut dyn Endpoint,
    buf: &mut [u8],
) -> Result<(), ChannelError> {
    ep.send(buf)?;
    ep.recv(buf)?;
    if SELF_LOOP {
        // The process plays the echo server itself: a second transfer back.
        ep.send(buf)?;
        ep.recv(buf)?;
    }
    Ok(())
}

/// The peer's role in a ping-pong figure: [`echo`].
pub fn echo_role() -> PeerRole {
    PeerRole::new("echo", |ep, serving| {
        let mut region = Region::for_peer(serving);
        echo(ep, &mut region, serving.fault)
    })
}

/// The echo loop: receive a message, send it back, until told to stop.
fn echo(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    fault: Option<Fault>,
) -> Result<(), ChannelError> {
    let mut count = 0u64;
    loop {
        let buf = region.next();
        ep.recv(buf)?;
        if let Some(f) = fault {
            count += 1;
            inject(f, count, buf)?;
        }
        ep.send(buf)?;
    }
}

/// Times `n` round trips; returns elapsed ns.
#[inline(never)]
fn batch<const SELF_LOOP: bool>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    seq0: u64,
    n: u64,
) -> Result<u64, ChannelError> {
    let k = seq_len(region.next());
    let start = monotonic_ns();
    for seq in seq0..seq0 + n {
        let buf = region.next();
        stamp(buf, seq, k);
        round_trip::<SELF_LOOP>(ep, buf)?;
        check_seq(buf, seq, k)?;
    }
    Ok(monotonic_ns() - start)
}

/// Times every round trip: `stamps[i]` is the clock after round trip `i`
/// (`stamps[0]` before the first), so each round trip costs one clock read.
#[inline(never)]
fn timestamped<const SELF_LOOP: bool>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    seq0: u64,
    stamps: &mut [u64],
) -> Result<(), ChannelError> {
    let k = seq_len(region.next());
    let (first, rest) = stamps.split_first_mut().expect("at least one stamp");
    *first = monotonic_ns();
    for (seq, slot) in (seq0 + 1..).zip(rest.iter_mut()) {
        let buf = region.next();
        stamp(buf, seq, k);
        round_trip::<SELF_LOOP>(ep, buf)?;
        check_seq(buf, seq, k)?;
        *slot = monotonic_ns();
    }
    Ok(())
}

/// Round trips with every byte compared against what was sent; each round
/// trip has `timeout` to come back.
fn verify<const SELF_LOOP: bool>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    expected: &mut [u8],
    seq0: u64,
    rounds: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    for seq in seq0..seq0 + rounds {
        let _wd = Watchdog::arm(timeout);
        let buf = region.next();
        fill_pattern(buf, seq);
        expected.copy_from_slice(buf);
        round_trip::<SELF_LOOP>(ep, buf)?;
        if let Some(offset) = buf.iter().zip(expected.iter()).position(|(a, b)| a != b) {
            return Err(ChannelError::Corrupt { seq, offset });
        }
    }
    Ok(())
}

/// Overhead of one iteration of the timed loop with nothing to talk to: the
/// minimum of several long runs (interference only ever adds time).
fn null_iteration_ns<const SELF_LOOP: bool>(region: &mut Region) -> Result<f64, ChannelError> {
    let mut null = NullEndpoint;
    let ep: &mut dyn Endpoint = black_box(&mut null);
    const N: u64 = 100_000;
    let mut best = u64::MAX;
    for _ in 0..7 {
        best = best.min(batch::<SELF_LOOP>(ep, region, 1, N)?);
    }
    Ok(best as f64 / N as f64)
}

/// Measures one figure through `ep`, the client end of a ready channel.
/// With `cold_region`, each message uses the next slot of a region of that
/// many bytes instead of one buffer (see [`Region::cold`]).
pub fn measure(
    ep: &mut dyn Endpoint,
    size: usize,
    self_loop: bool,
    budget: &Budget,
    cold_region: Option<usize>,
) -> Result<Measurement, ChannelError> {
    let mut figure = Prepared::new(ep, size, self_loop, budget, cold_region)?;
    let (samples, precision) =
        sampling::take(budget.samples, &budget.precision, || figure.sample(ep))?;
    figure.finish(ep, samples, precision)
}

/// One figure between its warm-up and its samples: content checked, the
/// iteration count calibrated and the overheads measured, so that its
/// samples can be taken now or interleaved with other figures' (a sweep).
pub struct Prepared {
    self_loop: bool,
    budget: Budget,
    buf: Region,
    expected: Vec<u8>,
    seq: u64,
    iterations: u64,
    /// Loop overhead per round trip, ns.
    overhead_rt: f64,
    clock_ns: f64,
    /// Timestamps of the histogram pass, allocated and touched beforehand.
    stamps: Vec<u64>,
}

/// `f::<true>` or `f::<false>` by a runtime flag, outside any timed loop.
macro_rules! by_loop {
    ($self_loop:expr, $f:ident($($arg:expr),*)) => {
        if $self_loop { $f::<true>($($arg),*) } else { $f::<false>($($arg),*) }
    };
}

impl Prepared {
    /// Checks content, warms up and calibrates through `ep`.
    pub fn new(
        ep: &mut dyn Endpoint,
        size: usize,
        self_loop: bool,
        budget: &Budget,
        cold_region: Option<usize>,
    ) -> Result<Prepared, ChannelError> {
        let region_of = || match cold_region {
            Some(bytes) => Region::cold(size, bytes),
            None => Region::warm(size),
        };
        let mut buf = region_of();
        let mut expected = vec![0u8; size];
        let mut seq = 1u64;
        let timeout = budget.timeout;

        // Content check first: a broken channel never gets as far as a figure.
        by_loop!(
            self_loop,
            verify(
                ep,
                &mut buf,
                &mut expected,
                seq,
                budget.verify_rounds,
                timeout
            )
        )?;
        seq += budget.verify_rounds;

        // Warm-up and calibration: double the batch until it is long enough to
        // time, keep going until the warm-up time is spent.
        let per_iter_ns = {
            let _wd = Watchdog::arm(budget.warmup * 3 + timeout);
            // Blocking calls already see stop requests: nothing to do between batches.
            let (per, _) = warm_up(
                budget.warmup.as_nanos() as u64,
                || Ok(()),
                |n| by_loop!(self_loop, batch(ep, &mut buf, seq, n)).inspect(|_| seq += n),
            )?;
            per
        };
        let iterations = iterations_for(budget.sample_time.as_nanos() as u64, per_iter_ns);

        // The null loop walks a region of the same kind, so moving the slot is
        // part of the overhead subtracted (not of the figure).
        let null_ns = by_loop!(self_loop, null_iteration_ns(&mut region_of()))?;
        // Per round trip: the client's loop and the server's (the same shape);
        // a self-loop has one loop doing both halves.
        let overhead_rt = if self_loop { null_ns } else { 2.0 * null_ns };

        // The timestamp array is allocated and written now: a zeroed allocation
        // maps its pages lazily, and first-touch page faults would otherwise land
        // inside the histogram pass and inflate its tail.
        let hist_n = ((budget.histogram_time.as_nanos() as f64 / per_iter_ns.max(1.0)) as usize)
            .clamp(1, 1_000_000);
        Ok(Prepared {
            self_loop,
            budget: *budget,
            buf,
            expected,
            seq,
            iterations,
            overhead_rt,
            clock_ns: clock_overhead_ns(),
            stamps: vec![u64::MAX; hist_n + 1],
        })
    }

    /// Round trips, untimed, to bring this figure's channel, peer and buffers
    /// back into the caches after other figures ran: 1/32 of a sample, at
    /// least 4 (a handful of round trips refills them; the rest is margin).
    pub fn rewarm(&mut self, ep: &mut dyn Endpoint) -> Result<(), ChannelError> {
        let n = (self.iterations / 32).max(4);
        let _wd = Watchdog::arm(self.budget.sample_time + self.budget.timeout);
        by_loop!(self.self_loop, batch(ep, &mut self.buf, self.seq, n))?;
        self.seq += n;
        Ok(())
    }

    /// Takes one sample: the one-way time of a calibrated batch, ns.
    pub fn sample(&mut self, ep: &mut dyn Endpoint) -> Result<f64, ChannelError> {
        let _wd = Watchdog::arm(self.budget.sample_time * 4 + self.budget.timeout);
        let n = self.iterations;
        let t = by_loop!(self.self_loop, batch(ep, &mut self.buf, self.seq, n))?;
        self.seq += n;
        Ok((t as f64 / n as f64 - self.overhead_rt) / 2.0)
    }

    /// Times single round trips for the histogram, checks content again and
    /// makes the figure of `samples_ns`.
    pub fn finish(
        mut self,
        ep: &mut dyn Endpoint,
        samples_ns: Vec<f64>,
        precision: Option<Achieved>,
    ) -> Result<Measurement, ChannelError> {
        let budget = self.budget;
        {
            let _wd = Watchdog::arm(budget.histogram_time * 4 + budget.timeout);
            by_loop!(
                self.self_loop,
                timestamped(ep, &mut self.buf, self.seq, &mut self.stamps)
            )?;
            self.seq += (self.stamps.len() - 1) as u64;
        }
        let mut hist = LatencyHistogram::new();
        for w in self.stamps.windows(2) {
            let one_way = ((w[1] - w[0]) as f64 - self.clock_ns - self.overhead_rt) / 2.0;
            hist.record_ns(one_way);
        }

        by_loop!(
            self.self_loop,
            verify(
                ep,
                &mut self.buf,
                &mut self.expected,
                self.seq,
                budget.verify_rounds,
                budget.timeout
            )
        )?;

        let summary = Summary::of(&samples_ns)
            .ok_or_else(|| ChannelError::Setup("no samples were taken".into()))?;
        let latency = hist
            .percentiles()
            .ok_or_else(|| ChannelError::Setup("no round trip was timed".into()))?;
        Ok(Measurement {
            iterations: self.iterations,
            samples_ns,
            summary,
            precision,
            loop_overhead_ns: self.overhead_rt / 2.0,
            clock_overhead_ns: self.clock_ns,
            latency,
            verified_round_trips: 2 * budget.verify_rounds,
            histogram: Some(hist),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback endpoint: what is sent is what is received.
    struct Loopback(Vec<u8>);
    impl Endpoint for Loopback {
        fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
            self.0.clear();
            self.0.extend_from_slice(msg);
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
            buf.copy_from_slice(&self.0);
            Ok(())
        }
    }

    /// Echoes a stale message: a channel that lost the latest one.
    struct Stale(Vec<u8>);
    impl Endpoint for Stale {
        fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
            if self.0.is_empty() {
                self.0.extend_from_slice(msg);
            }
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
            buf.copy_from_slice(&self.0);
            Ok(())
        }
    }

    #[test]
    fn measures_a_loopback_consistently() {
        let m = measure(&mut Loopback(Vec::new()), 64, false, &Budget::tiny(), None).unwrap();
        assert_eq!(m.samples_ns.len(), 3);
        assert!(m.iterations >= 1);
        assert!(m.loop_overhead_ns >= 0.0 && m.clock_overhead_ns >= 0.0);
        let l = m.latency;
        assert!(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max);
        assert_eq!(m.verified_round_trips, 8);
    }

    #[test]
    fn cold_buffers_measure_a_loopback_too() {
        let m = measure(
            &mut Loopback(Vec::new()),
            4096,
            false,
            &Budget::tiny(),
            Some(1 << 20),
        )
        .unwrap();
        assert!(m.latency.min <= m.latency.max && m.iterations >= 1);
    }

    #[test]
    fn stale_echo_is_caught() {
        let err = measure(&mut Stale(Vec::new()), 64, false, &Budget::tiny(), None).unwrap_err();
        assert!(matches!(err, ChannelError::Corrupt { .. }), "{err}");
        let err = measure(&mut Stale(Vec::new()), 1, true, &Budget::tiny(), None).unwrap_err();
        assert!(matches!(err, ChannelError::Corrupt { .. }), "{err}");
        // Cold buffers: every message in a different slot, same checks.
        let err = measure(
            &mut Stale(Vec::new()),
            64,
            false,
            &Budget::tiny(),
            Some(1 << 20),
        )
        .unwrap_err();
        assert!(matches!(err, ChannelError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn pattern_differs_between_messages() {
        let (mut a, mut b) = (vec![0u8; 300], vec![0u8; 300]);
        fill_pattern(&mut a, 7);
        fill_pattern(&mut b, 8);
        assert_ne!(a[..8], b[..8]);
        assert_ne!(a[8..], b[8..]);
    }
}
