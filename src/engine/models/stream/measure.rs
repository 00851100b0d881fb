//! One stream figure from the sender's side: the overheads, then verify →
//! warm-up → samples → verify, then the figures from the receiver's report.

use super::board::{Board, SinkPlan, cpu_now};
use super::facts::{Bound, Busy, CpuPerMessage, StreamFacts, bound};
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
    let t0 = monotonic_ns();
    for j in 1..=plan.samples {
        let _wd = Watchdog::arm(budget.sample_time * 4 + timeout);
        let deadline = monotonic_ns() + budget.sample_time.as_nanos() as u64;
        send_until(ep, &mut region, k, &mut seq, deadline, board.boundary(j))?;
    }
    let sender_span = monotonic_ns() - t0;
    let sender_cpu = cpu_now()? - cpu0;
    let tail = (|| {
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
        Ok(())
    })();
    if let Err(ChannelError::Timeout) = tail {
        // Say how far the receiver got: a channel that never delivered (its
        // messages went back to the sender, or nowhere) reads as such.
        let verified = board.verified().load(Ordering::Relaxed);
        let passed = board.phases().load(Ordering::Relaxed);
        let nothing = if verified == 0 && passed == 0 {
            ": no sign that any message reached it"
        } else {
            ""
        };
        return Err(ChannelError::Check(format!(
            "the peer did not answer in time: {timeout:?} after the last sample the receiver \
             had not reported; it had compared {verified} whole-content message(s) and passed \
             {passed} of the {} phase ends{nothing}",
            plan.samples + 1
        )));
    }
    tail?;

    let first = board.boundary(0).load(Ordering::Relaxed);
    let sent = board.boundary(plan.samples).load(Ordering::Relaxed) - first;
    let received = board.received().load(Ordering::Relaxed);
    if received > sent || (!plan.lossy && received != sent) {
        return Err(ChannelError::Check(format!(
            "the receiver counted {received} messages of {sent} sent"
        )));
    }
    // The receiver's span of the timed part: its windows end to end.
    let receiver_span: u64 = (1..=plan.samples)
        .map(|j| board.window(j).load(Ordering::Relaxed))
        .sum();
    let receiver_cpu = board.cpu_ns().load(Ordering::Relaxed);
    let busy = Busy {
        sender: sender_cpu as f64 / sender_span.max(1) as f64,
        receiver: receiver_cpu as f64 / receiver_span.max(1) as f64,
    };
    let bounded_by = bound(busy, plan.lossy && received < sent);
    // The time per message is the pace of the side that bounds the stream,
    // so that side's loop is in it; never more than either side's.
    let subtracted = match bounded_by {
        Bound::Sender => sender_loop,
        Bound::Receiver => loop_ns,
        Bound::Both => sender_loop.min(loop_ns),
    };
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
        // Never floored: at or below zero is below the clock's resolution.
        samples_ns.push(window / n as f64 - subtracted);
    }
    let summary = Summary::of(&samples_ns).ok_or_else(|| {
        ChannelError::Check(format!(
            "no sample had two messages arrive to time ({received} of {sent} arrived)"
        ))
    })?;
    let mut hist = LatencyHistogram::new();
    for &s in &samples_ns {
        hist.record_ns(s);
    }
    // A rate exists only for a time above zero.
    let rate = |ns: f64, per: f64| (ns > 0.0).then(|| per * 1e9 / ns);
    let samples_bytes_per_s: Vec<Option<f64>> =
        samples_ns.iter().map(|&ns| rate(ns, size as f64)).collect();
    // Each side's own loop is CPU time too; the mechanism's share is what is
    // left, if anything is (the CPU clock is exact to 1 µs only).
    let cpu_left = |cpu: u64, n: u64, loop_ns: f64| {
        let left = cpu as f64 / n as f64 - loop_ns;
        (left > 0.0).then_some(left)
    };
    let facts = StreamFacts {
        bytes_per_s: rate(summary.median, size as f64),
        messages_per_s: rate(summary.median, 1.0),
        cpu_ns_per_message: CpuPerMessage {
            sender: cpu_left(sender_cpu, sent, sender_loop),
            receiver: cpu_left(receiver_cpu, received, loop_ns),
        },
        busy,
        bounded_by,
        sent,
        received,
        loss_ratio: 1.0 - received as f64 / sent as f64,
        samples_bytes_per_s,
        verified_messages: board.verified().load(Ordering::Relaxed),
        sender_loop_overhead_ns: sender_loop,
        receiver_loop_overhead_ns: loop_ns,
        lossy: plan.lossy,
        window: None,
        pairs: None,
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
        loop_overhead_ns: subtracted,
        clock_overhead_ns: clock_ns,
        latency: hist.percentiles().expect("samples recorded"),
        verified_round_trips: 0,
        histogram: None,
    };
    Ok((measurement, facts))
}
