//! The ping-pong timing model (the QNX study's echo method).
//!
//! One iteration is a round trip: the client stamps a sequence number into the
//! message, sends it, waits for the echo and checks it. The echo is not the
//! message unchanged: the server complements the number's bytes
//! ([`echo_transform`]) and counts what it returns, so that neither a receive
//! that writes nothing nor a channel that hands the client its own message
//! can pass for a peer (see [`crate::engine::message`]). Then
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
use crate::engine::message::{
    check_echo, check_lent, check_whole, clock_overhead_ns, echo_transform, fill_pattern, poison,
    poison_seq, receive_lent_whole, seq_len, stamp, still_poisoned,
};
use crate::engine::models::calibrate::{iterations_for, warm_up};
use crate::engine::models::region::Region;
use crate::engine::models::sampling;
use crate::engine::os::interrupt::{self, Watchdog};
use crate::engine::os::peer::{BoardArea, Fault, PeerRole, inject};
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// An endpoint that does only what the echo does to a message (its receive
/// applies [`echo_transform`], so the loop's check passes): the loop
/// overhead of the copying paths is timed against it.
struct NullEndpoint;

impl Endpoint for NullEndpoint {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Ok(())
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        echo_transform(buf, seq_len(buf));
        Ok(())
    }
}

/// [`NullEndpoint`] for the lending path: its send leaves the echo's
/// answer to the number in a reply it then lends (one 8-byte load and
/// store, as the copying null's receive makes).
struct NullLender {
    reply: Vec<u8>,
}

impl Endpoint for NullLender {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let k = seq_len(msg);
        for (r, m) in self.reply[..k].iter_mut().zip(msg) {
            *r = !*m;
        }
        Ok(())
    }
    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup("the null lender only lends".into()))
    }
    fn lends(&self) -> bool {
        true
    }
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        Ok(&mut self.reply)
    }
    fn release(&mut self) -> Result<(), ChannelError> {
        Ok(())
    }
}

/// How the client's end receives a reply, as a const parameter of the
/// timed loops (no branch on it inside them): copied into the engine's
/// buffer ([`COPY`]), copied as its own echo's ([`SELF_LOOP`]: the process
/// plays the echo server itself), or lent where it lies ([`LEND`]).
const COPY: u8 = 0;
/// See [`COPY`].
const SELF_LOOP: u8 = 1;
/// See [`COPY`].
const LEND: u8 = 2;

/// Which of [`COPY`], [`SELF_LOOP`] and [`LEND`] an end takes.
fn path_of(ep: &dyn Endpoint, self_loop: bool) -> u8 {
    if self_loop {
        SELF_LOOP
    } else if ep.lends() {
        LEND
    } else {
        COPY
    }
}

/// One round trip of message `seq` (its number stamped in `buf`'s first
/// `k` bytes), its reply's number checked.
#[inline(always)]
fn round_trip<const P: u8>(
    ep: &mut dyn Endpoint,
    buf: &mut [u8],
    seq: u64,
    k: usize,
) -> Result<(), ChannelError> {
    // The stamp is also the poison: it is the complement of the reply
    // expected, so a receive that writes nothing fails the check.
    stamp(buf, seq, k);
    ep.send(buf)?;
    if P == LEND {
        let reply = ep.lend()?;
        check_lent(reply, !seq, Some(seq), seq, k)?;
        return ep.release();
    }
    ep.recv(buf)?;
    if P == SELF_LOOP {
        // The process plays the echo server itself: the echo's transform and
        // a second transfer back.
        echo_transform(buf, k);
        ep.send(buf)?;
        ep.recv(buf)?;
    }
    check_echo(buf, seq, k)
}

/// The word of the peer's board where the echo counts the messages it
/// returned (zeroed with the control page, before the peer starts).
pub fn echo_count<'a>(board: BoardArea<'a>) -> &'a AtomicU64 {
    board.map.atomic_u64(board.offset)
}

/// The peer's role in a ping-pong figure: [`echo`].
pub fn echo_role() -> PeerRole {
    PeerRole::new("echo", |ep, serving| {
        let mut region = Region::for_peer(serving);
        echo(ep, &mut region, serving.fault, echo_count(serving.board))
    })
}

