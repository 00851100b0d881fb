//! The op timing model: one operation repeated in a loop in one process, as
//! the MINIX study timed its system calls.
//!
//! ```text
//! time per operation = batch time / operations − loop overhead per iteration
//! ```
//!
//! where the loop overhead is the same loop (a dynamic call, a result check)
//! run against an operation that does nothing, measured apart and subtracted.
//! Iteration counts are calibrated per operation so that each sample lasts
//! about the sample time, whether an operation takes 20 ns or 500 µs. Nothing
//! inside a timed batch allocates, logs, formats or locks; the counters that
//! prove the work was done are read before and after the timed phases.
//!
//! An operation may name a baseline (the same work without the event being
//! measured) and the events one operation is made of; then
//!
//! ```text
//! time per event = (batch time / operations − loop overhead − baseline per operation) / events per operation
//! ```
//!
//! Two populations come out of it, and they are named apart: each sample
//! is the mean time of a batch (the figure is the median of these means),
//! and the percentiles are of single operations, each timed between two
//! clock reads, in a short window after each of the first samples. The
//! windows run beside the batches they follow, so both describe the same
//! stretch of time: a machine whose speed changes during the figure moves
//! both alike, instead of the batches and a window timed after them
//! describing two different machines.

use crate::engine::channel::ChannelError;
use crate::engine::measure::{Budget, Measurement, Precision};
use crate::engine::message::clock_overhead_ns;
use crate::engine::models::calibrate::{iterations_for, warm_up};
use crate::engine::models::sampling;
use crate::engine::op::{Counter, Events, NullOp, Op};
use crate::engine::os::interrupt::Watchdog;
use crate::stats::{LatencyHistogram, Summary};
use crate::sys::clock::monotonic_ns;
use std::hint::black_box;

/// The kernel counter's growth over the timed phases, checked against the
/// number of operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterCheck {
    /// What was counted, and where.
    pub source: &'static str,
    /// The least it must grow by per operation.
    pub per_op: u64,
    /// Operations performed between the two readings.
    pub ops: u64,
    /// How much it grew (at least `per_op × ops`, or the figure fails).
    pub observed: u64,
}

/// What the op loop measured.
#[derive(Debug, Clone)]
pub struct OpTiming {
    /// Calibrated count, samples, overheads and per-operation percentiles.
    pub measurement: Measurement,
    /// The kernel counter, if the operation has one.
    pub counter: Option<CounterCheck>,
    /// Time per operation of the operation's baseline, subtracted from every
    /// figure (ns, its own loop overhead already removed), if it has one.
    pub baseline_ns: Option<f64>,
}

/// Times `n` operations; returns elapsed ns.
#[inline(never)]
fn batch(op: &mut dyn Op, n: u64) -> Result<u64, ChannelError> {
    let start = monotonic_ns();
    for _ in 0..n {
        op.run()?;
    }
    Ok(monotonic_ns() - start)
}

/// Times every operation: `stamps[i]` is the clock after operation `i`
/// (`stamps[0]` before the first), so each operation costs one clock read.
#[inline(never)]
fn timestamped(op: &mut dyn Op, stamps: &mut [u64]) -> Result<(), ChannelError> {
    let (first, rest) = stamps.split_first_mut().expect("at least one stamp");
    *first = monotonic_ns();
    for slot in rest.iter_mut() {
        op.run()?;
        *slot = monotonic_ns();
    }
    Ok(())
}

/// A stamped pass of `op` for `ipcmark explain`: warmed up and calibrated
/// as [`measure`] does (the same warm-up time), then `n` operations with a
/// CLOCK_MONOTONIC stamp before each and after the last, `around(true)`
/// just before the first stamp and `around(false)` just after the last
/// (the caller's tracing is on only around them). The stamps are allocated
/// and written before the pass, so it takes no page fault of its own.
pub fn stamped_pass(
    op: &mut dyn Op,
    budget: &Budget,
    n: usize,
    around: &mut dyn FnMut(bool) -> Result<(), ChannelError>,
) -> Result<Vec<u64>, ChannelError> {
    let per_op_ns = {
        let _wd = Watchdog::arm(budget.warmup * 3 + budget.timeout);
        warm_up(
            budget.warmup.as_nanos() as u64,
            crate::engine::os::interrupt::check,
            |k| batch(op, k),
        )?
        .0
    };
    let mut stamps = vec![u64::MAX; n.max(1) + 1];
    around(true)?;
    let timed = {
        // The pass at the warm-up's pace, four times over for the tracing.
        let pass = std::time::Duration::from_nanos((per_op_ns * n as f64 * 4.0) as u64);
        let _wd = Watchdog::arm(pass + budget.timeout);
        timestamped(op, &mut stamps)
    };
    let ended = around(false);
    timed?;
    ended?;
    Ok(stamps)
}

