//! `philosophers`: the dining philosophers of the study's semaphore test.
//!
//! N philosophers (processes) sit at a round table with one fork between each
//! two neighbours; philosopher i eats with forks i (left) and i+1 (right). A
//! philosopher thinks (sleeps), takes *both* its forks in one atomic step or
//! none, eats (a fixed amount of CPU work), and puts them down. No philosopher
//! ever holds one fork alone, so none can deadlock. The figure is the number of
//! meals each one eats in a fixed time.
//!
//! The table keeps, next to the forks, one "eating" flag per philosopher that
//! changes in the same atomic step as its forks. Every eating philosopher takes
//! an atomic snapshot of the whole table (forks and flags) when it starts and
//! when it finishes eating, and checks that every fork in use belongs to
//! exactly one eating neighbour. A philosopher waiting with one fork in hand,
//! two neighbours sharing a fork, or a philosopher eating without a fork fails
//! the run: the claim is checked, not trusted (`--fault split-take` shows the
//! check catching a one-fork-at-a-time table).
//!
//! That snapshot is the primitive's own state, in which some failures cannot
//! even be represented (a System V fork cannot be taken twice: its semaphore
//! would go below zero). So each fork also has an owner word in shared memory,
//! outside the primitive: a philosopher who has taken a fork checks that the
//! word is free and writes its own number, checks at the start and the end of
//! every meal that both its forks' words hold its number, and clears them
//! (still holding its number) before it puts the forks down. Two philosophers
//! with one fork fail the run, naming the fork and both of them (`--fault
//! skip-forks` shows it: philosophers that bypass the primitive).

use super::common::{self, LockKind};
use super::{
    Fault, Headline, Opt, Params, Prepared, ProcessRecord, RunContext, RunError, RunRecord,
    Workload, WorkloadInfo,
};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::os::group::Member;
use crate::engine::os::objects::{Cleanup, ObjectNamer};
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use crate::sys::posix_ipc::NamedSemaphore;
use crate::sys::sync::{futex_wait_bitset, futex_wake_bitset};
use crate::sys::sysv;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::Duration;

/// The dining philosophers.
pub struct Philosophers;

/// The study's table.
const DEFAULT_PHILOSOPHERS: usize = 5;
/// Most philosophers: the table's state fits one 32-bit word per kind.
pub const MAX_PHILOSOPHERS: usize = 32;
/// Most philosophers with futex forks: forks and flags share one futex word.
const MAX_FUTEX_PHILOSOPHERS: usize = 16;
/// The study's shape (see docs/workloads.md): 5 philosophers ate ≈ 600 meals
/// each in 30 s on one CPU and ≈ 750 unconstrained, i.e. a 40 ms cycle of which
/// 10 ms is CPU work.
const DEFAULT_THINK: Duration = Duration::from_millis(30);
const DEFAULT_EAT: Duration = Duration::from_millis(10);
const DEFAULT_DURATION: Duration = Duration::from_secs(30);

/// Counters each philosopher reports, in this order.
const COUNTERS: [&str; 5] = [
    "meals",
    "hungry_ns",
    "eating_ns",
    "table_checks",
    "owner_checks",
];

impl Workload for Philosophers {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            id: "philosophers",
            summary: "N philosophers (processes) take both forks of a System V semaphore set (or POSIX semaphores, or a futex) in one atomic step, think and eat for a fixed time; meals per philosopher",
            operation: "meal",
            headline: Headline::Count,
            options: &[
                Opt::Duration,
                Opt::Philosophers,
                Opt::Think,
                Opt::Eat,
                Opt::Mechanism,
            ],
            faults: &[Fault::SplitTake, Fault::SkipForks],
        }
    }

    fn prepare(&self, p: &Params) -> Result<Box<dyn Prepared>, String> {
        Ok(Box::new(Table::resolve(p)?))
    }
}