/// The echo loop: receive a message, complement its sequence number's
/// bytes, count it in `echoed` and send it back, until told to stop. The
/// client numbers its messages 1, 2, … one per round trip, so the number's
/// bytes are poisoned against the next one before each receive: a receive
/// that writes nothing ends the loop with that error.
pub fn echo(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    fault: Option<Fault>,
    echoed: &AtomicU64,
) -> Result<(), ChannelError> {
    if ep.lends() {
        return echo_lent(ep, fault, echoed);
    }
    let mut count = 0u64;
    loop {
        let buf = region.next();
        let k = seq_len(buf);
        poison_seq(buf, count + 1, k);
        ep.recv(buf)?;
        if still_poisoned(buf, count + 1, k) {
            return Err(ChannelError::NothingReceived { seq: count + 1 });
        }
        count += 1;
        if let Some(f) = fault {
            inject(f, count, buf)?;
        }
        echo_transform(buf, k);
        // Counted before it is sent: the client reads the count after its
        // last receive, which the send happens before.
        echoed.store(count, Ordering::Release);
        ep.send(buf)?;
    }
}

/// [`echo`] through an end that lends: the message is read and answered
/// where it lies and sent back in place (the loan returned). Its number
/// must be the next one: lent memory has no poison to find untouched.
fn echo_lent(
    ep: &mut dyn Endpoint,
    fault: Option<Fault>,
    echoed: &AtomicU64,
) -> Result<(), ChannelError> {
    let mut count = 0u64;
    loop {
        let msg = ep.lend()?;
        count += 1;
        let k = seq_len(msg);
        check_lent(msg, count, None, count, k)?;
        if let Some(f) = fault {
            inject(f, count, msg)?;
        }
        echo_transform(msg, k);
        echoed.store(count, Ordering::Release);
        ep.send_lent()?;
    }
}

/// Times `n` round trips; returns elapsed ns.
#[inline(never)]
fn batch<const P: u8>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    seq0: u64,
    n: u64,
) -> Result<u64, ChannelError> {
    let k = seq_len(region.next());
    let start = monotonic_ns();
    for seq in seq0..seq0 + n {
        round_trip::<P>(ep, region.next(), seq, k)?;
    }
    Ok(monotonic_ns() - start)
}

/// Times every round trip: `stamps[i]` is the clock after round trip `i`
/// (`stamps[0]` before the first), so each round trip costs one clock read.
#[inline(never)]
fn timestamped<const P: u8>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    seq0: u64,
    stamps: &mut [u64],
) -> Result<(), ChannelError> {
    let k = seq_len(region.next());
    let (first, rest) = stamps.split_first_mut().expect("at least one stamp");
    *first = monotonic_ns();
    for (seq, slot) in (seq0..).zip(rest.iter_mut()) {
        round_trip::<P>(ep, region.next(), seq, k)?;
        *slot = monotonic_ns();
    }
    Ok(())
}

/// Buffers of the whole-content checks: the message as sent and the reply
/// expected.
struct Expect {
    sent: Vec<u8>,
    reply: Vec<u8>,
}

impl Expect {
    fn new(size: usize) -> Expect {
        Expect {
            sent: vec![0u8; size],
            reply: vec![0u8; size],
        }
    }
}

/// Round trips with every byte compared against the reply expected (the
/// message sent, its sequence number complemented by the echo); each
/// receive buffer is first poisoned against what it must receive, so a
/// byte the receive does not write fails. Each round trip has `timeout` to
/// come back.
fn verify<const P: u8>(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    expect: &mut Expect,
    seq0: u64,
    rounds: u64,
    timeout: Duration,
) -> Result<(), ChannelError> {
    let Expect { sent, reply } = expect;
    for seq in seq0..seq0 + rounds {
        let _wd = Watchdog::arm(timeout);
        let buf = region.next();
        let k = seq_len(buf);
        fill_pattern(buf, seq);
        sent.copy_from_slice(buf);
        reply.copy_from_slice(buf);
        echo_transform(reply, k);
        ep.send(buf)?;
        if P == LEND {
            receive_lent_whole(ep, seq, k, reply, sent, seq)?;
            continue;
        }
        if P == SELF_LOOP {
            // The process's own message comes back first (it is the echo
            // server itself), then the reply it sends itself.
            poison(buf, sent);
            ep.recv(buf)?;
            check_whole(buf, sent, sent, seq)?;
            echo_transform(buf, k);
            ep.send(buf)?;
        }
        poison(buf, reply);
        ep.recv(buf)?;
        check_whole(buf, reply, sent, seq)?;
    }
    Ok(())
}

