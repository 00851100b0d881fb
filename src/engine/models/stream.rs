//! The streaming timing model (`--mode stream`): how fast one side can move
//! messages to the other, and what each side's CPU pays per message.
//!
//! The measuring process is the **sender**; the peer is the **receiver** (the
//! peer's [`PeerRole::Sink`](crate::engine::os::peer::PeerRole) role). Message `s` carries
//! its sequence number `s` (1, 2, …) in its first `min(size, 8)` bytes.
//!
//! 1. **Verify**: messages 1..=V carry a pattern unique to each; the receiver
//!    compares every byte.
//! 2. **Warm-up**: the sender sends back to back for the warm-up time. Before
//!    it sends the last message of a phase it writes that message's number
//!    to the shared board ("boundary" 0 for the warm-up, `j` for sample `j`).
//! 3. **Samples**: the same, one phase per sample, without a pause, so the
//!    samples are contiguous windows of one stream.
//! 4. **Verify** again (V more whole-content messages; a lossy channel instead
//!    gets paced tail messages until the receiver reports).
//!
//! The receiver checks every message's sequence number (a gap, a repeat or a
//! wrong number fails the figure; a lossy channel counts gaps as loss instead)
//! and reads `CLOCK_MONOTONIC` right after receiving each boundary message. So
//!
//! ```text
//! time per message (sample j) = (t_j − t_(j−1) − one clock read) / messages received in (b_(j−1), b_j]
//!                               − receiver loop overhead per message
//! throughput (sample j)      = size / time per message;  messages/s = 1 / time per message
//! ```
//!
//! with both clock reads taken by the receiver. The loop overhead is the
//! receiver's own loop timed here against an endpoint that only stamps the
//! sequence number. The figure is the median over samples, with their spread.
//!
//! **CPU per message** of each side = the thread's user + system time
//! (`getrusage(RUSAGE_THREAD)`) from the start of sample 1 to the end of the
//! last sample, ÷ the messages that side handled in that time (sent, or
//! received), − that side's own loop overhead (each loop is timed here
//! against an endpoint that does nothing but what the loop needs). A side
//! that busy-waits shows the time it burnt waiting.
//!
//! Inside the timed loops: the send or receive, stamping or checking the
//! number, one load of the current boundary (receiver) and one clock read
//! every 32 messages (sender). No allocation, formatting or locking.

use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::{check_seq, clock_overhead_ns, fill_pattern, seq_len, stamp};
use crate::engine::models::region::Region;
use crate::engine::os::interrupt::{self, Watchdog};
use crate::engine::os::peer::{BoardArea, Fault, PeerRole, inject};
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use crate::sys::mem::SharedMapping;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Most samples a stream figure can take (the board's size).
pub const MAX_SAMPLES: usize = 100;

/// The sender reads the clock once per this many messages.
const CLOCK_EVERY: u64 = 32;

/// Smallest message a lossy channel can stream: the whole 8-byte sequence
/// number is needed to tell how many messages a gap lost.
pub const LOSSY_MIN_SIZE: usize = 8;

/// What the receiver needs to know before the stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkPlan {
    /// Gaps are losses to count, not failures (datagrams).
    pub lossy: bool,
    /// Messages compared byte for byte before (and, unless lossy, after) the timed part.
    pub verify: u64,
    /// Samples (at most [`MAX_SAMPLES`]).
    pub samples: usize,
}

// Board layout, in bytes from its start. The sender writes the boundaries;
// the receiver writes the rest, once, at the end.
const DONE: usize = 0;
const RECEIVED: usize = 8;
const CPU: usize = 16;
const VERIFIED: usize = 24;
const BOUNDARIES: usize = 128;
const WINDOWS: usize = 1024;
const COUNTS: usize = 1920;
const BOARD_LEN: usize = COUNTS + 8 * MAX_SAMPLES;

/// The shared words through which the sender marks phase ends and the
/// receiver reports its counts, clock windows and CPU time.
pub struct Board<'a> {
    map: &'a SharedMapping,
    base: usize,
}

