//! `philosophers --engine mpi`: the study's semaphore set becomes a fork
//! arbiter. A cast names the arbiter's rank, which keeps the table (which
//! forks are off it, who eats), then philosopher 1's, 2's… (by default
//! rank 0 and ranks 1..=N). A hungry philosopher sends a request
//! and waits; the arbiter grants both forks in one step when both are on the
//! table, or queues the request until a neighbour puts a fork down, so no
//! philosopher ever holds one fork alone, as with the study's `semop` of two
//! operations. The arbiter checks its whole table with the local workload's
//! invariant ([`check_table`]) after every grant and every release, and at
//! the end that it granted each philosopher as many meals as it reports.
//!
//! Why an arbiter rather than MPI one-sided atomics on a table in a window:
//! taking both forks atomically needs a compare-and-swap on one word and a
//! retry loop — a philosopher spinning on remote atomics across nodes, where
//! the semaphore put it to sleep — and a waiting philosopher could not be
//! woken. The arbiter's queue is what the kernel's semaphore wait queue did.
//!
//! The arbiter times the run: it stops granting after `--duration`, answers
//! every later request (and every queued one) with a stop, and ends when all
//! philosophers have stopped. A meal counts if its forks were granted before
//! the stop. Each rank calibrates a meal's CPU work on its own node.

use super::{Job, MpiWorkload, STATS, Stats, cast_len, distinct, places, process, stats};
use crate::sys::clock::monotonic_ns;
use crate::workloads::philosophers::{Table, check_table, meal_metrics};
use crate::workloads::{Params, RunRecord};
use mpi::point_to_point::Source as _;
use mpi::topology::Communicator as _;
use std::time::Duration;

/// Tags: a philosopher to the arbiter (its request or its release), the
/// arbiter's answer (a grant or a stop).
const TO_ARBITER: i32 = 21;
const ANSWER: i32 = 22;
/// The arbiter's grants, for rank 0 when the arbiter is another rank.
const GRANTS: i32 = 23;
/// Message kinds.
const REQUEST: u64 = 1;
const RELEASE: u64 = 2;
const GRANT: u64 = 3;
const STOP: u64 = 4;

const PHILOSOPHER_COUNTERS: [&str; 3] = ["meals", "hungry_ns", "eating_ns"];

/// The workload across ranks.
pub struct Mpi {
    t: Table,
}

/// The local workload's settings; `--mechanism` has no meaning here.
pub fn prepare(params: &Params) -> Result<Mpi, String> {
    if params.mechanism.is_some() {
        return Err(
            "--mechanism does not apply to --engine mpi: the forks are an arbiter rank's".into(),
        );
    }
    Ok(Mpi {
        t: Table::resolve(params)?,
    })
}

fn bit(i: usize) -> u32 {
    1 << i
}

/// The arbiter's table.
struct Arbiter<'a> {
    t: &'a Table,
    job: &'a Job,
    /// Philosopher p's rank is `philosophers[p]`.
    philosophers: &'a [usize],
    taken: u32,
    eating: u32,
    waiting: Vec<bool>,
    grants: Vec<u64>,
    checks: u64,
}

impl Arbiter<'_> {
    fn need(&self, p: usize) -> u32 {
        let (l, r) = self.t.forks_of(p);
        bit(l) | bit(r)
    }

    fn check(&mut self) -> Result<(), String> {
        self.checks += 1;
        check_table(self.t.n, self.taken, self.eating)
            .map_err(|e| format!("arbiter: table check failed: {e}"))
    }

    /// Grants philosopher `p` both its forks, if both are on the table.
    fn try_grant(&mut self, p: usize) -> Result<bool, String> {
        let need = self.need(p);
        if self.taken & need != 0 {
            return Ok(false);
        }
        self.taken |= need;
        self.eating |= bit(p);
        self.check()?;
        self.grants[p] += 1;
        self.waiting[p] = false;
        self.job.send(self.philosophers[p], ANSWER, &[GRANT]);
        Ok(true)
    }

    fn release(&mut self, p: usize) -> Result<(), String> {
        if self.eating & bit(p) == 0 {
            return Err(format!(
                "arbiter: philosopher {} puts down forks it was not granted",
                p + 1
            ));
        }
        self.taken &= !self.need(p);
        self.eating &= !bit(p);
        self.check()?;
        // Its neighbours may now eat.
        let n = self.t.n;
        for q in [(p + n - 1) % n, (p + 1) % n] {
            if self.waiting[q] {
                self.try_grant(q)?;
            }
        }
        Ok(())
    }
}