/// Overhead of one iteration of the timed loop with nothing to talk to: the
/// minimum of several long runs (interference only ever adds time).
fn null_iteration_ns<const P: u8>(region: &mut Region) -> Result<f64, ChannelError> {
    let (mut null, mut lender) = (
        NullEndpoint,
        NullLender {
            reply: vec![0u8; region.next().len()],
        },
    );
    let ep: &mut dyn Endpoint = if P == LEND {
        black_box(&mut lender)
    } else {
        black_box(&mut null)
    };
    const N: u64 = 100_000;
    let mut best = u64::MAX;
    for _ in 0..7 {
        best = best.min(batch::<P>(ep, region, 1, N)?);
    }
    Ok(best as f64 / N as f64)
}

/// Measures one figure through `ep`, the client end of a ready channel.
/// With `cold_region`, each message uses the next slot of a region of that
/// many bytes instead of one buffer (see [`Region::cold`]).
/// `echoed` is the peer's count of the messages it returned
/// ([`echo_count`]); `None` for a self-loop, which has no peer.
pub fn measure(
    ep: &mut dyn Endpoint,
    size: usize,
    self_loop: bool,
    budget: &Budget,
    cold_region: Option<usize>,
    echoed: Option<&AtomicU64>,
) -> Result<Measurement, ChannelError> {
    let mut figure = Prepared::new(ep, size, self_loop, budget, cold_region)?;
    let (samples, precision) =
        sampling::take(budget.samples, &budget.precision, || figure.sample(ep))?;
    figure.finish(ep, samples, precision, echoed)
}

/// One figure between its warm-up and its samples: content checked, the
/// iteration count calibrated and the overheads measured, so that its
/// samples can be taken now or interleaved with other figures' (a sweep).
pub struct Prepared {
    /// [`COPY`], [`SELF_LOOP`] or [`LEND`].
    path: u8,
    budget: Budget,
    buf: Region,
    expect: Expect,
    seq: u64,
    iterations: u64,
    /// Loop overhead per round trip, ns.
    overhead_rt: f64,
    clock_ns: f64,
    /// Timestamps of the histogram pass, allocated and touched beforehand.
    stamps: Vec<u64>,
}