impl<'a> Board<'a> {
    /// The board laid over `area` (at least the layout's size).
    pub fn new(area: BoardArea<'a>) -> Board<'a> {
        assert!(
            area.len >= BOARD_LEN,
            "stream board needs {BOARD_LEN} bytes"
        );
        Board {
            map: area.map,
            base: area.offset,
        }
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        self.map.atomic_u64(self.base + off)
    }

    /// Sequence number of the last message of phase `b` (0: warm-up, j:
    /// sample j); 0 while not yet decided (numbers start at 1).
    fn boundary(&self, b: usize) -> &AtomicU64 {
        self.word(BOUNDARIES + 8 * b)
    }

    fn window(&self, j: usize) -> &AtomicU64 {
        self.word(WINDOWS + 8 * (j - 1))
    }

    fn count(&self, j: usize) -> &AtomicU64 {
        self.word(COUNTS + 8 * (j - 1))
    }
}

/// CPU time per message of each side, ns.
#[derive(Debug, Clone, Copy)]
pub struct CpuPerMessage {
    /// The sender's CPU time ÷ messages it sent in the timed part.
    pub sender: f64,
    /// The receiver's CPU time ÷ messages it received in the timed part.
    pub receiver: f64,
}

/// What a stream figure measured beyond its time per message.
#[derive(Debug, Clone)]
pub struct StreamFacts {
    /// Median over samples of bytes received per second (also the result's
    /// `throughput_bytes_per_s`).
    pub bytes_per_s: f64,
    /// Median over samples of messages received per second.
    pub messages_per_s: f64,
    /// CPU time per message of each side.
    pub cpu_ns_per_message: CpuPerMessage,
    /// Messages sent in the timed part.
    pub sent: u64,
    /// Messages received in the timed part.
    pub received: u64,
    /// 1 − received / sent (0 for a channel that cannot lose a message).
    pub loss_ratio: f64,
    /// Bytes received per second in each sample.
    pub samples_bytes_per_s: Vec<f64>,
    /// Messages compared byte for byte by the receiver.
    pub verified_messages: u64,
    /// The sender's loop per message (stamping, the clock every 32
    /// messages), subtracted from its CPU per message; the receiver's is the
    /// result's `loop_overhead_ns`.
    pub sender_loop_overhead_ns: f64,
    /// A remark for the result's note (lossy samples left untimed).
    pub note: Option<String>,
    /// Whether the channel may lose messages (its loss is then a figure).
    pub lossy: bool,
}

fn cpu_now() -> Result<u64, ChannelError> {
    thread_cpu_ns().map_err(ChannelError::io("getrusage"))
}

fn check_whole(buf: &[u8], seq: u64, expected: &mut [u8]) -> Result<(), ChannelError> {
    fill_pattern(expected, seq);
    match buf.iter().zip(expected.iter()).position(|(a, b)| a != b) {
        Some(offset) => Err(ChannelError::Corrupt { seq, offset }),
        None => Ok(()),
    }
}

/// Counts received messages for the test-only fault of the peer.
struct Faults {
    fault: Option<Fault>,
    count: u64,
}

impl Faults {
    #[inline(always)]
    fn apply(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        if let Some(f) = self.fault {
            self.count += 1;
            inject(f, self.count, buf)?;
        }
        Ok(())
    }
}

/// What the receiver's timed loop found.
#[derive(Debug)]
struct Tally {
    /// Receiver CPU ns from the first to the last boundary.
    cpu_ns: u64,
    /// Next sequence number after the last boundary (queued).
    next_seq: u64,
    /// Messages compared byte for byte (lossy: during the loop).
    verified: u64,
}

/// The receiver's loop for a channel that neither loses nor reorders:
/// every message must carry the next number. `stamps[b]` gets the clock
/// right after boundary `b`'s message; it returns after boundary `last`.
#[inline(never)]
fn queued_loop(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    faults: &mut Faults,
    board: &Board,
    first_seq: u64,
    stamps: &mut [u64],
) -> Result<Tally, ChannelError> {
    let last = stamps.len() - 1;
    let k = seq_len(region.next());
    let mut seq = first_seq;
    let mut b = 0;
    let mut cpu0 = 0;
    loop {
        let buf = region.next();
        ep.recv(buf)?;
        faults.apply(buf)?;
        check_seq(buf, seq, k)?;
        if seq == board.boundary(b).load(Ordering::Acquire) {
            // CPU time before the clock at the start, after it at the end: the
            // getrusage calls stay outside every window.
            if b == 0 {
                cpu0 = cpu_now()?;
            }
            stamps[b] = monotonic_ns();
            if b == last {
                return Ok(Tally {
                    cpu_ns: cpu_now()? - cpu0,
                    next_seq: seq + 1,
                    verified: 0,
                });
            }
            b += 1;
        }
        seq += 1;
    }
}

/// The receiver's loop for a channel that may drop messages: numbers must
/// only grow; `counts[j - 1]` gets the messages received of sample `j`
/// (number in `(b_(j-1), b_j]`). A boundary whose message was lost is
/// stamped at the first later message. Numbers up to `verify` are the
/// verify messages, compared byte for byte.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn lossy_loop(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    faults: &mut Faults,
    board: &Board,
    verify: u64,
    expected: &mut [u8],
    stamps: &mut [u64],
    counts: &mut [u64],
) -> Result<Tally, ChannelError> {
    let last = stamps.len() - 1;
    let mut seen = 0u64;
    let mut b = 0;
    let mut cpu0 = 0;
    let mut verified = 0;
    loop {
        let buf = region.next();
        ep.recv(buf)?;
        faults.apply(buf)?;
        let s = u64::from_le_bytes(buf[..8].try_into().expect("lossy sizes are at least 8 B"));
        if s <= seen {
            return Err(ChannelError::Sequence {
                expected: seen + 1,
                got: s,
            });
        }
        seen = s;
        if s <= verify {
            check_whole(buf, s, expected)?;
            verified += 1;
            continue;
        }
        let mut placed = false;
        loop {
            let end = board.boundary(b).load(Ordering::Acquire);
            if end == 0 || s < end {
                break;
            }
            if b == 0 {
                cpu0 = cpu_now()?;
            }
            stamps[b] = monotonic_ns();
            if s == end {
                // The boundary message itself belongs to the phase it ends.
                if b >= 1 {
                    counts[b - 1] += 1;
                }
                placed = true;
            }
            if b == last {
                return Ok(Tally {
                    cpu_ns: cpu_now()? - cpu0,
                    next_seq: s + 1,
                    verified,
                });
            }
            b += 1;
        }
        if !placed && b >= 1 {
            counts[b - 1] += 1;
        }
    }
}

