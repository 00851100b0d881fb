//! The score timing model: operations completed in a fixed period by a set
//! of threads on one CPU (Thread-Metric's "Time Period Total").
//!
//! ```text
//! score S            = operations the test's threads complete in the period
//! interval count     = operations completed between two reports (the period is cut into INTERVALS)
//! rate               = S / measured length of the period
//! R (normalised)     = rate of the test / rate of the baseline test run in the same run
//!                      (= S / H for equal periods: the RTOS study's R = S / H)
//! ```
//!
//! A benchmark describes its threads (name, Thread-Metric priority, whether it
//! starts ready, the loop it runs), the counters they bump, which counters make
//! the score, an optional interrupt routine and the check its reporter makes
//! on the counters; it never times anything. The engine here creates the
//! threads on one CPU, gives them strict priorities (SCHED_FIFO) when the
//! system permits, starts them together, wakes up at each report as the
//! highest-priority thread (Thread-Metric's reporting thread), reads every
//! counter, runs the check, and at the deadline stops and joins every thread
//! before the next figure.
//!
//! Nothing is timed inside the loops: a thread bumps its own counter (one
//! writer, a plain load and store on its own cache line, no lock), and only
//! the reporter reads counters, between the loops' work.

use crate::engine::measure::Measurement;
use crate::engine::os::interrupt;
use crate::engine::os::objects::ObjectNamer;
use crate::stats::{Percentiles, Summary, quantile_sorted};
use crate::sys::{clock::monotonic_ns, sched, signal as sig, sync, timer};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Static facts about a benchmark of the score model, shown by `ipcmark list`.
#[derive(Debug, Clone, Copy)]
pub struct ScoreInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what it measures.
    pub summary: &'static str,
    /// Group it belongs to (`thread-metric`).
    pub group: &'static str,
    /// What one operation of the score is.
    pub operation: &'static str,
    /// The test every other score of the run is normalised by (R = S / H).
    pub is_baseline: bool,
    /// Whether the test means anything only under strict priorities
    /// (SCHED_FIFO): without them it is skipped with the reason.
    pub needs_fifo: bool,
}

/// What a benchmark may use to build its test.
pub struct ScoreContext<'a> {
    /// Names for OS objects (`ipcmark-<pid>-…`).
    pub names: &'a ObjectNamer,
}

/// How a thread's loop ends.
#[derive(Debug)]
pub enum End {
    /// The engine stopped the test (the normal end).
    Stopped,
    /// The thread found a wrong result or a failed call.
    Failed(String),
}

impl From<String> for End {
    fn from(s: String) -> End {
        End::Failed(s)
    }
}

/// A thread's loop: runs until [`Board::running`] says stop.
pub type Body = Box<dyn FnOnce(&Board) -> Result<(), End> + Send>;

/// An interrupt service routine, run in signal context on the thread that
/// raised the interrupt: atomics and async-signal-safe calls only.
pub type Routine = Box<dyn Fn(&Board) + Send + Sync>;

/// Boxes a thread's loop (the closure's signature is deduced from the bound).
pub fn body(f: impl FnOnce(&Board) -> Result<(), End> + Send + 'static) -> Body {
    Box::new(f)
}

/// Boxes an interrupt routine.
pub fn routine(f: impl Fn(&Board) + Send + Sync + 'static) -> Routine {
    Box::new(f)
}

/// One thread of a test.
pub struct ThreadSpec {
    /// Name in reports ("thread 0").
    pub name: &'static str,
    /// Thread-Metric priority: 1 (most urgent) to 31; the reporter is above all.
    pub priority: u8,
    /// Whether it starts ready (`tm_thread_resume` at initialisation) or
    /// suspended until another thread or the interrupt routine resumes it.
    pub ready: bool,
    /// What it runs.
    pub body: Body,
}

/// The check the reporter makes on the counters at every report, as in
/// Thread-Metric's reporting threads.
#[derive(Clone, Copy)]
pub struct Check {
    /// What it checks, for the report.
    pub description: &'static str,
    /// Ok, or what is wrong, given every counter (in declaration order).
    pub test: fn(&[u64]) -> Result<(), String>,
}