/// `f::<COPY>`, `f::<SELF_LOOP>` or `f::<LEND>` by a runtime path,
/// outside any timed loop.
macro_rules! by_path {
    ($path:expr, $f:ident($($arg:expr),*)) => {
        match $path {
            SELF_LOOP => $f::<SELF_LOOP>($($arg),*),
            LEND => $f::<LEND>($($arg),*),
            _ => $f::<COPY>($($arg),*),
        }
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
        let mut expect = Expect::new(size);
        let mut seq = 1u64;
        let timeout = budget.timeout;
        let path = path_of(ep, self_loop);

        // Content check first: a broken channel never gets as far as a figure.
        by_path!(
            path,
            verify(
                ep,
                &mut buf,
                &mut expect,
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
                |n| by_path!(path, batch(ep, &mut buf, seq, n)).inspect(|_| seq += n),
            )?;
            per
        };
        let iterations = iterations_for(budget.sample_time.as_nanos() as u64, per_iter_ns);

        // The null loop walks a region of the same kind, so moving the slot is
        // part of the overhead subtracted (not of the figure).
        let null_ns = by_path!(path, null_iteration_ns(&mut region_of()))?;
        // Per round trip: the client's loop and the server's (the same shape);
        // a self-loop has one loop doing both halves.
        let overhead_rt = if self_loop { null_ns } else { 2.0 * null_ns };

        // The timestamp array is allocated and written now: a zeroed allocation
        // maps its pages lazily, and first-touch page faults would otherwise land
        // inside the histogram pass and inflate its tail.
        let hist_n = ((budget.histogram_time.as_nanos() as f64 / per_iter_ns.max(1.0)) as usize)
            .clamp(1, 1_000_000);
        Ok(Prepared {
            path,
            budget: *budget,
            buf,
            expect,
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
        by_path!(self.path, batch(ep, &mut self.buf, self.seq, n))?;
        self.seq += n;
        Ok(())
    }

    /// Takes one sample: the one-way time of a calibrated batch, ns.
    pub fn sample(&mut self, ep: &mut dyn Endpoint) -> Result<f64, ChannelError> {
        let _wd = Watchdog::arm(self.budget.sample_time * 4 + self.budget.timeout);
        let n = self.iterations;
        let t = by_path!(self.path, batch(ep, &mut self.buf, self.seq, n))?;
        self.seq += n;
        Ok((t as f64 / n as f64 - self.overhead_rt) / 2.0)
    }

    /// Times single round trips for the histogram, checks content again,
    /// checks that the peer returned every message the client received
    /// (`echoed`: its count, `None` without a peer) and makes the figure of
    /// `samples_ns`.
    pub fn finish(
        mut self,
        ep: &mut dyn Endpoint,
        samples_ns: Vec<f64>,
        precision: Option<Achieved>,
        echoed: Option<&AtomicU64>,
    ) -> Result<Measurement, ChannelError> {
        let budget = self.budget;
        {
            let _wd = Watchdog::arm(budget.histogram_time * 4 + budget.timeout);
            by_path!(
                self.path,
                timestamped(ep, &mut self.buf, self.seq, &mut self.stamps)
            )?;
            self.seq += (self.stamps.len() - 1) as u64;
        }
        let mut hist = LatencyHistogram::new();
        for w in self.stamps.windows(2) {
            let one_way = ((w[1] - w[0]) as f64 - self.clock_ns - self.overhead_rt) / 2.0;
            hist.record_ns(one_way);
        }

        self.check_end(ep, echoed)?;

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

    /// A pass of `round_trips` single round trips, each stamped with
    /// CLOCK_MONOTONIC as it starts (and the last as it ends), with
    /// `around(true)` called just before it and `around(false)` just after
    /// (on every path once the first was called): the traced pass of `ipcmark explain`, whose
    /// tracing the caller turns on and off. Content and the peer's count
    /// are checked after it as after a figure's samples.
    pub fn stamped_pass(
        &mut self,
        ep: &mut dyn Endpoint,
        round_trips: usize,
        echoed: Option<&AtomicU64>,
        around: &mut dyn FnMut(bool) -> Result<(), String>,
    ) -> Result<Vec<u64>, ChannelError> {
        // Touched now, so that no page fault lands in the pass.
        let mut stamps = vec![u64::MAX; round_trips.max(1) + 1];
        around(true).map_err(ChannelError::Setup)?;
        let pass = {
            let _wd = Watchdog::arm(
                self.budget.histogram_time * 4
                    + self.budget.timeout
                    + Duration::from_micros(100) * round_trips as u32,
            );
            by_path!(
                self.path,
                timestamped(ep, &mut self.buf, self.seq, &mut stamps)
            )
        };
        let stopped = around(false).map_err(ChannelError::Setup);
        pass?;
        stopped?;
        self.seq += (stamps.len() - 1) as u64;
        self.check_end(ep, echoed)?;
        Ok(stamps)
    }

    /// Content checked again, and every reply the client received returned
    /// by the peer (`echoed`: its count, `None` without a peer).
    fn check_end(
        &mut self,
        ep: &mut dyn Endpoint,
        echoed: Option<&AtomicU64>,
    ) -> Result<(), ChannelError> {
        let budget = self.budget;
        by_path!(
            self.path,
            verify(
                ep,
                &mut self.buf,
                &mut self.expect,
                self.seq,
                budget.verify_rounds,
                budget.timeout
            )
        )?;
        self.seq += budget.verify_rounds;
        // Every round trip's reply is the peer's, whatever the message
        // carries (a notification carries nothing to check).
        if let Some(echoed) = echoed {
            let received = self.seq - 1;
            // A reply sent before the peer's loop counts it (by a signal
            // handler) is counted a moment later: wait for it, within the
            // time a reply is given.
            let deadline = monotonic_ns() + budget.timeout.as_nanos() as u64;
            let mut returned = echoed.load(Ordering::Acquire);
            while returned < received && monotonic_ns() < deadline {
                interrupt::check()?;
                std::thread::sleep(Duration::from_micros(100));
                returned = echoed.load(Ordering::Acquire);
            }
            if returned != received {
                return Err(ChannelError::Check(format!(
                    "the peer returned {returned} messages, the client received {received} \
                     replies: the others did not come from the peer (a loopback?)"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
