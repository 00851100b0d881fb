//! The periodic timing model: a task woken at fixed absolute deadlines
//! (cyclictest, the RTOS study's periodic events), and a busy loop run with
//! and without a periodic timer interrupt (the QNX study's handler overhead).
//!
//! ```text
//! wake-up latency          = clock read after clock_nanosleep returns − its deadline
//! failure (tolerance P)    = a wake-up whose latency exceeds P × period
//! cost per interrupt       = (loop time with the timer − loop time without) ÷ interrupts handled
//! ```
//!
//! Benchmarks only describe what to run (a [`Model`] per figure, through the
//! [`Periodic`] trait); the timing lives here. Nothing in the timed loops
//! allocates, formats or locks: the histogram is preallocated and recording
//! into it is arithmetic on its counts.

use crate::engine::channel::{ChannelError, retry};
use crate::engine::measure::Measurement;
use crate::engine::os::interrupt;
use crate::stats::{LatencyHistogram, Summary, median};
use crate::sys::{clock::monotonic_ns, sched, signal as sig, timer};
use std::hint::black_box;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Static facts about a periodic benchmark, shown by `ipcmark list`.
#[derive(Debug, Clone, Copy)]
pub struct PeriodicInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what it measures.
    pub summary: &'static str,
    /// Group it belongs to (`timer`, …).
    pub group: &'static str,
}

/// The settings a periodic benchmark plans its figures from (command line).
#[derive(Debug, Clone)]
pub struct PeriodicSettings {
    /// Period of the wake-up latency task (`--period`).
    pub period: Duration,
    /// Length of one figure, if given (`--duration`); otherwise each
    /// benchmark picks its default.
    pub duration: Option<Duration>,
    /// Fraction of the period a wake-up may be late before it counts as a failure.
    pub tolerance: f64,
    /// Event frequencies in Hz (`--frequencies`).
    pub frequencies: Vec<f64>,
    /// Frequency of the timer interrupt for the handler-overhead loop, Hz.
    pub irq_frequency: f64,
    /// Shorter default durations (`--quick`).
    pub quick: bool,
}

/// What one periodic figure measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// Sleep to successive absolute deadlines `period` apart for `duration`;
    /// with a tolerance, count wake-ups later than `tolerance × period`.
    Wakeups {
        /// Time between deadlines.
        period: Duration,
        /// How long the task runs (at least one wake-up).
        duration: Duration,
        /// Failure threshold as a fraction of the period, if failures are counted.
        tolerance: Option<f64>,
    },
    /// A busy loop of fixed work, `rounds` times without and with a POSIX timer
    /// interrupting it at `frequency_hz`, in alternating order, `duration` in all.
    IrqOverhead {
        /// Interrupt frequency, Hz.
        frequency_hz: f64,
        /// Total time of all rounds, both kinds.
        duration: Duration,
        /// Pairs of (without, with) loops.
        rounds: usize,
    },
}

impl Model {
    /// Whether the figure may run under SCHED_FIFO (`--rt`): a task that
    /// sleeps may; a busy loop would starve its CPU's other tasks.
    pub fn may_run_rt(&self) -> bool {
        matches!(self, Model::Wakeups { .. })
    }
}

/// A benchmark of the periodic model: it plans figures, the engine times them.
pub trait Periodic: Sync {
    /// Static description.
    fn info(&self) -> PeriodicInfo;
    /// The figures to run under these settings, in order (one per frequency, …).
    fn plan(&self, s: &PeriodicSettings) -> Vec<Model>;
}