/// One test, built by [`Scored::prepare`] for one figure.
pub struct ScoreTest {
    /// Its threads (index = position, used by [`Board::suspend`] / [`Board::resume`]).
    pub threads: Vec<ThreadSpec>,
    /// Names of its counters (index = position, used by [`Board::count`]).
    pub counters: &'static [&'static str],
    /// The counters whose sum is the score.
    pub score: &'static [usize],
    /// The interrupt routine, if the test raises interrupts ([`Board::interrupt`]).
    pub routine: Option<Routine>,
    /// The reporter's check on the counters, if any.
    pub check: Option<Check>,
}

/// A benchmark of the score model: it describes its test, the engine runs it.
pub trait Scored: Sync {
    /// Static description.
    fn info(&self) -> ScoreInfo;
    /// Builds the test: its OS objects and its threads' loops.
    fn prepare(&self, ctx: &ScoreContext) -> Result<ScoreTest, String>;
}

/// The settings a score figure runs under.
#[derive(Debug, Clone)]
pub struct ScoreSettings {
    /// The counting period.
    pub period: Duration,
    /// Reports within the period (Thread-Metric reports once per period).
    pub intervals: usize,
    /// CPU every thread of the test runs on.
    pub cpu: Option<usize>,
    /// Whether the threads run under SCHED_FIFO with their priorities.
    pub fifo: bool,
    /// How long threads may take to become ready or to stop.
    pub timeout: Duration,
    /// Test-only fault: the first thread runs one priority above its peers.
    pub unfair: bool,
}

/// Reports a period is cut into by default: enough for a spread, few
/// enough that the reporter's wake-ups cost nothing measurable.
pub const INTERVALS: usize = 5;

/// SCHED_FIFO priority of the reporter (the measuring thread): above every
/// test thread, as Thread-Metric's reporting thread (priority 2) is.
pub const REPORTER_FIFO: i32 = 50;

/// SCHED_FIFO priority of a Thread-Metric priority (lower number = more
/// urgent): 40 − p, so 1..31 map to 39..9, all below the reporter.
pub fn fifo_priority(tm_priority: u8) -> i32 {
    40 - i32::from(tm_priority.min(31))
}

/// The real-time signal standing in for the software interrupt (numbers:
/// [`sig::RtSignal`]).
pub fn interrupt_signal() -> i32 {
    sig::RtSignal::ScoreInterrupt.number()
}

/// Most the reporter sleeps at once, so that a stop request or a failed
/// thread ends the figure soon.
const POLL_NS: u64 = 50_000_000;

/// A counter on its own cache line.
#[repr(align(64))]
struct Padded(AtomicU64);

/// A thread's suspension word: 0 none pending, 1 a resume pending, 2 stopping.
#[repr(align(64))]
struct Gate(AtomicU32);

const PENDING: u32 = 1;
const STOPPING: u32 = 2;

/// What the threads of a test share with each other and with the reporter:
/// counters, suspension gates, the stop flag.
pub struct Board {
    stop: AtomicBool,
    counters: Box<[Padded]>,
    gates: Box<[Gate]>,
    start: AtomicU32,
    ready: AtomicU32,
    interrupts: bool,
    failure: Mutex<Option<String>>,
}

impl Board {
    fn new(threads: usize, counters: usize, interrupts: bool) -> Board {
        Board {
            stop: AtomicBool::new(false),
            counters: (0..counters).map(|_| Padded(AtomicU64::new(0))).collect(),
            gates: (0..threads).map(|_| Gate(AtomicU32::new(0))).collect(),
            start: AtomicU32::new(0),
            ready: AtomicU32::new(0),
            interrupts,
            failure: Mutex::new(None),
        }
    }

    /// `Err(End::Stopped)` once the period is over: loops call it each turn.
    #[inline]
    pub fn running(&self) -> Result<(), End> {
        if self.stop.load(Ordering::Relaxed) {
            Err(End::Stopped)
        } else {
            Ok(())
        }
    }