/// The peer's role in a stream figure: [`sink`] with `plan`, on the board
/// the peer lends it.
pub fn sink_role(plan: SinkPlan) -> PeerRole {
    PeerRole::new("stream sink", move |ep, serving| {
        let mut region = Region::for_peer(serving);
        sink(
            ep,
            &mut region,
            serving.fault,
            &plan,
            &Board::new(serving.board),
        )
    })
}

/// The receiver (run by the peer): checks and counts the stream, reports on
/// the board, then waits to be stopped.
fn sink(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    fault: Option<Fault>,
    plan: &SinkPlan,
    board: &Board,
) -> Result<(), ChannelError> {
    let size = region.next().len();
    let mut expected = vec![0u8; size];
    let mut faults = Faults { fault, count: 0 };
    let mut stamps = vec![0u64; plan.samples + 1];
    let mut counts = vec![0u64; plan.samples];
    let tally = if plan.lossy {
        lossy_loop(
            ep,
            region,
            &mut faults,
            board,
            plan.verify,
            &mut expected,
            &mut stamps,
            &mut counts,
        )?
    } else {
        for seq in 1..=plan.verify {
            let buf = region.next();
            ep.recv(buf)?;
            faults.apply(buf)?;
            check_whole(buf, seq, &mut expected)?;
        }
        let mut t = queued_loop(ep, region, &mut faults, board, plan.verify + 1, &mut stamps)?;
        for seq in t.next_seq..t.next_seq + plan.verify {
            let buf = region.next();
            ep.recv(buf)?;
            faults.apply(buf)?;
            check_whole(buf, seq, &mut expected)?;
        }
        t.verified = 2 * plan.verify;
        for (j, c) in counts.iter_mut().enumerate() {
            *c = board.boundary(j + 1).load(Ordering::Acquire)
                - board.boundary(j).load(Ordering::Acquire);
        }
        t
    };
    for j in 1..=plan.samples {
        board
            .window(j)
            .store(stamps[j] - stamps[j - 1], Ordering::Relaxed);
        board.count(j).store(counts[j - 1], Ordering::Relaxed);
    }
    board
        .word(RECEIVED)
        .store(counts.iter().sum(), Ordering::Relaxed);
    board.word(CPU).store(tally.cpu_ns, Ordering::Relaxed);
    board
        .word(VERIFIED)
        .store(tally.verified, Ordering::Relaxed);
    board.word(DONE).store(1, Ordering::Release);
    // The sender reads the board, then the engine stops this side.
    loop {
        interrupt::check()?;
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Sends stamped messages back to back until `deadline` has passed (looked
/// at every [`CLOCK_EVERY`] messages); the last one's number is written to
/// `mark` before it is sent. `seq` is the next number to send.
#[inline(never)]
fn send_until(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    k: usize,
    seq: &mut u64,
    deadline: u64,
    mark: &AtomicU64,
) -> Result<(), ChannelError> {
    loop {
        let s = *seq;
        *seq += 1;
        let buf = region.next();
        stamp(buf, s, k);
        if s.is_multiple_of(CLOCK_EVERY) && monotonic_ns() >= deadline {
            mark.store(s, Ordering::Release);
            return ep.send(buf);
        }
        ep.send(buf)?;
    }
}

/// An endpoint whose `recv` only stamps the next sequence number: the
/// receiver's loop overhead is timed against it.
struct Stamper {
    next: u64,
    k: usize,
}

impl Endpoint for Stamper {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Ok(())
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        stamp(buf, self.next, self.k);
        self.next += 1;
        Ok(())
    }
}

/// The receiver's loop overhead per message: its loop over `N` messages
/// against a [`Stamper`], the minimum of several runs.
fn receiver_loop_ns(lossy: bool, region: &mut Region) -> Result<f64, ChannelError> {
    const N: u64 = 100_000;
    let size = region.next().len();
    let k = if lossy { 8 } else { seq_len(region.next()) };
    let map = SharedMapping::new_private(BOARD_LEN).map_err(ChannelError::io("mmap"))?;
    let board = Board::new(BoardArea {
        map: &map,
        offset: 0,
        len: BOARD_LEN,
    });
    board.boundary(0).store(1, Ordering::Relaxed);
    board.boundary(1).store(N + 1, Ordering::Relaxed);
    let mut expected = vec![0u8; size];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut ep = Stamper { next: 1, k };
        let mut faults = Faults {
            fault: None,
            count: 0,
        };
        let mut stamps = [0u64; 2];
        let mut counts = [0u64; 1];
        let ep: &mut dyn Endpoint = std::hint::black_box(&mut ep);
        if lossy {
            lossy_loop(
                ep,
                region,
                &mut faults,
                &board,
                0,
                &mut expected,
                &mut stamps,
                &mut counts,
            )?;
        } else {
            queued_loop(ep, region, &mut faults, &board, 1, &mut stamps)?;
        }
        best = best.min((stamps[1] - stamps[0]) as f64 / N as f64);
    }
    Ok(best)
}

/// The sender's loop overhead per message: its loop against an endpoint
/// that does nothing for about 2 ms, the minimum of several runs.
fn sender_loop_ns(region: &mut Region) -> Result<f64, ChannelError> {
    struct Null;
    impl Endpoint for Null {
        fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
            Ok(())
        }
    }
    let k = seq_len(region.next());
    let mark = AtomicU64::new(0);
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut null = Null;
        let ep: &mut dyn Endpoint = std::hint::black_box(&mut null);
        let mut seq = 1;
        let start = monotonic_ns();
        send_until(ep, region, k, &mut seq, start + 2_000_000, &mark)?;
        best = best.min((monotonic_ns() - start) as f64 / (seq - 1) as f64);
    }
    Ok(best)
}