/// What a periodic figure recorded beyond the common [`Measurement`].
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicFacts {
    /// Period of the wake-ups or of the timer interrupt, ns.
    pub period_ns: u64,
    /// 1 / period, Hz.
    pub frequency_hz: f64,
    /// Planned length of the figure, ms.
    pub duration_ms: f64,
    /// Timer slack of the measuring thread during the figure, ns.
    pub timer_slack_ns: u64,
    /// Scheduling policy of the measuring thread during the figure.
    pub sched_policy: &'static str,
    /// Wake-ups timed (model `Wakeups`).
    pub wakeups: Option<u64>,
    /// Failure threshold as a fraction of the period.
    pub tolerance: Option<f64>,
    /// Wake-ups later than tolerance × period.
    pub failures: Option<u64>,
    /// failures / wake-ups (the RTOS study's Fail_sys).
    pub fail_ratio: Option<f64>,
    /// Model `IrqOverhead`: the with/without comparison.
    pub irq: Option<IrqFacts>,
}

/// The handler-overhead comparison (model `IrqOverhead`).
#[derive(Debug, Clone, PartialEq)]
pub struct IrqFacts {
    /// Pairs of loops run.
    pub rounds: usize,
    /// Median time of a round's loop without the timer (undisturbed blocks,
    /// scaled to the whole round), ns.
    pub loop_without_ns: f64,
    /// The same with the timer, ns.
    pub loop_with_ns: f64,
    /// Interrupts handled during the undisturbed blocks with the timer.
    pub interrupts: u64,
    /// Timer expirations that coalesced with a pending signal (not handled).
    pub overruns: u64,
    /// Blocks left out as disturbed, both kinds, all rounds.
    pub dropped_blocks: usize,
    /// Median over rounds of (with − without) ÷ interrupts, ns (may be
    /// negative when noise exceeds the cost).
    pub cost_per_interrupt_ns: f64,
    /// (with − without) ÷ interrupts of each round, ns, signed.
    pub round_costs_ns: Vec<f64>,
}

/// Measures one figure of the model.
pub fn measure(model: &Model) -> Result<(Measurement, PeriodicFacts), ChannelError> {
    match *model {
        Model::Wakeups {
            period,
            duration,
            tolerance,
        } => wakeups(period, duration, tolerance),
        Model::IrqOverhead {
            frequency_hz,
            duration,
            rounds,
        } => irq_overhead(frequency_hz, duration, rounds),
    }
}

fn io_err(op: &'static str) -> impl FnOnce(io::Error) -> ChannelError {
    move |source| ChannelError::Io { op, source }
}

/// Sets the calling thread's timer slack to 1 ns and puts back the previous
/// value on drop: with the default 50 µs slack the kernel may defer every
/// wake-up by up to 50 µs (ENGINEERING.md, pitfall 4).
pub(super) struct SlackGuard {
    previous: u64,
}

impl SlackGuard {
    pub(super) fn tight() -> Result<SlackGuard, ChannelError> {
        let previous = sched::timer_slack().map_err(io_err("PR_GET_TIMERSLACK"))?;
        sched::set_timer_slack(1).map_err(io_err("PR_SET_TIMERSLACK"))?;
        Ok(SlackGuard { previous })
    }
}

impl Drop for SlackGuard {
    fn drop(&mut self) {
        let _ = sched::set_timer_slack(self.previous);
    }
}

/// Number of slices a wake-up run is cut into; each slice's mean latency is
/// one sample (what `compare` and the spread check look at).
const SLICES: u64 = 10;

/// Wake-ups before the timed ones, not recorded: they bring the loop's code
/// and the histogram into the cache.
const WARMUP_WAKEUPS: u64 = 5;