/// Resolved settings, shared with the run across MPI ranks
/// (`mpi::workloads`).
pub struct Table {
    /// Philosophers at the table.
    pub n: usize,
    /// The forks' primitive, for the local run.
    pub kind: LockKind,
    /// Thinking time, a sleep.
    pub think: Duration,
    /// Eating time, as CPU work.
    pub eat: Duration,
    /// Length of a run.
    pub duration: Duration,
    /// Steps of [`common::spin_work`] per ms, calibrated here.
    pub work_per_ms: f64,
    /// Steps of CPU work one meal takes.
    pub eat_iters: u64,
    split_take: bool,
    /// Test fault: philosophers eat without taking their forks.
    skip_forks: bool,
}

impl Table {
    /// The defaults applied and the limits checked (an error is a usage
    /// error), and the CPU work of a meal calibrated on this machine.
    pub fn resolve(p: &Params) -> Result<Table, String> {
        let n = p.philosophers.unwrap_or(DEFAULT_PHILOSOPHERS);
        let kind = p.mechanism.unwrap_or(LockKind::SysvSem);
        if !(2..=MAX_PHILOSOPHERS).contains(&n) {
            return Err(format!(
                "--philosophers {n}: from 2 to {MAX_PHILOSOPHERS} philosophers"
            ));
        }
        if kind == LockKind::Futex && n > MAX_FUTEX_PHILOSOPHERS {
            return Err(format!(
                "--philosophers {n} with --mechanism futex: at most {MAX_FUTEX_PHILOSOPHERS} (forks and eating flags share one 32-bit futex word)"
            ));
        }
        let eat = p.eat.unwrap_or(DEFAULT_EAT);
        let work_per_ms = common::calibrate_work();
        Ok(Table {
            n,
            kind,
            think: p.think.unwrap_or(DEFAULT_THINK),
            eat,
            duration: p.duration.unwrap_or(DEFAULT_DURATION),
            work_per_ms,
            eat_iters: (eat.as_secs_f64() * 1e3 * work_per_ms).round() as u64,
            split_take: p.fault == Some(Fault::SplitTake),
            skip_forks: p.fault == Some(Fault::SkipForks),
        })
    }

    /// Eats: the meal's CPU work.
    pub fn eat_once(&self) {
        common::spin_work(self.eat_iters);
    }

    /// Philosopher `i`'s forks (from 0): left and right.
    pub fn forks_of(&self, i: usize) -> (usize, usize) {
        (i, (i + 1) % self.n)
    }
}

/// The run-level figures of a table from each philosopher's meals: total,
/// min, max and Jain's fairness index.
pub fn meal_metrics(meals: &[u64]) -> Vec<(&'static str, f64)> {
    vec![
        ("total_meals", meals.iter().sum::<u64>() as f64),
        ("min_meals", meals.iter().copied().min().unwrap_or(0) as f64),
        ("max_meals", meals.iter().copied().max().unwrap_or(0) as f64),
        ("jain_fairness", crate::stats::jain_index(meals)),
    ]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Prepared for Table {
    fn roles(&self) -> Vec<String> {
        (1..=self.n).map(|i| format!("philosopher {i}")).collect()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "philosophers": self.n,
            "mechanism": self.kind.id(),
            "think_ms": ms(self.think),
            "eat_ms": ms(self.eat),
            "work_iterations_per_ms": self.work_per_ms,
            "eat_iterations": self.eat_iters,
        })
    }

    fn duration(&self) -> Option<Duration> {
        Some(self.duration)
    }

    fn run(&self, ctx: &RunContext) -> Result<RunRecord, RunError> {
        let roles = self.roles();
        // Declared before the group, so dropped after it: the forks outlive
        // every philosopher on every path.
        let forks = Forks::create(self.kind, self.n, ctx.names)?;
        let owners = Owners::new(self.n)?;
        let group = common::spawn(ctx, &roles, |m| self.philosopher(m, &forks, &owners))?;
        // The longest a meal may take: thinking, eating (with a margin for a
        // CPU shared with every other philosopher), and waiting for forks.
        let longest = self.think + self.eat * (self.n as u32 + 1);
        let report = common::finish(group, ctx, &roles, Some(self.duration), longest)?;
        let meals: Vec<u64> = report.members.iter().map(|m| m.ops).collect();
        let total: u64 = meals.iter().sum();
        let checks: u64 = report.members.iter().map(|m| m.counters[3]).sum();
        let owner_checks: u64 = report.members.iter().map(|m| m.counters[4]).sum();
        let mut metrics = meal_metrics(&meals);
        metrics.extend([
            ("table_checks", checks as f64),
            ("owner_checks", owner_checks as f64),
        ]);
        Ok(RunRecord {
            elapsed_ns: report.elapsed_ns,
            stopped_after_ns: report.stopped_after_ns,
            figure: total as f64,
            processes: report
                .members
                .into_iter()
                .zip(roles)
                .map(|(r, role)| ProcessRecord {
                    role,
                    rank: None,
                    counters: COUNTERS
                        .iter()
                        .enumerate()
                        .map(|(i, &name)| (name, r.counters[i]))
                        .collect(),
                    report: r,
                })
                .collect(),
            metrics,
            places: Vec::new(),
        })
    }
}