/// Overhead of one iteration of the timed loop around an operation that does
/// nothing: the minimum of several long runs (interference only adds time).
fn null_iteration_ns() -> Result<f64, ChannelError> {
    let mut null = NullOp;
    // Through black_box, so the call stays dynamic as it is for a real operation.
    let op: &mut dyn Op = black_box(&mut null);
    const N: u64 = 100_000;
    let mut best = u64::MAX;
    for _ in 0..7 {
        best = best.min(batch(op, N)?);
    }
    Ok(best as f64 / N as f64)
}

/// Time per operation of `op`'s baseline, if it has one: the minimum of
/// several batches of `n` (interference only adds time), less the loop
/// overhead. Never floored: a baseline cheaper than the loop's noise is
/// reported as measured (at or below zero), and subtracting it together
/// with the loop overhead removes exactly the baseline loop's own time.
fn baseline_ns(op: &mut dyn Op, n: u64, loop_ns: f64) -> Result<Option<f64>, ChannelError> {
    let Some(base) = op.baseline() else {
        return Ok(None);
    };
    let mut best = u64::MAX;
    for _ in 0..5 {
        crate::engine::os::interrupt::check()?;
        best = best.min(batch(base, n)?);
    }
    Ok(Some(best as f64 / n as f64 - loop_ns))
}

/// Checks the kernel counter read before and after `ops` operations: it
/// must have grown by at least `per_op` for each.
pub(super) fn check_counter(
    before: Option<Counter>,
    after: Option<Counter>,
    ops: u64,
) -> Result<Option<CounterCheck>, ChannelError> {
    let (Some(b), Some(a)) = (before, after) else {
        return Ok(None);
    };
    let check = CounterCheck {
        source: b.source,
        per_op: b.per_op,
        ops,
        observed: a.value.saturating_sub(b.value),
    };
    let expected = check.per_op.saturating_mul(ops);
    if check.observed < expected {
        return Err(ChannelError::Check(format!(
            "{} grew by {} over {ops} operations, less than the {expected} they must have added: the operations were not all performed",
            check.source, check.observed
        )));
    }
    Ok(Some(check))
}

