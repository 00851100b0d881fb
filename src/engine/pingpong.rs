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

use super::calibrate::{iterations_for, warm_up};
use super::channel::{ChannelError, Endpoint};
use super::interrupt::Watchdog;
use super::region::Region;
use super::sampling::{self, Achieved, Precision};
use crate::stats::{LatencyHistogram, Percentiles, Summary};
use crate::sys::clock::monotonic_ns;
use std::hint::black_box;
use std::time::Duration;

/// How long each phase of one figure runs.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Budget {
    /// Warm-up, also used to calibrate the iteration count.
    #[serde(serialize_with = "ser_ms")]
    pub warmup: Duration,
    /// Target duration of one sample.
    #[serde(serialize_with = "ser_ms")]
    pub sample_time: Duration,
    /// Samples every figure takes at least.
    pub samples: usize,
    /// Further samples until the median is known this precisely, within a time limit.
    pub precision: Precision,
    /// Duration of the per-round-trip (histogram) pass.
    #[serde(serialize_with = "ser_ms")]
    pub histogram_time: Duration,
    /// Round trips whose whole content is checked, before and after timing.
    pub verify_rounds: u64,
    /// How long the peer may take beyond a phase's expected duration.
    #[serde(serialize_with = "ser_ms")]
    pub timeout: Duration,
}

#[cfg(test)]
impl Budget {
    /// A budget of a few milliseconds and a fixed count of 3 samples, for
    /// unit tests of the timing models.
    pub(crate) fn tiny() -> Budget {
        Budget {
            warmup: Duration::from_millis(2),
            sample_time: Duration::from_millis(1),
            samples: 3,
            // No time for further samples: the count stays 3.
            precision: super::sampling::Precision {
                target: 0.02,
                max_time: Duration::ZERO,
            },
            histogram_time: Duration::from_millis(1),
            verify_rounds: 4,
            timeout: Duration::from_secs(5),
        }
    }
}

pub(super) fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// Everything measured for one mechanism at one size.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Round trips per sample (calibrated).
    pub iterations: u64,
    /// One-way time of each sample, overhead subtracted, in ns.
    pub samples_ns: Vec<f64>,
    /// Summary of `samples_ns`.
    pub summary: Summary,
    /// The interval of the median and whether it met the precision target.
    pub precision: Option<Achieved>,
    /// Loop overhead subtracted from every one-way figure, in ns.
    pub loop_overhead_ns: f64,
    /// Cost of one clock read, subtracted from every individually timed round trip.
    pub clock_overhead_ns: f64,
    /// Distribution of individual one-way times.
    pub latency: Percentiles,
    /// Round trips whose whole content was compared.
    pub verified_round_trips: u64,
    /// The individual times behind `latency`, kept where figures of several
    /// passes are merged (ping-pong and operations); `None` elsewhere.
    pub histogram: Option<LatencyHistogram>,
}

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

/// Bytes of the sequence number carried at the start of each message.
#[inline(always)]
pub(super) fn seq_len(buf: &[u8]) -> usize {
    buf.len().min(8)
}

#[inline(always)]
pub(super) fn stamp(buf: &mut [u8], seq: u64, k: usize) {
    buf[..k].copy_from_slice(&seq.to_le_bytes()[..k]);
}

#[inline(always)]
pub(super) fn check_seq(buf: &[u8], seq: u64, k: usize) -> Result<(), ChannelError> {
    let want = seq.to_le_bytes();
    if buf[..k] != want[..k] {
        let offset = (0..k).find(|&i| buf[i] != want[i]).unwrap_or(0);
        return Err(ChannelError::Corrupt { seq, offset });
    }
    Ok(())
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

/// Fills a message with a pattern unique to `seq`, sequence number first.
pub fn fill_pattern(buf: &mut [u8], seq: u64) {
    let k = seq_len(buf);
    let salt = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
    for (i, b) in buf.iter_mut().enumerate().skip(k) {
        *b = salt[i % 8] ^ (i as u8).wrapping_mul(31) ^ ((i >> 8) as u8);
    }
    stamp(buf, seq, k);
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

/// Cost of one clock read: median of back-to-back reads.
pub(super) fn clock_overhead_ns() -> f64 {
    let mut deltas: Vec<f64> = (0..2001)
        .map(|_| {
            let a = monotonic_ns();
            let b = monotonic_ns();
            (b - a) as f64
        })
        .collect();
    deltas.sort_by(f64::total_cmp);
    deltas[deltas.len() / 2]
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
        Ok(((t as f64 / n as f64 - self.overhead_rt) / 2.0).max(0.0))
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
            hist.record(one_way.max(0.0).round() as u64);
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
