//! One stream figure from the sender's side: the overheads, then verify →
//! warm-up → samples → verify, then the figures from the receiver's report.

use super::assemble::{Rules, SideTally, StreamCounts, Window, assemble};
use super::board::{Board, SinkPlan, cpu_now};
use super::facts::StreamFacts;
use super::overhead::{receiver_loop_ns, sender_loop_ns};
use super::sender::send_until;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::{clock_overhead_ns, fill_pattern, seq_len, stamp};
use crate::engine::models::region::Region;
use crate::engine::os::interrupt::{self, Watchdog};
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
    // The receiver's loop copying and reading in place: which it was, its
    // report says.
    let copy_loop = receiver_loop_ns(plan.lossy, false, &mut null_region)?;
    let lend_loop = receiver_loop_ns(plan.lossy, true, &mut null_region)?;
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
    let samples: Vec<Window> = (1..=plan.samples)
        .map(|j| Window {
            ns: board.window(j).load(Ordering::Relaxed),
            messages: board.count(j).load(Ordering::Relaxed),
        })
        .collect();
    let counts = StreamCounts {
        size,
        lossy: plan.lossy,
        samples: &samples,
        sender: SideTally {
            messages: board.boundary(plan.samples).load(Ordering::Relaxed) - first,
            cpu_ns: sender_cpu,
            span_ns: sender_span,
            loop_ns: sender_loop,
        },
        receiver: SideTally {
            messages: board.received().load(Ordering::Relaxed),
            cpu_ns: board.cpu_ns().load(Ordering::Relaxed),
            // The receiver's span of the timed part: its windows end to end.
            span_ns: samples.iter().map(|w| w.ns).sum(),
            loop_ns: match board.lent().load(Ordering::Relaxed) {
                0 => copy_loop,
                _ => lend_loop,
            },
        },
        verified: board.verified().load(Ordering::Relaxed),
        clock_overhead_ns: clock_ns,
        // The sample count is bounded by the peer's board, not sampled to a precision.
        precision: None,
        window: None,
        pairs: None,
        rules: Rules::LOCAL,
    };
    assemble(&counts).map_err(|refused| ChannelError::Check(refused.to_string()))
}