/// Measures one figure of `op`, prepared and placed; with `events`, every
/// figure is per event instead of per operation.
pub fn measure(
    op: &mut dyn Op,
    budget: &Budget,
    events: Option<Events>,
) -> Result<OpTiming, ChannelError> {
    let per_op = events.map_or(1.0, |e| f64::from(e.per_op.max(1)));
    let timeout = budget.timeout;
    let before = op.counter()?;
    let mut ops = 0u64;

    // Warm-up and calibration: double the batch until it is long enough to
    // time, keep going until the warm-up time is spent.
    let per_op_ns = {
        let _wd = Watchdog::arm(budget.warmup * 3 + timeout);
        // Between batches, never inside one: a stop request ends the figure
        // within one batch even if the operation never blocks.
        let (per, done) = warm_up(
            budget.warmup.as_nanos() as u64,
            crate::engine::os::interrupt::check,
            |n| batch(op, n),
        )?;
        ops += done;
        per
    };
    let iterations = iterations_for(budget.sample_time.as_nanos() as u64, per_op_ns);

    let loop_ns = null_iteration_ns()?;
    let clock_ns = clock_overhead_ns();
    let base_ns = {
        let _wd = Watchdog::arm(budget.sample_time * 20 + timeout);
        baseline_ns(op, iterations, loop_ns)?
    };
    let subtracted = loop_ns + base_ns.unwrap_or(0.0);

    // The single operations: `histogram_time` of them in all, a window of
    // `window` after each of the first `samples` samples. The stamps of
    // one window are allocated and written now, before the samples: a
    // window then takes no page fault, and an operation whose cost depends
    // on the size of the process (fork) sees the same process in batches
    // and windows.
    let hist_n = ((budget.histogram_time.as_nanos() as f64 / per_op_ns.max(1.0)) as usize)
        .clamp(1, 1_000_000);
    let windows = budget.samples.max(1);
    let window = hist_n.div_ceil(windows);
    let window_time = budget.histogram_time / windows as u32;
    let mut stamps = vec![u64::MAX; window + 1];
    let mut hist = LatencyHistogram::new();
    let mut timed = 0usize;
    // The windows are inside the samples' turns, so the sampling's time
    // limit is lengthened by theirs: the batches get the time they had
    // (none stays none: `--max-time 0` keeps the fixed count).
    let precision = Precision {
        max_time: match budget.precision.max_time {
            t if t.is_zero() => t,
            t => t + budget.histogram_time,
        },
        ..budget.precision
    };

    let (samples_ns, precision) = sampling::take(budget.samples, &precision, || {
        crate::engine::os::interrupt::check()?;
        let _wd = Watchdog::arm((budget.sample_time + window_time) * 4 + timeout);
        let t = batch(op, iterations)?;
        ops += iterations;
        if timed < hist_n {
            // Between the clock reads only the operation: the stamps are
            // turned into single times after the window.
            timestamped(op, &mut stamps)?;
            ops += window as u64;
            timed += window;
            for w in stamps.windows(2) {
                let one = ((w[1] - w[0]) as f64 - clock_ns - subtracted) / per_op;
                hist.record_ns(one);
            }
        }
        Ok((t as f64 / iterations as f64 - subtracted) / per_op)
    })?;

    let counter = check_counter(before, op.counter()?, ops)?;

    let summary = Summary::of(&samples_ns)
        .ok_or_else(|| ChannelError::Setup("no samples were taken".into()))?;
    let latency = hist
        .percentiles()
        .ok_or_else(|| ChannelError::Setup("no operation was timed".into()))?;
    Ok(OpTiming {
        measurement: Measurement {
            iterations,
            samples_ns,
            summary,
            precision,
            loop_overhead_ns: loop_ns,
            clock_overhead_ns: clock_ns,
            latency,
            verified_round_trips: 0,
            histogram: Some(hist),
        },
        counter,
        baseline_ns: base_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its own runs and reports `per_op` for each through its counter,
    /// or less than it should when `cheat` is set.
    struct Counting {
        runs: u64,
        cheat: bool,
    }
    impl Op for Counting {
        fn run(&mut self) -> Result<(), ChannelError> {
            self.runs += 1;
            black_box(&self.runs);
            Ok(())
        }
        fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
            let value = if self.cheat {
                self.runs / 2
            } else {
                self.runs * 3
            };
            Ok(Some(Counter {
                source: "test counter",
                value,
                per_op: 3,
            }))
        }
    }

    #[test]
    fn measures_consistently_and_checks_the_counter() {
        let mut op = Counting {
            runs: 0,
            cheat: false,
        };
        let t = measure(&mut op, &Budget::tiny(), None).unwrap();
        let m = &t.measurement;
        assert_eq!(m.samples_ns.len(), 3);
        assert!(m.iterations >= 1 && m.loop_overhead_ns >= 0.0 && m.clock_overhead_ns >= 0.0);
        let l = m.latency;
        assert!(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max);
        let c = t.counter.unwrap();
        assert_eq!((c.ops, c.observed), (op.runs, 3 * op.runs));
    }

    #[test]
    fn a_counter_short_of_the_operations_fails_the_figure() {
        let mut op = Counting {
            runs: 0,
            cheat: true,
        };
        let err = measure(&mut op, &Budget::tiny(), None).unwrap_err();
        assert!(matches!(err, ChannelError::Check(_)), "{err}");
    }

    #[test]
    fn an_error_in_the_loop_ends_the_figure() {
        struct Failing;
        impl Op for Failing {
            fn run(&mut self) -> Result<(), ChannelError> {
                Err(ChannelError::Check("wrong result".into()))
            }
        }
        let err = measure(&mut Failing, &Budget::tiny(), None).unwrap_err();
        assert_eq!(err.to_string(), "check failed: wrong result");
    }
}