impl Mpi {
    fn arbiter(&self, job: &Job, philosophers: &[usize]) -> Result<(Stats, Vec<u64>), String> {
        let n = self.t.n;
        let mut a = Arbiter {
            t: &self.t,
            job,
            philosophers,
            taken: 0,
            eating: 0,
            waiting: vec![false; n],
            grants: vec![0; n],
            checks: 0,
        };
        let mut stopped = vec![false; n];
        let mut stopped_after = None;
        let world = mpi::topology::SimpleCommunicator::world();
        // A philosopher is silent at most a think, a meal and a wait.
        let silence = job.timeout + self.t.think + self.t.eat * (n as u32 + 1);
        job.barrier();
        let start = monotonic_ns();
        let mut heard = start;
        while stopped.iter().any(|s| !s) {
            let now = monotonic_ns();
            if stopped_after.is_none() && now - start >= self.t.duration.as_nanos() as u64 {
                stopped_after = Some(now - start);
                for (p, stop) in stopped.iter_mut().enumerate() {
                    if a.waiting[p] {
                        a.waiting[p] = false;
                        *stop = true;
                        job.send(philosophers[p], ANSWER, &[STOP]);
                    }
                }
            }
            let Some(status) = world.any_process().immediate_probe_with_tag(TO_ARBITER) else {
                if now - heard > silence.as_nanos() as u64 {
                    return Err(format!(
                        "arbiter: no philosopher spoke for {} s (--timeout)",
                        silence.as_secs_f64()
                    ));
                }
                // Sleeping, not spinning: the philosophers' ranks may share
                // this CPU. A request waits at most this long more.
                std::thread::sleep(Duration::from_micros(20));
                continue;
            };
            heard = now;
            let from = status.source_rank() as usize;
            let mut msg = [0u64; 1];
            job.recv(from, TO_ARBITER, &mut msg, "request or release")?;
            let Some(p) = philosophers.iter().position(|&r| r == from) else {
                return Err(format!(
                    "arbiter: a message from rank {from}, not a philosopher"
                ));
            };
            match msg[0] {
                REQUEST if stopped_after.is_some() => {
                    stopped[p] = true;
                    job.send(from, ANSWER, &[STOP]);
                }
                REQUEST => {
                    if !a.try_grant(p)? {
                        a.waiting[p] = true;
                    }
                }
                RELEASE => a.release(p)?,
                other => {
                    return Err(format!(
                        "arbiter: philosopher {} sent message kind {other}",
                        p + 1
                    ));
                }
            }
        }
        let total: u64 = a.grants.iter().sum();
        Ok((
            stats(total, start, &[a.checks, stopped_after.unwrap_or(0)]),
            a.grants,
        ))
    }

    /// A philosopher, whose arbiter is rank `arbiter`.
    fn philosopher(&self, job: &Job, arbiter: usize) -> Result<Stats, String> {
        let (mut meals, mut hungry_ns, mut eating_ns) = (0u64, 0u64, 0u64);
        job.barrier();
        let start = monotonic_ns();
        loop {
            if !self.t.think.is_zero() {
                std::thread::sleep(self.t.think);
            }
            let hungry = monotonic_ns();
            job.send(arbiter, TO_ARBITER, &[REQUEST]);
            let mut answer = [0u64; 1];
            job.recv(arbiter, ANSWER, &mut answer, "answer from the arbiter")?;
            match answer[0] {
                GRANT => {}
                STOP => break,
                other => return Err(format!("rank {}: arbiter answered {other}", job.rank)),
            }
            let eat = monotonic_ns();
            hungry_ns += eat - hungry;
            self.t.eat_once();
            eating_ns += monotonic_ns() - eat;
            job.send(arbiter, TO_ARBITER, &[RELEASE]);
            meals += 1;
        }
        Ok(stats(meals, start, &[meals, hungry_ns, eating_ns]))
    }
}