/// Measures one stream figure through `ep`, the client end of a channel
/// whose server end runs [`sink`] with the same `plan` and reports on `board`.
pub fn measure(
    ep: &mut dyn Endpoint,
    size: usize,
    plan: &SinkPlan,
    budget: &Budget,
    cold_region: Option<usize>,
    board: &Board,
) -> Result<(Measurement, StreamFacts), ChannelError> {
    let region_of = || match cold_region {
        Some(bytes) => Region::cold(size, bytes),
        None => Region::warm(size),
    };
    let mut region = region_of();
    let k = seq_len(region.next());
    let timeout = budget.timeout;
    // Overheads first, while the receiver waits for the first message.
    // One region of the figure's kind for both (a cold one is large).
    let mut null_region = region_of();
    let loop_ns = receiver_loop_ns(plan.lossy, &mut null_region)?;
    let sender_loop = sender_loop_ns(&mut null_region)?;
    drop(null_region);
    let clock_ns = clock_overhead_ns();

    let mut seq = 1u64;
    {
        let _wd = Watchdog::arm(timeout + Duration::from_millis(plan.verify));
        for _ in 0..plan.verify {
            let buf = region.next();
            fill_pattern(buf, seq);
            ep.send(buf)?;
            seq += 1;
            if plan.lossy {
                // Paced, so that the check is not lost to a full receiver.
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
    {
        let _wd = Watchdog::arm(budget.warmup * 3 + timeout);
        let deadline = monotonic_ns() + budget.warmup.as_nanos() as u64;
        send_until(ep, &mut region, k, &mut seq, deadline, board.boundary(0))?;
    }
    let cpu0 = cpu_now()?;
    for j in 1..=plan.samples {
        let _wd = Watchdog::arm(budget.sample_time * 4 + timeout);
        let deadline = monotonic_ns() + budget.sample_time.as_nanos() as u64;
        send_until(ep, &mut region, k, &mut seq, deadline, board.boundary(j))?;
    }
    let sender_cpu = cpu_now()? - cpu0;
    {
        let _wd = Watchdog::arm(timeout);
        if plan.lossy {
            // Until the receiver has seen a message past the last boundary;
            // paced, so these few cannot all be dropped.
            while board.word(DONE).load(Ordering::Acquire) == 0 {
                let buf = region.next();
                stamp(buf, seq, k);
                ep.send(buf)?;
                seq += 1;
                interrupt::check()?;
                std::thread::sleep(Duration::from_micros(200));
            }
        } else {
            for _ in 0..plan.verify {
                let buf = region.next();
                fill_pattern(buf, seq);
                ep.send(buf)?;
                seq += 1;
            }
        }
        while board.word(DONE).load(Ordering::Acquire) == 0 {
            interrupt::check()?;
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    let first = board.boundary(0).load(Ordering::Relaxed);
    let sent = board.boundary(plan.samples).load(Ordering::Relaxed) - first;
    let received = board.word(RECEIVED).load(Ordering::Relaxed);
    if received > sent || (!plan.lossy && received != sent) {
        return Err(ChannelError::Check(format!(
            "the receiver counted {received} messages of {sent} sent"
        )));
    }
    let mut samples_ns = Vec::with_capacity(plan.samples);
    let mut fewest = u64::MAX;
    let mut untimed = 0;
    for j in 1..=plan.samples {
        let n = board.count(j).load(Ordering::Relaxed);
        if n < 2 {
            if plan.lossy {
                // (Almost) all of this sample was lost: the receiver's clock
                // has no window for it. Its messages still count as sent.
                untimed += 1;
                continue;
            }
            return Err(ChannelError::Check(format!(
                "sample {j} delivered {n} message(s)"
            )));
        }
        fewest = fewest.min(n);
        let window = board.window(j).load(Ordering::Relaxed) as f64 - clock_ns;
        let per = window / n as f64;
        // Subtracting can only go wrong on a clock anomaly: keep the raw figure.
        samples_ns.push(if per > loop_ns { per - loop_ns } else { per });
    }
    let summary = Summary::of(&samples_ns).ok_or_else(|| {
        ChannelError::Check(format!(
            "no sample had two messages arrive to time ({received} of {sent} arrived)"
        ))
    })?;
    let mut hist = LatencyHistogram::new();
    for &s in &samples_ns {
        hist.record(s.round().max(1.0) as u64);
    }
    let samples_bytes_per_s: Vec<f64> =
        samples_ns.iter().map(|ns| size as f64 * 1e9 / ns).collect();
    let per_s: Vec<f64> = samples_ns.iter().map(|ns| 1e9 / ns).collect();
    let receiver_cpu = board.word(CPU).load(Ordering::Relaxed);
    let facts = StreamFacts {
        bytes_per_s: crate::stats::median(&samples_bytes_per_s),
        messages_per_s: crate::stats::median(&per_s),
        cpu_ns_per_message: CpuPerMessage {
            // Each side's own loop is CPU time too; the mechanism's share is
            // what is left (floored at 0: the clock is exact to 1 µs only).
            sender: (sender_cpu as f64 / sent as f64 - sender_loop).max(0.0),
            receiver: (receiver_cpu as f64 / received as f64 - loop_ns).max(0.0),
        },
        sent,
        received,
        loss_ratio: 1.0 - received as f64 / sent as f64,
        samples_bytes_per_s,
        verified_messages: board.word(VERIFIED).load(Ordering::Relaxed),
        sender_loop_overhead_ns: sender_loop,
        lossy: plan.lossy,
        note: (untimed > 0).then(|| {
            format!(
                "{untimed} of {} samples untimed: fewer than two of their messages arrived",
                plan.samples
            )
        }),
    };
    if plan.lossy && facts.verified_messages == 0 {
        return Err(ChannelError::Check(
            "none of the whole-content check messages arrived".into(),
        ));
    }
    let measurement = Measurement {
        // The sample count is bounded by the peer's board, not sampled to a precision.
        precision: None,
        iterations: fewest,
        samples_ns,
        summary,
        loop_overhead_ns: loop_ns,
        clock_overhead_ns: clock_ns,
        latency: hist.percentiles().expect("samples recorded"),
        verified_round_trips: 0,
        histogram: None,
    };
    Ok((measurement, facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_map() -> SharedMapping {
        SharedMapping::new_private(BOARD_LEN).unwrap()
    }

    /// Hands out numbered messages, dropping those `drop` selects.
    struct Feed {
        next: u64,
        size: usize,
        drop: fn(u64) -> bool,
    }

    impl Endpoint for Feed {
        fn send(&mut self, _: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
            while (self.drop)(self.next) {
                self.next += 1;
            }
            fill_pattern(&mut buf[..self.size], self.next);
            self.next += 1;
            Ok(())
        }
    }

    #[test]
    fn queued_loop_stops_at_the_last_boundary_and_catches_a_gap() {
        let map = board_map();
        let board = Board::new(BoardArea {
            map: &map,
            offset: 0,
            len: BOARD_LEN,
        });
        for (b, end) in [10u64, 20, 35].into_iter().enumerate() {
            board.boundary(b).store(end, Ordering::Relaxed);
        }
        let mut ep = Feed {
            next: 1,
            size: 16,
            drop: |_| false,
        };
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        let mut stamps = [0u64; 3];
        let t = queued_loop(
            &mut ep,
            &mut Region::warm(16),
            &mut f,
            &board,
            1,
            &mut stamps,
        )
        .unwrap();
        assert_eq!(t.next_seq, 36);
        assert!(stamps[0] <= stamps[1] && stamps[1] <= stamps[2]);

        let mut gap = Feed {
            next: 1,
            size: 16,
            drop: |s| s == 15,
        };
        let err = queued_loop(
            &mut gap,
            &mut Region::warm(16),
            &mut f,
            &board,
            1,
            &mut stamps,
        )
        .unwrap_err();
        assert!(
            matches!(err, ChannelError::Corrupt { seq: 15, .. }),
            "{err}"
        );
    }

    #[test]
    fn lossy_loop_counts_each_sample_and_survives_a_lost_boundary() {
        let map = board_map();
        let board = Board::new(BoardArea {
            map: &map,
            offset: 0,
            len: BOARD_LEN,
        });
        for (b, end) in [10u64, 20, 30].into_iter().enumerate() {
            board.boundary(b).store(end, Ordering::Relaxed);
        }
        // Verify messages 1..=3; 12 and 13 lost; boundary 20 itself lost.
        let mut ep = Feed {
            next: 1,
            size: 16,
            drop: |s| s == 12 || s == 13 || s == 20,
        };
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        let (mut stamps, mut counts) = ([0u64; 3], [0u64; 2]);
        let mut expected = vec![0u8; 16];
        let t = lossy_loop(
            &mut ep,
            &mut Region::warm(16),
            &mut f,
            &board,
            3,
            &mut expected,
            &mut stamps,
            &mut counts,
        )
        .unwrap();
        assert_eq!(t.verified, 3);
        // Sample 1 is 11..=20 without 12, 13, 20; sample 2 is 21..=30.
        assert_eq!(counts, [7, 10]);
        assert_eq!(t.next_seq, 31);
    }

    #[test]
    fn loop_overheads_are_measured() {
        for lossy in [false, true] {
            let ns = receiver_loop_ns(lossy, &mut Region::warm(64)).unwrap();
            assert!(ns.is_finite() && ns >= 0.0);
        }
        let ns = sender_loop_ns(&mut Region::warm(64)).unwrap();
        assert!(ns.is_finite() && ns >= 0.0);
    }
}