impl Table {
    /// One philosopher's life, in its own process. A meal counts if the
    /// philosopher took its forks before the stop.
    fn philosopher(
        &self,
        m: &mut Member,
        forks: &Forks,
        owners: &Owners,
    ) -> Result<(), ChannelError> {
        let i = m.index();
        let mine = self.forks_of(i);
        let mut snapshot = vec![0u16; 2 * self.n];
        let (mut meals, mut hungry_ns, mut eating_ns) = (0u64, 0u64, 0u64);
        let (mut checks, mut owner_checks) = (0u64, 0u64);
        loop {
            m.before_op(meals)?;
            common::pause(self.think);
            if m.stop_requested() {
                break;
            }
            let hungry = monotonic_ns();
            if !self.skip_forks {
                forks.take(i, self.split_take)?;
            }
            owners.claim(i, mine)?;
            let start = monotonic_ns();
            hungry_ns += start - hungry;
            if m.stop_requested() {
                owners.release(i, mine)?;
                self.put(forks, i)?;
                break;
            }
            forks.check(&mut snapshot)?;
            owners.verify(i, mine)?;
            self.eat_once();
            forks.check(&mut snapshot)?;
            owners.verify(i, mine)?;
            checks += 2;
            owner_checks += 2;
            eating_ns += monotonic_ns() - start;
            owners.release(i, mine)?;
            self.put(forks, i)?;
            meals += 1;
        }
        m.set_ops(meals);
        for (c, v) in [meals, hungry_ns, eating_ns, checks, owner_checks]
            .into_iter()
            .enumerate()
        {
            m.set_counter(c, v);
        }
        Ok(())
    }

    /// Puts philosopher `i`'s forks down, unless the fault skips them.
    fn put(&self, forks: &Forks, i: usize) -> Result<(), ChannelError> {
        if self.skip_forks {
            Ok(())
        } else {
            forks.put(i)
        }
    }
}

/// The owner word of every fork, in shared memory beside the primitive and
/// never touched by it: 0 while the fork is on the table, p + 1 while
/// philosopher p holds it.
struct Owners {
    map: SharedMapping,
}

/// The number a philosopher writes in its forks' owner words.
fn owner_id(i: usize) -> u32 {
    i as u32 + 1
}

/// Names the holder an owner word records.
fn holder(word: u32) -> String {
    match word {
        0 => "nobody".to_string(),
        p => format!("philosopher {p}"),
    }
}

impl Owners {
    fn new(n: usize) -> Result<Owners, RunError> {
        let map = SharedMapping::new(4 * n)
            .map_err(|e| RunError::Failed(format!("mmap owner words: {e}")))?;
        Ok(Owners { map })
    }

    fn word(&self, fork: usize) -> &AtomicU32 {
        self.map.atomic_u32(4 * fork)
    }

    /// Philosopher `i`, having taken `forks`, marks them its own: each must
    /// have been free.
    fn claim(&self, i: usize, forks: (usize, usize)) -> Result<(), ChannelError> {
        for f in [forks.0, forks.1] {
            if let Err(other) =
                self.word(f)
                    .compare_exchange(0, owner_id(i), Ordering::AcqRel, Ordering::Acquire)
            {
                return Err(ChannelError::Check(format!(
                    "philosopher {} took fork {} while {} held it: two philosophers share a fork",
                    i + 1,
                    f + 1,
                    holder(other)
                )));
            }
        }
        Ok(())
    }