    /// Adds one to counter `c`. Each counter has one writer (a thread, or
    /// the interrupt routine on the one thread that raises it): a plain load
    /// and store, no locked instruction.
    #[inline]
    pub fn count(&self, c: usize) {
        let a = &self.counters[c].0;
        a.store(a.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// Suspends thread `me` (the caller) until another thread or the
    /// interrupt routine resumes it (`tm_thread_suspend`): a futex wait.
    #[inline]
    pub fn suspend(&self, me: usize) -> Result<(), End> {
        let g = &self.gates[me].0;
        loop {
            match g.compare_exchange(PENDING, 0, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(STOPPING) => return Err(End::Stopped),
                Err(_) => {}
            }
            match sync::futex_wait_private(g, 0) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(End::Failed(format!("futex wait: {e}"))),
            }
        }
    }

    /// Resumes thread `t` (`tm_thread_resume`): marks a resume pending and
    /// wakes it; under SCHED_FIFO a more urgent thread runs at once.
    /// Async-signal-safe: the interrupt routine may call it.
    #[inline]
    pub fn resume(&self, t: usize) -> Result<(), End> {
        let g = &self.gates[t].0;
        if g.compare_exchange(0, PENDING, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            sync::futex_wake_private(g, 1).map_err(|e| End::Failed(format!("futex wake: {e}")))?;
        }
        Ok(())
    }

    /// Gives the CPU to the next ready thread of the same priority
    /// (`tm_thread_relinquish`): `sched_yield`.
    #[inline]
    pub fn relinquish(&self) -> Result<(), End> {
        sched::yield_cpu().map_err(|e| End::Failed(format!("sched_yield: {e}")))
    }

    /// Raises the software interrupt on the calling thread
    /// (`TM_CAUSE_INTERRUPT`): the routine has run when this returns.
    #[inline]
    pub fn interrupt(&self) -> Result<(), End> {
        if !self.interrupts {
            return Err(End::Failed("interrupt raised without a routine".into()));
        }
        sig::raise_here(interrupt_signal()).map_err(|e| End::Failed(format!("pthread_kill: {e}")))
    }

    fn fail(&self, why: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(why);
        drop(f);
        self.stop_all();
    }

    fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Ends the test: every loop sees the flag, every suspended thread wakes.
    fn stop_all(&self) {
        self.stop.store(true, Ordering::SeqCst);
        for g in self.gates.iter() {
            g.0.store(STOPPING, Ordering::SeqCst);
            let _ = sync::futex_wake_private(&g.0, i32::MAX);
        }
        self.start.store(1, Ordering::SeqCst);
        let _ = sync::futex_wake_private(&self.start, i32::MAX);
    }

    fn read(&self, into: &mut [u64]) {
        for (v, c) in into.iter_mut().zip(self.counters.iter()) {
            *v = c.0.load(Ordering::Relaxed);
        }
    }
}

/// One thread as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRecord {
    /// Name ("thread 0").
    pub name: &'static str,
    /// Thread-Metric priority (lower is more urgent).
    pub priority: u8,
    /// SCHED_FIFO priority it ran at; null under SCHED_OTHER.
    pub fifo_priority: Option<i32>,
}

/// One counter at the last report.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterRecord {
    /// Name ("thread 0", "interrupt handler").
    pub name: &'static str,
    /// Its value.
    pub value: u64,
}

/// What a score figure recorded (JSON `score`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreFacts {
    /// What one operation is.
    pub operation: &'static str,
    /// Planned counting period, ns.
    pub period_ns: u64,
    /// Measured length from the start to the last report, ns.
    pub elapsed_ns: u64,
    /// The score S: operations completed in the period.
    pub operations: u64,
    /// operations ÷ elapsed, per second.
    pub ops_per_s: f64,
    /// Whether this test is the baseline others are normalised by.
    pub is_baseline: bool,
    /// The baseline that ran in the same run, if one did.
    pub baseline: Option<&'static str>,
    /// R = this rate ÷ the baseline's rate (S / H); null without a baseline.
    pub relative_to_baseline: Option<f64>,
    /// Operations in each reporting interval.
    pub interval_operations: Vec<u64>,
    /// Length of each reporting interval, ns.
    pub interval_ns: Vec<u64>,
    /// (max − min) ÷ median of the intervals' rates.
    pub interval_spread: f64,
    /// Scheduling policy of the test's threads.
    pub sched_policy: &'static str,
    /// The test's threads.
    pub threads: Vec<ThreadRecord>,
    /// Every counter at the last report.
    pub counters: Vec<CounterRecord>,
    /// The checks made at every report (all passed when the status is ok).
    pub checks: Vec<&'static str>,
}

