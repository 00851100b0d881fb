//! One stream figure from the sender's side: the overheads, then verify →
//! warm-up → samples → verify, then the figures from the receiver's report.

use super::board::{Board, SinkPlan, cpu_now};
use super::overhead::{receiver_loop_ns, sender_loop_ns};
use super::sender::send_until;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::{clock_overhead_ns, fill_pattern, seq_len, stamp};
use crate::engine::models::region::Region;
use crate::engine::os::interrupt::{self, Watchdog};
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;
use std::sync::atomic::Ordering;
use std::time::Duration;

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

/// Measures one stream figure through `ep`, the client end of a channel
/// whose server end runs the sink ([`sink_role`](super::sink::sink_role)) with the same `plan` and reports on `board`.
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
            while board.done().load(Ordering::Acquire) == 0 {
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
        while board.done().load(Ordering::Acquire) == 0 {
            interrupt::check()?;
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    let first = board.boundary(0).load(Ordering::Relaxed);
    let sent = board.boundary(plan.samples).load(Ordering::Relaxed) - first;
    let received = board.received().load(Ordering::Relaxed);
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
    let receiver_cpu = board.cpu_ns().load(Ordering::Relaxed);
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
        verified_messages: board.verified().load(Ordering::Relaxed),
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