    /// Both of philosopher `i`'s forks are still its own.
    fn verify(&self, i: usize, forks: (usize, usize)) -> Result<(), ChannelError> {
        for f in [forks.0, forks.1] {
            let word = self.word(f).load(Ordering::Acquire);
            if word != owner_id(i) {
                return Err(ChannelError::Check(format!(
                    "philosopher {} eats with fork {}, but its owner word says {} holds it",
                    i + 1,
                    f + 1,
                    holder(word)
                )));
            }
        }
        Ok(())
    }

    /// Philosopher `i`, before putting `forks` down, clears their words:
    /// each must still be its own.
    fn release(&self, i: usize, forks: (usize, usize)) -> Result<(), ChannelError> {
        for f in [forks.0, forks.1] {
            if let Err(other) =
                self.word(f)
                    .compare_exchange(owner_id(i), 0, Ordering::AcqRel, Ordering::Acquire)
            {
                return Err(ChannelError::Check(format!(
                    "philosopher {} puts fork {} down, but its owner word says {} holds it",
                    i + 1,
                    f + 1,
                    holder(other)
                )));
            }
        }
        Ok(())
    }
}

/// The forks and eating flags of one table, in one of three primitives.
enum Forks {
    /// One System V set: semaphores 0..n are the forks (1 = on the table),
    /// n..2n the eating flags. Taking is one `semop` of three operations.
    Sysv { id: i32, n: usize, _remove: Cleanup },
    /// The state in shared memory, changed only under a POSIX semaphore used
    /// as a mutex; a hungry philosopher that cannot take its forks sleeps on
    /// its own semaphore until a neighbour puts a fork down (Tanenbaum's
    /// solution, generalised).
    Posix {
        map: SharedMapping,
        mutex: NamedSemaphore,
        wake: Vec<NamedSemaphore>,
        n: usize,
    },
    /// One futex word: forks in bits 0..16, eating flags in bits 16..32;
    /// taking is one compare-and-swap; a waiter sleeps on the bits of its forks.
    Futex { map: SharedMapping, n: usize },
}

// Posix layout: the state words, then one "waiting" flag per philosopher.
const P_FORKS: usize = 0;
const P_EATING: usize = 4;
const P_WAITING: usize = 64;
const FUTEX_EATING_SHIFT: u32 = 16;

fn bit(i: usize) -> u32 {
    1 << i
}

impl Forks {
    fn create(kind: LockKind, n: usize, names: &ObjectNamer) -> Result<Forks, RunError> {
        let mapping =
            |len| SharedMapping::new(len).map_err(|e| RunError::Failed(format!("mmap table: {e}")));
        Ok(match kind {
            LockKind::SysvSem => {
                let mut initial = vec![1u16; n];
                initial.extend(std::iter::repeat_n(0, n));
                let (id, remove) = common::sysv_set(names, &initial)?;
                Forks::Sysv {
                    id,
                    n,
                    _remove: remove,
                }
            }
            LockKind::PosixSem => Forks::Posix {
                map: mapping(P_WAITING + 4 * n)?,
                mutex: common::unlinked_semaphore(names, 1)?,
                wake: (0..n)
                    .map(|_| common::unlinked_semaphore(names, 0))
                    .collect::<Result<_, _>>()?,
                n,
            },
            LockKind::Futex => Forks::Futex {
                map: mapping(4)?,
                n,
            },
        })
    }

    fn n(&self) -> usize {
        match self {
            Forks::Sysv { n, .. } | Forks::Posix { n, .. } | Forks::Futex { n, .. } => *n,
        }
    }

    /// Philosopher `i`'s forks: left and right.
    fn forks_of(&self, i: usize) -> (usize, usize) {
        (i, (i + 1) % self.n())
    }