/// Why a score figure did not produce a figure, with what was recorded so far.
pub struct ScoreFailure {
    /// One line.
    pub message: String,
    /// The counters and threads up to the failure, if the test started.
    pub facts: Option<Box<ScoreFacts>>,
}

impl From<String> for ScoreFailure {
    fn from(message: String) -> Self {
        ScoreFailure {
            message,
            facts: None,
        }
    }
}

/// The checks the engine makes on every test, beside the test's own.
const PROGRESS_CHECK: &str =
    "the score advanced in every other interval at least, and in the period";

/// Runs one test for the period on the calling thread's CPU, the caller
/// being the reporter (placed by the runner at [`REPORTER_FIFO`] when
/// `s.fifo`). Every thread is joined before this returns, on every path.
pub fn measure(
    info: &ScoreInfo,
    test: ScoreTest,
    s: &ScoreSettings,
) -> Result<(Measurement, ScoreFacts), ScoreFailure> {
    let ScoreTest {
        threads,
        counters,
        score,
        routine,
        check,
    } = test;
    if threads.is_empty() || score.iter().any(|&c| c >= counters.len()) {
        return Err("the test has no threads or scores an unknown counter"
            .to_string()
            .into());
    }
    let board = Arc::new(Board::new(threads.len(), counters.len(), routine.is_some()));
    let thread_records: Vec<ThreadRecord> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| ThreadRecord {
            name: t.name,
            priority: t.priority,
            fifo_priority: s
                .fifo
                .then(|| fifo_priority(t.priority) + i32::from(s.unfair && i == 0)),
        })
        .collect();
    // Installed before any thread starts, removed after all are joined.
    let isr = match routine {
        Some(r) => {
            let b = Arc::clone(&board);
            Some(
                sig::Isr::install(interrupt_signal(), Box::new(move || r(&b)))
                    .map_err(|e| format!("install the interrupt routine: {e}"))?,
            )
        }
        None => None,
    };
    // Test threads take only the interrupt signal: stop requests, the
    // watchdog and child exits go to the reporter, whose sleep they end.
    let mut mask = sig::SigSet::full();
    mask.remove(interrupt_signal());
    let mut handles = Vec::with_capacity(threads.len());
    let mut spawn_error = None;
    for (i, t) in threads.into_iter().enumerate() {
        let b = Arc::clone(&board);
        let fifo = thread_records[i].fifo_priority;
        let ThreadSpec {
            name, ready, body, ..
        } = t;
        let spawned = std::thread::Builder::new()
            .name(format!("tm {name}"))
            .spawn(move || run_thread(&b, i, name, fifo, ready, mask, body));
        match spawned {
            Ok(h) => handles.push((name, h)),
            Err(e) => {
                spawn_error = Some(format!("spawn {name}: {e}"));
                break;
            }
        }
    }
    let outcome = match spawn_error {
        Some(e) => Err((e, None)),
        None => report(&board, handles.len(), counters, score, check, s),
    };
    board.stop_all();
    let mut join_error = None;
    for (name, h) in handles {
        if h.join().is_err() {
            join_error.get_or_insert(format!("{name} panicked"));
        }
    }
    drop(isr);
    let failure = board.failure().or(join_error);
    let checks: Vec<&'static str> = check
        .iter()
        .map(|c| c.description)
        .chain(std::iter::once(PROGRESS_CHECK))
        .collect();
    let record = |r: &Reports| facts(info, s, r, counters, score, &thread_records, &checks);
    match (outcome, failure) {
        (Ok(r), None) => Ok((r.measurement(score), record(&r))),
        (Ok(r), Some(f)) => Err(ScoreFailure {
            message: f,
            facts: Some(Box::new(record(&r))),
        }),
        (Err((why, r)), thread_failure) => Err(ScoreFailure {
            // A thread's own error says more than the reporter's symptom.
            message: thread_failure.unwrap_or(why),
            facts: r.as_ref().map(|r| Box::new(record(r))),
        }),
    }
}

