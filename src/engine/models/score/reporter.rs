//! The reporter: the measuring thread wakes at the end of each interval of
//! the period, reads every counter and checks them (Thread-Metric's
//! reporting thread), and what it read, as figures.

use super::board::Board;
use super::contract::{Check, ScoreSettings};
use crate::engine::measure::Measurement;
use crate::engine::os::interrupt;
use crate::stats::{Percentiles, Summary, quantile_sorted};
use crate::sys::{clock::monotonic_ns, timer};

/// Most the reporter sleeps at once, so that a stop request or a failed
/// thread ends the figure soon.
const POLL_NS: u64 = 50_000_000;

/// The checks the engine makes on every test, beside the test's own.
pub(super) const PROGRESS_CHECK: &str =
    "the score advanced in every other interval at least, and in the period";

/// The counters read at each report.
pub(super) struct Reports {
    /// Start of the period (monotonic ns).
    pub(super) start_ns: u64,
    /// Time of each report.
    pub(super) at_ns: Vec<u64>,
    /// Every counter at each report.
    pub(super) counters: Vec<Vec<u64>>,
}

impl Reports {
    pub(super) fn score_at(&self, k: usize, score: &[usize]) -> u64 {
        score.iter().map(|&c| self.counters[k][c]).sum()
    }

    pub(super) fn operations(&self, score: &[usize]) -> Vec<u64> {
        (0..self.counters.len())
            .map(|k| {
                self.score_at(k, score)
                    - if k == 0 {
                        0
                    } else {
                        self.score_at(k - 1, score)
                    }
            })
            .collect()
    }

    pub(super) fn lengths(&self) -> Vec<u64> {
        (0..self.at_ns.len())
            .map(|k| {
                self.at_ns[k]
                    - if k == 0 {
                        self.start_ns
                    } else {
                        self.at_ns[k - 1]
                    }
            })
            .collect()
    }

    pub(super) fn elapsed(&self) -> u64 {
        self.at_ns.last().map_or(0, |t| t - self.start_ns)
    }

    /// Time per operation of each interval in which an operation completed
    /// (what `compare` reads), the score's iterations, and the spread, in
    /// the shape other figures have. An interval with no operation has no
    /// time per operation: it is left out here, and counted in the facts
    /// (`intervals_without_operation`). `None` if no interval had one.
    pub(super) fn measurement(&self, score: &[usize]) -> Option<Measurement> {
        let samples: Vec<f64> = self
            .lengths()
            .iter()
            .zip(self.operations(score))
            .filter(|&(_, n)| n > 0)
            .map(|(&t, n)| t as f64 / n as f64)
            .collect();
        let summary = Summary::of(&samples)?;
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        let q = |p| quantile_sorted(&sorted, p).round() as u64;
        Some(Measurement {
            // A count over a fixed period, not a median sampled to a precision.
            precision: None,
            iterations: self.score_at(self.counters.len() - 1, score).max(1),
            summary,
            samples_ns: samples,
            loop_overhead_ns: 0.0,
            clock_overhead_ns: 0.0,
            latency: Percentiles {
                count: sorted.len() as u64,
                min: q(0.0),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                max: q(1.0),
                at_or_below_zero: 0,
                mean: summary.mean,
            },
            verified_round_trips: 0,
            histogram: None,
        })
    }
}

/// The reporter: starts the threads, wakes at each interval's end, reads
/// and checks the counters. On a failure, returns why with the reports so far.
pub(super) fn report(
    board: &Board,
    threads: usize,
    counter_names: &[&str],
    score: &[usize],
    check: Option<Check>,
    s: &ScoreSettings,
) -> Result<Reports, (String, Option<Reports>)> {
    let deadline = monotonic_ns() + s.timeout.as_nanos() as u64;
    while board.ready_threads() < threads as u32 {
        if monotonic_ns() > deadline {
            return Err((
                format!("the test's threads were not ready within {:?}", s.timeout),
                None,
            ));
        }
        let _ = timer::sleep_until_ns(monotonic_ns() + 1_000_000);
    }
    if let Some(f) = board.failure() {
        return Err((f, None));
    }
    let n = s.intervals.max(1);
    let period_ns = s.period.as_nanos() as u64;
    let mut r = Reports {
        start_ns: 0,
        at_ns: Vec::with_capacity(n),
        counters: vec![vec![0; counter_names.len()]; n],
    };
    r.start_ns = monotonic_ns();
    board.open_start();
    let mut stalled_before = false;
    for k in 0..n {
        let target = r.start_ns + period_ns * (k as u64 + 1) / n as u64;
        loop {
            if board.stopped() {
                let why = board.failure().unwrap_or_else(|| "a thread stopped".into());
                r.counters.truncate(r.at_ns.len());
                return Err((why, (!r.at_ns.is_empty()).then_some(r)));
            }
            let now = monotonic_ns();
            if now >= target {
                break;
            }
            match timer::sleep_until_ns(target.min(now + POLL_NS)) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err((format!("clock_nanosleep: {e}"), None)),
            }
            if let Err(e) = interrupt::check() {
                r.counters.truncate(r.at_ns.len());
                return Err((e.to_string(), (!r.at_ns.is_empty()).then_some(r)));
            }
        }
        // The reporter outranks every test thread on their CPU: none runs
        // while the counters are read, so they are one consistent state.
        board.read(&mut r.counters[k]);
        r.at_ns.push(monotonic_ns());
        // One interval without progress is what RT throttling does (every
        // SCHED_FIFO task of the CPU, the reporter too, paused for up to
        // 50 ms a second; the reporter, first to run again, reads before the
        // threads have run); two in a row, or a whole period, mean the
        // test's threads are stuck.
        let before = if k == 0 { 0 } else { r.score_at(k - 1, score) };
        let stalled = r.score_at(k, score) <= before;
        let verdict = check
            .map_or(Ok(()), |c| (c.test)(&r.counters[k]))
            .and_then(|()| match (stalled, stalled_before) {
                (true, true) => Err(format!(
                    "no operation completed in intervals {k} and {} of {n}",
                    k + 1
                )),
                (true, false) if k + 1 == n && r.score_at(k, score) == 0 => {
                    Err("no operation completed in the whole period".into())
                }
                _ => Ok(()),
            });
        stalled_before = stalled;
        if let Err(why) = verdict {
            r.counters.truncate(r.at_ns.len());
            let shown: Vec<String> = counter_names
                .iter()
                .zip(&r.counters[k])
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            return Err((
                format!("report {} of {n}: {why} ({})", k + 1, shown.join(", ")),
                Some(r),
            ));
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_without_an_operation_is_no_time_per_operation() {
        // Three intervals of 100 ns; the second completes nothing (the
        // CPU's SCHED_FIFO threads throttled, say).
        let r = Reports {
            start_ns: 0,
            at_ns: vec![100, 200, 300],
            counters: vec![vec![10], vec![10], vec![30]],
        };
        assert_eq!(r.operations(&[0]), vec![10, 0, 20]);
        let m = r.measurement(&[0]).unwrap();
        assert_eq!(
            m.samples_ns,
            vec![10.0, 5.0],
            "not 100 ns for the empty one"
        );
        assert_eq!(m.iterations, 30);
        assert_eq!(m.latency.count, 2);
        let idle = Reports {
            start_ns: 0,
            at_ns: vec![100],
            counters: vec![vec![0]],
        };
        assert!(idle.measurement(&[0]).is_none());
    }
}