    /// Takes both forks of philosopher `i` and raises its eating flag, all in
    /// one atomic step, blocking until both are on the table. With `split`
    /// (a test fault) takes the lower-numbered fork first and the other later.
    fn take(&self, i: usize, split: bool) -> Result<(), ChannelError> {
        let (l, r) = self.forks_of(i);
        let (first, second) = (l.min(r), l.max(r));
        match self {
            Forks::Sysv { id, n, .. } => {
                let eat = sysv::sembuf((n + i) as u16, 1);
                if split {
                    retry("semop (first fork)", || {
                        sysv::sem_ops(*id, &mut [sysv::sembuf(first as u16, -1)])
                    })?;
                    retry("semop (second fork)", || {
                        sysv::sem_ops(*id, &mut [sysv::sembuf(second as u16, -1), eat])
                    })
                } else {
                    retry("semop (take forks)", || {
                        sysv::sem_ops(
                            *id,
                            &mut [sysv::sembuf(l as u16, -1), sysv::sembuf(r as u16, -1), eat],
                        )
                    })
                }
            }
            Forks::Posix { .. } => {
                if split {
                    self.posix_take(i, bit(first), 0)?;
                    self.posix_take(i, bit(second), bit(i))
                } else {
                    self.posix_take(i, bit(l) | bit(r), bit(i))
                }
            }
            Forks::Futex { map, .. } => {
                let word = map.atomic_u32(0);
                let eat = bit(i) << FUTEX_EATING_SHIFT;
                if split {
                    futex_take(word, bit(first), 0)?;
                    futex_take(word, bit(second), eat)
                } else {
                    futex_take(word, bit(l) | bit(r), eat)
                }
            }
        }
    }

    /// Puts both forks of philosopher `i` down and lowers its flag, atomically.
    fn put(&self, i: usize) -> Result<(), ChannelError> {
        let (l, r) = self.forks_of(i);
        match self {
            Forks::Sysv { id, n, .. } => retry("semop (put forks)", || {
                sysv::sem_ops(
                    *id,
                    &mut [
                        sysv::sembuf((n + i) as u16, -1),
                        sysv::sembuf(l as u16, 1),
                        sysv::sembuf(r as u16, 1),
                    ],
                )
            }),
            Forks::Posix { map, wake, n, .. } => {
                self.posix_lock()?;
                let forks = map.atomic_u32(P_FORKS);
                forks.store(
                    forks.load(Ordering::Relaxed) & !(bit(l) | bit(r)),
                    Ordering::Relaxed,
                );
                let eating = map.atomic_u32(P_EATING);
                eating.store(eating.load(Ordering::Relaxed) & !bit(i), Ordering::Relaxed);
                // Wake the neighbours that wait for one of these forks; each
                // looks again under the mutex.
                for j in [(i + n - 1) % n, (i + 1) % n] {
                    let waiting = map.atomic_u32(P_WAITING + 4 * j);
                    if waiting.load(Ordering::Relaxed) != 0 {
                        waiting.store(0, Ordering::Relaxed);
                        wake[j]
                            .post()
                            .map_err(ChannelError::io("sem_post (wake)"))?;
                    }
                }
                self.posix_unlock()
            }
            Forks::Futex { map, .. } => {
                let word = map.atomic_u32(0);
                let mine = bit(l) | bit(r);
                word.fetch_and(!(mine | bit(i) << FUTEX_EATING_SHIFT), Ordering::Release);
                futex_wake_bitset(word, mine).map_err(ChannelError::io("futex wake (forks)"))
            }
        }
    }

    fn posix_lock(&self) -> Result<(), ChannelError> {
        if let Forks::Posix { mutex, .. } = self {
            retry("sem_wait (table)", || mutex.wait())?;
            fence(Ordering::Acquire);
        }
        Ok(())
    }

    fn posix_unlock(&self) -> Result<(), ChannelError> {
        if let Forks::Posix { mutex, .. } = self {
            fence(Ordering::Release);
            mutex.post().map_err(ChannelError::io("sem_post (table)"))?;
        }
        Ok(())
    }