/// A test thread: placed, masked, ready, then its loop after the start.
fn run_thread(
    board: &Board,
    me: usize,
    name: &'static str,
    fifo: Option<i32>,
    ready: bool,
    mask: sig::SigSet,
    body: Body,
) {
    let setup = (|| {
        sig::thread_mask(libc::SIG_SETMASK, &mask).map_err(|e| format!("signal mask: {e}"))?;
        if let Some(p) = fifo {
            sched::set_fifo(p).map_err(|e| format!("SCHED_FIFO {p}: {e}"))?;
        }
        Ok::<(), String>(())
    })();
    board.ready.fetch_add(1, Ordering::SeqCst);
    if let Err(e) = setup {
        board.fail(format!("{name}: {e}"));
        return;
    }
    while board.start.load(Ordering::SeqCst) == 0 {
        let _ = sync::futex_wait_private(&board.start, 0);
    }
    let ran = (|| {
        board.running()?;
        if !ready {
            board.suspend(me)?;
        }
        body(board)
    })();
    if let Err(End::Failed(why)) = ran {
        board.fail(format!("{name}: {why}"));
    }
}

/// The counters read at each report.
struct Reports {
    /// Start of the period (monotonic ns).
    start_ns: u64,
    /// Time of each report.
    at_ns: Vec<u64>,
    /// Every counter at each report.
    counters: Vec<Vec<u64>>,
}

impl Reports {
    fn score_at(&self, k: usize, score: &[usize]) -> u64 {
        score.iter().map(|&c| self.counters[k][c]).sum()
    }