fn wakeups(
    period: Duration,
    duration: Duration,
    tolerance: Option<f64>,
) -> Result<(Measurement, PeriodicFacts), ChannelError> {
    let period_ns = (period.as_nanos() as u64).max(1);
    let n = (duration.as_nanos() as u64 / period_ns).max(1);
    let limit_ns = tolerance.map(|p| (p * period_ns as f64) as u64);
    let _slack = SlackGuard::tight()?;
    let slack = sched::timer_slack().map_err(io_err("PR_GET_TIMERSLACK"))?;
    let mut hist = LatencyHistogram::new();
    let slice_len = n.div_ceil(SLICES);
    let mut samples = Vec::with_capacity(SLICES as usize);
    let (mut slice_sum, mut slice_count) = (0u64, 0u64);
    let mut failures = 0u64;
    let sleep_to = |deadline: u64| {
        // EINTR: a stop request ends the figure; any other signal (a
        // mechanism's wake signal, a stray SIGCHLD with no peer) only sends
        // the task back to sleep until the same absolute deadline.
        retry("clock_nanosleep", || timer::sleep_until_ns(deadline))
    };
    let mut deadline = monotonic_ns() + period_ns;
    for _ in 0..WARMUP_WAKEUPS {
        sleep_to(deadline)?;
        deadline += period_ns;
    }
    // A fresh schedule after the warm-up, so its lateness does not carry over.
    deadline = monotonic_ns() + period_ns;
    for i in 0..n {
        sleep_to(deadline)?;
        let late = monotonic_ns().saturating_sub(deadline);
        hist.record(late);
        if limit_ns.is_some_and(|l| late > l) {
            failures += 1;
        }
        slice_sum += late;
        slice_count += 1;
        if (i + 1) % slice_len == 0 || i + 1 == n {
            samples.push(slice_sum as f64 / slice_count as f64);
            (slice_sum, slice_count) = (0, 0);
        }
        // Absolute deadlines, as a periodic event source has: a task that
        // overran wakes at once for the periods it missed, each counted late.
        deadline += period_ns;
    }
    let latency = hist.percentiles().expect("at least one wake-up");
    let summary = Summary::of(&samples).expect("at least one slice");
    let measurement = Measurement {
        precision: None,
        iterations: n,
        samples_ns: samples,
        summary,
        loop_overhead_ns: 0.0,
        clock_overhead_ns: 0.0,
        latency,
        verified_round_trips: 0,
        histogram: None,
    };
    let facts = PeriodicFacts {
        period_ns,
        // To the mHz: a period of whole ns for 60 Hz reads back as 60.0000024 Hz.
        frequency_hz: (1e12 / period_ns as f64).round() / 1e3,
        duration_ms: duration.as_secs_f64() * 1e3,
        timer_slack_ns: slack,
        sched_policy: sched::policy_name(),
        wakeups: Some(n),
        tolerance,
        failures: tolerance.map(|_| failures),
        fail_ratio: tolerance.map(|_| failures as f64 / n as f64),
        irq: None,
    };
    Ok((measurement, facts))
}

/// A traced pass of wake-ups ([`stamped_wakeups`]): each wake-up's
/// deadline and the clock read right after `clock_nanosleep` returned, on
/// CLOCK_MONOTONIC (the trace clock of `ipcmark explain`), and the
/// sleeping thread.
#[derive(Debug, Clone)]
pub struct StampedWakeups {
    /// (deadline, woke) of each wake-up, ns.
    pub wakeups: Vec<(u64, u64)>,
    /// The thread that slept.
    pub tid: i32,
}

/// Sleeps to `count` successive absolute deadlines `period` apart, with the
/// same loop, warm-up and timer slack as a wake-up figure, and stamps each
/// wake-up; `around(true)` runs after the warm-up, before the first timed
/// deadline is set, and `around(false)` after the last wake-up (on every
/// path once `around(true)` succeeded): tracing is on only around the
/// timed wake-ups. The caller places the thread (CPU, policy).
pub fn stamped_wakeups(
    period: Duration,
    count: usize,
    around: &mut dyn FnMut(bool) -> Result<(), String>,
) -> Result<StampedWakeups, ChannelError> {
    let period_ns = (period.as_nanos() as u64).max(1);
    let count = count.max(1);
    let _slack = SlackGuard::tight()?;
    // Touched now, so that no page fault lands in the pass.
    let mut wakeups = vec![(0u64, 0u64); count];
    let sleep_to = |deadline: u64| retry("clock_nanosleep", || timer::sleep_until_ns(deadline));
    let mut deadline = monotonic_ns() + period_ns;
    for _ in 0..WARMUP_WAKEUPS {
        sleep_to(deadline)?;
        deadline += period_ns;
    }
    around(true).map_err(ChannelError::Setup)?;
    let pass = (|| {
        deadline = monotonic_ns() + period_ns;
        for w in wakeups.iter_mut() {
            sleep_to(deadline)?;
            *w = (deadline, monotonic_ns());
            deadline += period_ns;
        }
        Ok::<(), ChannelError>(())
    })();
    let stopped = around(false).map_err(ChannelError::Setup);
    pass?;
    stopped?;
    Ok(StampedWakeups {
        wakeups,
        tid: crate::sys::process::gettid(),
    })
}