    /// Under the mutex: waits until the forks in `need` are all on the table,
    /// then takes them and sets the flags in `eat`.
    fn posix_take(&self, i: usize, need: u32, eat: u32) -> Result<(), ChannelError> {
        let Forks::Posix { map, wake, .. } = self else {
            unreachable!("posix_take on a POSIX table only");
        };
        let forks = map.atomic_u32(P_FORKS);
        let eating = map.atomic_u32(P_EATING);
        self.posix_lock()?;
        loop {
            let f = forks.load(Ordering::Relaxed);
            if f & need == 0 {
                forks.store(f | need, Ordering::Relaxed);
                eating.store(eating.load(Ordering::Relaxed) | eat, Ordering::Relaxed);
                break;
            }
            // A neighbour that puts a fork down after this sees the flag and
            // posts; a post before the wait below leaves the count at 1.
            map.atomic_u32(P_WAITING + 4 * i)
                .store(1, Ordering::Relaxed);
            self.posix_unlock()?;
            retry("sem_wait (forks)", || wake[i].wait())?;
            self.posix_lock()?;
        }
        self.posix_unlock()
    }

    /// Takes an atomic snapshot of the whole table and checks it.
    fn check(&self, buf: &mut [u16]) -> Result<(), ChannelError> {
        let n = self.n();
        let (taken, eating) = match self {
            Forks::Sysv { id, .. } => {
                sysv::sem_get_all(*id, buf).map_err(ChannelError::io("semctl GETALL"))?;
                let (mut taken, mut eating) = (0u32, 0u32);
                for f in 0..n {
                    match (buf[f], buf[n + f]) {
                        (0 | 1, 0 | 1) => {}
                        (fork, flag) => {
                            return Err(ChannelError::Check(format!(
                                "semaphore values out of range: fork {} = {fork}, eating flag {} = {flag}",
                                f + 1,
                                f + 1
                            )));
                        }
                    }
                    taken |= ((buf[f] == 0) as u32) << f;
                    eating |= (buf[n + f] as u32) << f;
                }
                (taken, eating)
            }
            Forks::Posix { map, .. } => {
                self.posix_lock()?;
                let s = (
                    map.atomic_u32(P_FORKS).load(Ordering::Relaxed),
                    map.atomic_u32(P_EATING).load(Ordering::Relaxed),
                );
                self.posix_unlock()?;
                s
            }
            Forks::Futex { map, .. } => {
                let v = map.atomic_u32(0).load(Ordering::Acquire);
                (v & 0xFFFF, v >> FUTEX_EATING_SHIFT)
            }
        };
        check_table(n, taken, eating).map_err(ChannelError::Check)
    }
}

/// Waits until the forks in `need` are all free, then takes them and sets the
/// bits in `eat`, in one compare-and-swap.
fn futex_take(word: &AtomicU32, need: u32, eat: u32) -> Result<(), ChannelError> {
    loop {
        let v = word.load(Ordering::Acquire);
        if v & need == 0 {
            if word
                .compare_exchange_weak(v, v | need | eat, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(());
            }
            continue;
        }
        // Sleeps only while the word still reads `v`, and is woken only by
        // a put of one of the forks wanted here.
        retry("futex wait (forks)", || futex_wait_bitset(word, v, need))?;
    }
}