impl MpiWorkload for Mpi {
    fn min_ranks(&self) -> usize {
        self.t.n + 1
    }

    fn seats(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i {
                0 => "arbiter".to_string(),
                i => format!("philosopher {i}"),
            })
            .collect()
    }

    fn default_cast(&self, _size: usize) -> Vec<usize> {
        (0..=self.t.n).collect()
    }

    fn check_cast(&self, cast: &[usize]) -> Result<(), String> {
        cast_len(self, cast, self.t.n + 1)?;
        distinct(cast, "philosophers")
    }

    fn roles(&self, cast: &[usize], size: usize) -> Vec<String> {
        let seats = self.seats(cast.len());
        (0..size)
            .map(|r| {
                cast.iter()
                    .position(|&c| c == r)
                    .map_or_else(|| "idle".to_string(), |i| seats[i].clone())
            })
            .collect()
    }

    /// A hungry philosopher waits a meal or more: spinning would take the
    /// CPU from the ones eating on it.
    fn spin(&self) -> Duration {
        Duration::ZERO
    }

    fn workers(&self, cast: &[usize]) -> Vec<usize> {
        cast[1..].to_vec()
    }

    fn title(&self) -> String {
        format!(
            "philosophers across MPI ranks: {} philosophers, forks kept by an arbiter rank, think {} ms, eat {} ms of CPU work, {} s per run",
            self.t.n,
            self.t.think.as_secs_f64() * 1e3,
            self.t.eat.as_secs_f64() * 1e3,
            self.t.duration.as_secs_f64()
        )
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "philosophers": self.t.n,
            "mechanism": "mpi-arbiter",
            "think_ms": self.t.think.as_secs_f64() * 1e3,
            "eat_ms": self.t.eat.as_secs_f64() * 1e3,
            "work_iterations_per_ms": self.t.work_per_ms,
            "eat_iterations": self.t.eat_iters,
            "engine": "mpi",
        })
    }

    fn duration(&self) -> Option<Duration> {
        Some(self.t.duration)
    }

    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String> {
        let raw = job.places();
        let (arbiter, philosophers) = (cast[0], &cast[1..]);
        let (mine, mut grants) = match job.rank {
            r if r == arbiter => {
                let (s, grants) = self.arbiter(job, philosophers)?;
                (s, grants)
            }
            r if philosophers.contains(&r) => (self.philosopher(job, arbiter)?, Vec::new()),
            // No role: asleep until the run ends (in the gather).
            _ => ([0; STATS], Vec::new()),
        };
        let all = job.gather(&mine);
        // The meals it granted, for rank 0's check, when the arbiter is
        // another rank: after the gather, so outside any timed part.
        if arbiter != 0 && job.rank == arbiter {
            job.send(0, GRANTS, &grants);
        }
        if job.rank != 0 {
            return Ok(None);
        }
        if arbiter != 0 {
            grants = vec![0; self.t.n];
            job.recv(arbiter, GRANTS, &mut grants, "the arbiter's grants")?;
        }
        let meals: Vec<u64> = philosophers.iter().map(|&r| all[r][super::OPS]).collect();
        if let Some(p) = (0..self.t.n).find(|&p| meals[p] != grants[p]) {
            return Err(format!(
                "philosopher {} reports {} meals, the arbiter granted {}",
                p + 1,
                meals[p],
                grants[p]
            ));
        }
        let roles = self.roles(cast, job.size);
        let c = super::STATS - super::COUNTERS;
        let mut metrics = meal_metrics(&meals);
        metrics.push(("table_checks", all[arbiter][c] as f64));
        Ok(Some(RunRecord {
            elapsed_ns: all[arbiter][super::TIME],
            stopped_after_ns: Some(all[arbiter][c + 1]),
            figure: meals.iter().sum::<u64>() as f64,
            processes: self
                .workers(cast)
                .into_iter()
                .map(|r| process(&roles[r], r, &raw[r], &all[r], &PHILOSOPHER_COUNTERS))
                .collect(),
            metrics,
            places: places(&raw, &roles),
        }))
    }
}