/// Interrupts handled by [`on_tick`] since the last reset.
static TICKS: AtomicU64 = AtomicU64::new(0);

/// The handler whose cost is measured: it only counts.
extern "C" fn on_tick(_: libc::c_int) {
    TICKS.fetch_add(1, Ordering::Relaxed);
}

/// The real-time signal of the interrupt timer (numbers: [`sig::RtSignal`]).
fn tick_signal() -> i32 {
    sig::RtSignal::PeriodicTimer.number()
}

/// One unit of the busy loop's fixed work: integer mixing the compiler
/// cannot remove, with no memory traffic beyond registers.
#[inline(never)]
fn work_chunk(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..1_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Runs `chunks` units of work; returns elapsed ns. Stop requests are
/// checked every 64 chunks (a few µs), the same in both kinds of round.
#[inline(never)]
fn busy(chunks: u64) -> Result<u64, ChannelError> {
    let start = monotonic_ns();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for c in 0..chunks {
        x = work_chunk(black_box(x));
        if c % 64 == 0 {
            interrupt::check()?;
        }
    }
    black_box(x);
    Ok(monotonic_ns() - start)
}

/// Disarms the timer on every path out of a timed round.
struct Armed<'a>(&'a timer::ThreadTimer);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        let _ = self.0.set_period_ns(0);
    }
}

/// Shortest block of a round: long enough to hold interrupts at 4 kHz and
/// above, short enough that a preemption spoils only a few blocks.
const BLOCK_NS: u64 = 1_000_000;

/// A block longer than this multiple of its kind's median block was
/// preempted or disturbed (another task, a migration of the vCPU): it is
/// left out of that round, with its interrupts.
const DISTURBED: f64 = 1.25;

/// Runs one block of `chunks` chunks; returns its time and the interrupts
/// handled during it.
#[inline(never)]
fn busy_block(chunks: u64) -> Result<(u64, u64), ChannelError> {
    let before = TICKS.load(Ordering::Relaxed);
    let t = busy(chunks)?;
    Ok((t, TICKS.load(Ordering::Relaxed) - before))
}

/// Sums time and interrupts over the undisturbed blocks; returns (time,
/// interrupts, blocks kept).
fn undisturbed(blocks: &[(u64, u64)]) -> (f64, u64, usize) {
    let times: Vec<f64> = blocks.iter().map(|b| b.0 as f64).collect();
    let limit = median(&times) * DISTURBED;
    blocks
        .iter()
        .filter(|b| b.0 as f64 <= limit)
        .fold((0.0, 0, 0), |(t, i, n), b| (t + b.0 as f64, i + b.1, n + 1))
}