/// The table's invariant on one atomic snapshot (bit f of `taken`: fork f is
/// off the table; bit p of `eating`: philosopher p eats); the MPI arbiter
/// checks its own table with it after every grant and release. Fork f lies between
/// philosopher f (its left fork) and philosopher f−1 (its right fork); it is
/// off the table exactly when one of the two eats.
pub fn check_table(n: usize, taken: u32, eating: u32) -> Result<(), String> {
    let eats = |p: usize| eating & bit(p) != 0;
    for f in 0..n {
        let (a, b) = ((f + n - 1) % n, f);
        let users = eats(a) as u32 + eats(b) as u32;
        let off_table = taken & bit(f) != 0;
        if off_table && users == 0 {
            return Err(format!(
                "fork {} is held while neither philosopher {} nor {} eats: a fork held alone",
                f + 1,
                a + 1,
                b + 1
            ));
        }
        if users == 2 {
            return Err(format!(
                "philosophers {} and {} eat with the same fork {}",
                a + 1,
                b + 1,
                f + 1
            ));
        }
        if !off_table && users == 1 {
            return Err(format!(
                "philosopher {} eats without fork {}",
                if eats(a) { a + 1 } else { b + 1 },
                f + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: usize) -> (Forks, Owners) {
        (
            Forks::Futex {
                map: SharedMapping::new(4).unwrap(),
                n,
            },
            Owners::new(n).unwrap(),
        )
    }

    #[test]
    fn owner_words_follow_a_correct_table() {
        let (forks, owners) = table(5);
        // Philosophers 0 and 2 eat (forks 0, 1 and 2, 3), then 0 leaves and
        // 1 takes forks 1 and 2 once 2 has left too.
        owners.claim(0, forks.forks_of(0)).unwrap();
        owners.claim(2, forks.forks_of(2)).unwrap();
        owners.verify(0, forks.forks_of(0)).unwrap();
        owners.verify(2, forks.forks_of(2)).unwrap();
        owners.release(0, forks.forks_of(0)).unwrap();
        owners.release(2, forks.forks_of(2)).unwrap();
        owners.claim(1, forks.forks_of(1)).unwrap();
        owners.verify(1, forks.forks_of(1)).unwrap();
        // Philosopher 4's forks are 4 and 0: free again.
        owners.claim(4, forks.forks_of(4)).unwrap();
        owners.release(1, forks.forks_of(1)).unwrap();
        owners.release(4, forks.forks_of(4)).unwrap();
        for f in 0..5 {
            assert_eq!(owners.word(f).load(Ordering::Relaxed), 0, "fork {f}");
        }
    }

    fn message(r: Result<(), ChannelError>) -> String {
        match r {
            Err(ChannelError::Check(m)) => m,
            other => panic!("expected a failed check, got {other:?}"),
        }
    }

    #[test]
    fn owner_words_catch_a_shared_fork() {
        // A broken lock lets neighbours 1 and 2 (indices 0 and 1) both take
        // fork 2: the words catch it whichever step comes first.
        let (forks, owners) = table(5);
        owners.claim(0, forks.forks_of(0)).unwrap();
        let e = message(owners.claim(1, forks.forks_of(1)));
        assert!(
            e.contains("philosopher 2 took fork 2 while philosopher 1 held it"),
            "{e}"
        );
        // A philosopher whose fork was taken from it while it ate.
        let (forks, owners) = table(3);
        owners.claim(0, forks.forks_of(0)).unwrap();
        owners.word(1).store(owner_id(1), Ordering::Relaxed);
        let e = message(owners.verify(0, forks.forks_of(0)));
        assert!(
            e.contains("philosopher 1 eats with fork 2") && e.contains("philosopher 2 holds it"),
            "{e}"
        );
        let e = message(owners.release(0, forks.forks_of(0)));
        assert!(
            e.contains("puts fork 2 down") && e.contains("philosopher 2"),
            "{e}"
        );
        // Eating without having claimed a fork at all.
        let (forks, owners) = table(2);
        let e = message(owners.verify(1, forks.forks_of(1)));
        assert!(e.contains("nobody holds it"), "{e}");
    }

    #[test]
    fn table_invariant_accepts_pairs_and_rejects_one_fork_alone() {
        // Philosopher 0 eats with forks 0 and 1; philosopher 2 with 2 and 3.
        assert_eq!(check_table(5, 0b01111, 0b00101), Ok(()));
        assert_eq!(check_table(5, 0, 0), Ok(()));
        // Fork 4 taken by a philosopher still waiting for its second.
        let e = check_table(5, 0b10011, 0b00001).unwrap_err();
        assert!(e.contains("alone"), "{e}");
        // Neighbours 0 and 1 both eating share fork 1.
        let e = check_table(5, 0b00111, 0b00011).unwrap_err();
        assert!(e.contains("same fork"), "{e}");
        // Eating without its right fork.
        let e = check_table(5, 0b00001, 0b00001).unwrap_err();
        assert!(e.contains("without fork 2"), "{e}");
        // Two philosophers share both forks.
        assert_eq!(check_table(2, 0b11, 0b01), Ok(()));
        assert!(check_table(2, 0b11, 0b11).is_err());
    }
}