    fn operations(&self, score: &[usize]) -> Vec<u64> {
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

    fn lengths(&self) -> Vec<u64> {
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

    fn elapsed(&self) -> u64 {
        self.at_ns.last().map_or(0, |t| t - self.start_ns)
    }

    /// Time per operation of each interval (what `compare` reads), the
    /// score's iterations, and the spread, in the shape other figures have.
    fn measurement(&self, score: &[usize]) -> Measurement {
        let samples: Vec<f64> = self
            .lengths()
            .iter()
            .zip(self.operations(score))
            .map(|(&t, n)| t as f64 / n.max(1) as f64)
            .collect();
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        let q = |p| quantile_sorted(&sorted, p).round() as u64;
        Measurement {
            // A count over a fixed period, not a median sampled to a precision.
            precision: None,
            iterations: self.score_at(self.counters.len() - 1, score).max(1),
            summary: Summary::of(&samples).expect("at least one interval"),
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
            },
            verified_round_trips: 0,
            histogram: None,
        }
    }
}

/// The reporter: starts the threads, wakes at each interval's end, reads
/// and checks the counters. On a failure, returns why with the reports so far.
fn report(
    board: &Board,
    threads: usize,
    counter_names: &[&str],
    score: &[usize],
    check: Option<Check>,
    s: &ScoreSettings,
) -> Result<Reports, (String, Option<Reports>)> {
    let deadline = monotonic_ns() + s.timeout.as_nanos() as u64;
    while board.ready.load(Ordering::SeqCst) < threads as u32 {
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
    board.start.store(1, Ordering::SeqCst);
    let _ = sync::futex_wake_private(&board.start, i32::MAX);
    let mut stalled_before = false;
    for k in 0..n {
        let target = r.start_ns + period_ns * (k as u64 + 1) / n as u64;
        loop {
            if board.stop.load(Ordering::SeqCst) {
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

fn facts(
    info: &ScoreInfo,
    s: &ScoreSettings,
    r: &Reports,
    counter_names: &[&'static str],
    score: &[usize],
    threads: &[ThreadRecord],
    checks: &[&'static str],
) -> ScoreFacts {
    let ops = r.operations(score);
    let lengths = r.lengths();
    let mut rates: Vec<f64> = ops
        .iter()
        .zip(&lengths)
        .map(|(&n, &t)| n as f64 / t.max(1) as f64)
        .collect();
    rates.sort_by(f64::total_cmp);
    let median = quantile_sorted(&rates, 0.5);
    let spread = if median > 0.0 {
        (rates[rates.len() - 1] - rates[0]) / median
    } else {
        0.0
    };
    let last = r.counters.len() - 1;
    let operations = r.score_at(last, score);
    let elapsed = r.elapsed();
    ScoreFacts {
        operation: info.operation,
        period_ns: s.period.as_nanos() as u64,
        elapsed_ns: elapsed,
        operations,
        ops_per_s: operations as f64 / (elapsed.max(1) as f64 * 1e-9),
        is_baseline: info.is_baseline,
        baseline: None,
        relative_to_baseline: None,
        interval_operations: ops,
        interval_ns: lengths,
        interval_spread: spread,
        sched_policy: if s.fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
        threads: threads.to_vec(),
        counters: counter_names
            .iter()
            .zip(&r.counters[last])
            .map(|(&name, &value)| CounterRecord { name, value })
            .collect(),
        checks: checks.to_vec(),
    }
}

/// Thread-Metric's relative-counter check: every counter within 1 of the
/// (integer) average of all of them. Cooperative threads taking turns
/// strictly pass it; an unfair schedule fails it.
pub fn within_one_of_average(counters: &[u64]) -> Result<(), String> {
    if counters.is_empty() {
        return Ok(());
    }
    let average = counters.iter().sum::<u64>() / counters.len() as u64;
    match counters
        .iter()
        .position(|&c| c + 1 < average || c > average + 1)
    {
        None => Ok(()),
        Some(i) => Err(format!(
            "counter {i} is {}, more than 1 from the average {average}",
            counters[i]
        )),
    }
}

/// The order check of a chain of strict priorities: the counters, most
/// urgent first, never increase along the list, and the first is at most 1
/// above the last (each turn every link counts once, most urgent first).
pub fn descending_by_at_most_one(counters: &[u64]) -> Result<(), String> {
    for i in 1..counters.len() {
        if counters[i] > counters[i - 1] {
            return Err(format!(
                "counter {i} ({}) ran ahead of the more urgent counter {} ({})",
                counters[i],
                i - 1,
                counters[i - 1]
            ));
        }
    }
    match (counters.first(), counters.last()) {
        (Some(&first), Some(&last)) if first > last + 1 => Err(format!(
            "the most urgent counter ({first}) is more than 1 ahead of the least ({last})"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run::figure::Outcome;

    #[test]
    fn fair_turns_pass_and_an_unfair_schedule_fails() {
        assert!(within_one_of_average(&[7, 7, 7, 7, 7]).is_ok());
        assert!(within_one_of_average(&[8, 8, 7, 7, 7]).is_ok());
        assert!(within_one_of_average(&[0, 0, 0, 0, 0]).is_ok());
        assert!(within_one_of_average(&[1, 0, 0, 0, 0]).is_ok());
        // One thread ran twice as often as its peers.
        let e = within_one_of_average(&[20, 10, 10, 10, 10]).unwrap_err();
        assert!(e.contains("counter 0 is 20"), "{e}");
        // A thread that never ran.
        assert!(within_one_of_average(&[0, 5, 5, 5, 5]).is_err());
    }

    #[test]
    fn order_check_accepts_a_chain_and_rejects_an_inversion() {
        assert!(descending_by_at_most_one(&[5, 5, 5, 5, 5]).is_ok());
        assert!(descending_by_at_most_one(&[6, 6, 5, 5, 5]).is_ok());
        assert!(descending_by_at_most_one(&[5, 6, 5, 5, 5]).is_err());
        assert!(descending_by_at_most_one(&[7, 6, 6, 5, 5]).is_err());
        assert!(descending_by_at_most_one(&[7, 6]).is_ok());
    }

    /// A test of two threads handing a turn back and forth through
    /// suspend/resume, and an interrupt; `fail_after` makes thread 1 fail.
    struct PingPong {
        fail_after: Option<u64>,
    }

    impl Scored for PingPong {
        fn info(&self) -> ScoreInfo {
            ScoreInfo {
                id: "test-pingpong",
                summary: "two threads taking turns",
                group: "test",
                operation: "one turn",
                is_baseline: false,
                needs_fifo: false,
            }
        }

        fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
            let fail_after = self.fail_after;
            Ok(ScoreTest {
                threads: vec![
                    ThreadSpec {
                        name: "thread 0",
                        priority: 10,
                        ready: true,
                        body: body(|b| {
                            loop {
                                b.running()?;
                                b.interrupt()?;
                                b.resume(1)?;
                                b.suspend(0)?;
                            }
                        }),
                    },
                    ThreadSpec {
                        name: "thread 1",
                        priority: 10,
                        ready: false,
                        body: body(move |b| {
                            let mut n = 0u64;
                            loop {
                                b.running()?;
                                b.count(0);
                                n += 1;
                                if fail_after.is_some_and(|f| n >= f) {
                                    return Err("deliberate failure".to_string().into());
                                }
                                b.resume(0)?;
                                b.suspend(1)?;
                            }
                        }),
                    },
                ],
                counters: &["turns", "interrupts"],
                score: &[0],
                routine: Some(routine(|b| b.count(1))),
                check: Some(Check {
                    description: "one interrupt per turn",
                    test: |c| {
                        if c[1] == c[0] || c[1] == c[0] + 1 {
                            Ok(())
                        } else {
                            Err(format!("{} interrupts for {} turns", c[1], c[0]))
                        }
                    },
                }),
            })
        }
    }

    /// Serialises the tests that install the interrupt routine.
    static ROUTINE: Mutex<()> = Mutex::new(());

    fn settings() -> ScoreSettings {
        ScoreSettings {
            period: Duration::from_millis(50),
            intervals: INTERVALS,
            cpu: sched::current_cpu(),
            fifo: crate::engine::os::placement::probe_rt(REPORTER_FIFO).is_ok(),
            timeout: Duration::from_secs(5),
            unfair: false,
        }
    }

    #[test]
    fn a_figure_counts_checks_joins_and_restores_the_thread() {
        let _g = ROUTINE.lock().unwrap_or_else(|p| p.into_inner());
        let cpus = sched::allowed_cpus().unwrap();
        let names = ObjectNamer::new();
        let r = crate::engine::run::runner::run_score_figure(
            &PingPong { fail_after: None },
            &settings(),
            None,
            &names,
        );
        assert!(matches!(r.outcome, Outcome::Ok(_)), "{:?}", r.outcome);
        let f = r.score().unwrap();
        assert_eq!(f.interval_operations.len(), INTERVALS);
        assert_eq!(f.operations, f.interval_operations.iter().sum::<u64>());
        assert_eq!(f.counters[0].value, f.operations);
        assert!(f.operations > 0);
        assert_eq!(sched::policy_name(), "SCHED_OTHER");
        assert_eq!(sched::allowed_cpus().unwrap(), cpus);
    }

    #[test]
    fn a_thread_error_fails_the_figure_and_still_joins_everything() {
        let _g = ROUTINE.lock().unwrap_or_else(|p| p.into_inner());
        let names = ObjectNamer::new();
        let r = crate::engine::run::runner::run_score_figure(
            &PingPong {
                fail_after: Some(100),
            },
            &settings(),
            None,
            &names,
        );
        match &r.outcome {
            Outcome::Failed(e) => assert!(e.contains("thread 1: deliberate failure"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(sched::policy_name(), "SCHED_OTHER");
        // The routine is gone: another can be installed.
        let isr = sig::Isr::install(interrupt_signal(), Box::new(|| {})).unwrap();
        drop(isr);
    }

    #[test]
    fn priorities_keep_thread_metric_order_below_the_reporter() {
        assert!(fifo_priority(3) > fifo_priority(10));
        assert!(fifo_priority(1) < REPORTER_FIFO);
        assert!(fifo_priority(31) >= 1);
    }
}
