//! The event timing model (mode `event`): the benchmark's threads time each
//! event themselves, because what is measured is not the time of a loop but
//! a latency inside one run of the operation: from a timer's expiry to the
//! thread that handles it running, from a lock request to its acquisition.
//!
//! ```text
//! latency of one event = what the operation timed − baseline (median of the baseline's events)
//! figure per sample    = mean latency of the sample's events − baseline
//! ```
//!
//! The operation's baseline is the same measurement without the event (the
//! deadline found by polling the clock instead of by a timer interrupt and
//! a wake-up; the lock taken when it is free); its median covers the clock
//! reads inside the measurement, so nothing else is subtracted (the clock
//! overhead is reported, not subtracted again). Every sampled event is in
//! the histogram. Warm-up calibrates how many events fill a sample; the
//! kernel counter, if any, is read before and after, as in `oploop`.

use crate::engine::channel::ChannelError;
use crate::engine::measure::{Budget, Measurement};
use crate::engine::message::clock_overhead_ns;
use crate::engine::models::calibrate::iterations_for;
use crate::engine::models::oploop::{OpTiming, check_counter};
use crate::engine::models::sampling;
use crate::engine::op::{Events, Op};
use crate::engine::os::interrupt::Watchdog;
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;

/// Runs `op` once and returns the latency it timed.
#[inline]
fn one(op: &mut dyn Op) -> Result<u64, ChannelError> {
    crate::engine::os::interrupt::check()?;
    op.run()?;
    op.event_ns().ok_or_else(|| {
        ChannelError::Check("a self-timed operation reported no latency for its event".into())
    })
}

/// Median latency of `n` events of the operation's baseline, if it has one.
fn baseline_ns(op: &mut dyn Op, n: u64) -> Result<Option<f64>, ChannelError> {
    let Some(base) = op.baseline() else {
        return Ok(None);
    };
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        v.push(one(base)?);
    }
    v.sort_unstable();
    Ok(Some(v[v.len() / 2] as f64))
}

/// Measures one figure of a self-timed `op`, prepared and placed; with
/// `events`, every figure is per event of that kind (divided by `per_op`).
pub fn measure(
    op: &mut dyn Op,
    budget: &Budget,
    events: Option<Events>,
) -> Result<OpTiming, ChannelError> {
    let per_op = events.map_or(1.0, |e| f64::from(e.per_op.max(1)));
    let timeout = budget.timeout;
    let before = op.counter()?;
    let mut ops = 0u64;

    // Warm-up: events until the warm-up time is spent; their wall time per
    // event sets how many fill a sample.
    let wall_per_event = {
        let _wd = Watchdog::arm(budget.warmup * 3 + timeout);
        let start = monotonic_ns();
        let warm = budget.warmup.as_nanos() as u64;
        let mut n = 0u64;
        while n == 0 || monotonic_ns() - start < warm {
            one(op)?;
            n += 1;
        }
        ops += n;
        (monotonic_ns() - start) as f64 / n as f64
    };
    let iterations = iterations_for(budget.sample_time.as_nanos() as u64, wall_per_event);

    let base = {
        let _wd = Watchdog::arm(budget.sample_time * 8 + timeout);
        baseline_ns(op, iterations.min(100_000))?
    };
    let subtracted = base.unwrap_or(0.0);

    let mut hist = LatencyHistogram::new();
    let (samples_ns, precision) = sampling::take(budget.samples, &budget.precision, || {
        let _wd = Watchdog::arm(budget.sample_time * 4 + timeout);
        let mut sum = 0u64;
        for _ in 0..iterations {
            let l = one(op)?;
            sum += l;
            hist.record_ns((l as f64 - subtracted) / per_op);
        }
        ops += iterations;
        let mean = sum as f64 / iterations as f64;
        Ok((mean - subtracted) / per_op)
    })?;

    let counter = check_counter(before, op.counter()?, ops)?;
    let summary = Summary::of(&samples_ns)
        .ok_or_else(|| ChannelError::Setup("no samples were taken".into()))?;
    let latency = hist
        .percentiles()
        .ok_or_else(|| ChannelError::Setup("no event was timed".into()))?;
    Ok(OpTiming {
        measurement: Measurement {
            iterations,
            samples_ns,
            summary,
            precision,
            loop_overhead_ns: 0.0,
            clock_overhead_ns: clock_overhead_ns(),
            latency,
            verified_round_trips: 0,
            histogram: Some(hist),
        },
        counter,
        baseline_ns: base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Reports 1000 ns per event, and 100 ns for its baseline.
    struct Fixed {
        base: Base,
    }
    struct Base;
    impl Op for Base {
        fn run(&mut self) -> Result<(), ChannelError> {
            Ok(())
        }
        fn event_ns(&self) -> Option<u64> {
            Some(100)
        }
    }
    impl Op for Fixed {
        fn run(&mut self) -> Result<(), ChannelError> {
            std::thread::sleep(Duration::from_micros(20));
            Ok(())
        }
        fn event_ns(&self) -> Option<u64> {
            Some(1000)
        }
        fn baseline(&mut self) -> Option<&mut dyn Op> {
            Some(&mut self.base)
        }
    }

    #[test]
    fn subtracts_the_baseline_from_every_event() {
        let t = measure(&mut Fixed { base: Base }, &Budget::tiny(), None).unwrap();
        assert_eq!(t.baseline_ns, Some(100.0));
        assert_eq!(t.measurement.samples_ns, vec![900.0; 3]);
        assert_eq!(t.measurement.latency.min, t.measurement.latency.max);
        assert_eq!(t.measurement.latency.count, 3 * t.measurement.iterations);
    }

    #[test]
    fn an_operation_without_a_latency_fails_the_figure() {
        struct Silent;
        impl Op for Silent {
            fn run(&mut self) -> Result<(), ChannelError> {
                Ok(())
            }
        }
        let err = measure(&mut Silent, &Budget::tiny(), None).unwrap_err();
        assert!(matches!(err, ChannelError::Check(_)), "{err}");
    }
}