fn irq_overhead(
    frequency_hz: f64,
    duration: Duration,
    rounds: usize,
) -> Result<(Measurement, PeriodicFacts), ChannelError> {
    let period_ns = ((1e9 / frequency_hz) as u64).max(1);
    let rounds = rounds.max(1);
    let round_ns = duration.as_nanos() as u64 / (2 * rounds as u64);
    // Calibrate: the fastest of several short runs gives the cost of a chunk
    // free of interference; the block's chunk count follows from it.
    let mut chunk_ns = u64::MAX;
    for _ in 0..20 {
        chunk_ns = chunk_ns.min(busy(16)? / 16);
    }
    // A block holds about four interrupts (1 ms at least): the timer is
    // armed at the start of each block with the timer and fires first one
    // period later.
    let block_ns = BLOCK_NS.max(4 * period_ns);
    let chunks = (block_ns / chunk_ns.max(1)).max(1);
    let n_blocks = (round_ns / block_ns).max(1) as usize;
    let mut plain_blocks = vec![(0u64, 0u64); n_blocks];
    let mut timed_blocks = vec![(0u64, 0u64); n_blocks];

    sig::install_handler(tick_signal(), on_tick, 0).map_err(io_err("sigaction"))?;
    let timer = timer::ThreadTimer::new(tick_signal(), crate::sys::process::gettid())
        .map_err(io_err("timer_create"))?;
    let mut without = Vec::with_capacity(rounds);
    let mut with = Vec::with_capacity(rounds);
    let mut costs = Vec::with_capacity(rounds);
    let (mut interrupts, mut overruns, mut dropped) = (0u64, 0u64, 0usize);
    for _ in 0..rounds {
        // Blocks alternate, each pair in alternating order, so that a drift
        // of the machine's speed (another guest, another task) weighs on
        // both kinds alike even within a round.
        for i in 0..n_blocks {
            for with_timer in [i % 2 == 1, i % 2 == 0] {
                if with_timer {
                    timer
                        .set_period_ns(period_ns)
                        .map_err(io_err("timer_settime"))?;
                    let armed = Armed(&timer);
                    timed_blocks[i] = busy_block(chunks)?;
                    overruns += timer.overruns().unwrap_or(0);
                    drop(armed);
                } else {
                    plain_blocks[i] = busy_block(chunks)?;
                }
            }
        }
        // Per block: the extra time of an undisturbed block with the timer
        // over one without, divided by the interrupts such a block received.
        let (t_plain, _, n_plain) = undisturbed(&plain_blocks);
        let (t_timed, ticks, n_timed) = undisturbed(&timed_blocks);
        dropped += 2 * n_blocks - n_plain - n_timed;
        let per_plain = t_plain / n_plain as f64;
        let per_timed = t_timed / n_timed as f64;
        without.push(per_plain * n_blocks as f64);
        with.push(per_timed * n_blocks as f64);
        interrupts += ticks;
        if ticks > 0 {
            costs.push((per_timed - per_plain) * n_timed as f64 / ticks as f64);
        }
    }
    if costs.is_empty() {
        return Err(ChannelError::Io {
            op: "timer",
            source: io::Error::other(format!(
                "no interrupt arrived in {rounds} rounds of {:.1} ms at {frequency_hz} Hz",
                (n_blocks as u64 * block_ns) as f64 / 1e6
            )),
        });
    }
    // Every round's cost as measured, signed: a round at or below zero
    // (noise larger than the effect) is counted as such in the histogram,
    // never floored; a median at or below zero makes the figure
    // below resolution (`FigureResult::judge_resolution`).
    let summary = Summary::of(&costs).expect("finite costs");
    let mut hist = LatencyHistogram::new();
    for &c in &costs {
        hist.record_ns(c);
    }
    let measurement = Measurement {
        precision: None,
        iterations: chunks * n_blocks as u64,
        samples_ns: costs.clone(),
        summary,
        loop_overhead_ns: 0.0,
        clock_overhead_ns: 0.0,
        latency: hist.percentiles().expect("costs recorded"),
        verified_round_trips: 0,
        histogram: None,
    };
    let facts = PeriodicFacts {
        period_ns,
        frequency_hz,
        duration_ms: duration.as_secs_f64() * 1e3,
        timer_slack_ns: sched::timer_slack().map_err(io_err("PR_GET_TIMERSLACK"))?,
        sched_policy: sched::policy_name(),
        wakeups: None,
        tolerance: None,
        failures: None,
        fail_ratio: None,
        irq: Some(IrqFacts {
            rounds,
            loop_without_ns: median(&without),
            loop_with_ns: median(&with),
            interrupts,
            overruns,
            dropped_blocks: dropped,
            cost_per_interrupt_ns: median(&costs),
            round_costs_ns: costs,
        }),
    };
    Ok((measurement, facts))
}
