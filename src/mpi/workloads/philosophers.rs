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
//!
//! `--handoff K`: MPI cannot move a process, so a philosopher's *role* is
//! moved instead. After every K meals of a philosopher, the rank playing it,
//! holding no fork (its release sent), sends the role's state (its meals so
//! far, the number of the hand-off, which philosopher it is) to the next
//! rank of that philosopher's rotation (its rank, then its spares: the
//! spares named after the philosophers are dealt to them in turn). That
//! rank checks the state continues where it expects, tells the arbiter
//! that it now plays the philosopher, and once the arbiter has confirmed
//! (having taken the previous rank's release first, and checked that the
//! philosopher holds no fork and waits for none), acknowledges and goes on
//! thinking and eating. The arbiter's table, its checks and its grants are
//! the philosopher's, whichever rank plays it. The handing rank times each
//! hand-off from sending the state to receiving the acknowledgement
//! ([`super::Handoffs`], as generator-calculator's and shared-counter's):
//! an application-level hand-off, not a migration.

use super::{
    HANDOFF_COUNTERS, Handoffs, Job, MpiWorkload, Rotation, STATS, Stats, cast_len, distinct,
    handoff_metrics, places, process, stats,
};
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
/// A rank to the arbiter: it now plays a philosopher (`--handoff`); the
/// arbiter's confirmation.
const PLAYS: u64 = 5;
const CONFIRMED: u64 = 6;

const PHILOSOPHER_COUNTERS: [&str; 3] = ["meals", "hungry_ns", "eating_ns"];
/// With `--handoff`: a rank's counters, then its hand-offs'.
const HANDOFF_PHILOSOPHER_COUNTERS: [&str; 6] = [
    PHILOSOPHER_COUNTERS[0],
    PHILOSOPHER_COUNTERS[1],
    PHILOSOPHER_COUNTERS[2],
    HANDOFF_COUNTERS[0],
    HANDOFF_COUNTERS[1],
    HANDOFF_COUNTERS[2],
];

/// The workload across ranks, and its hand-off period.
pub struct Mpi {
    t: Table,
    handoff: Option<u64>,
}

/// The local workload's settings and the hand-off period; `--mechanism`
/// has no meaning here.
pub fn prepare(params: &Params, handoff: Option<u64>) -> Result<Mpi, String> {
    if params.mechanism.is_some() {
        return Err(
            "--mechanism does not apply to --engine mpi: the forks are an arbiter rank's".into(),
        );
    }
    if handoff == Some(0) {
        return Err("--handoff 0: at least one meal between hand-offs".into());
    }
    Ok(Mpi {
        t: Table::resolve(params)?,
        handoff,
    })
}

fn bit(i: usize) -> u32 {
    1 << i
}

/// The arbiter's table.
struct Arbiter<'a> {
    t: &'a Table,
    job: &'a Job,
    /// Philosopher p's rank is `philosophers[p]` (changing with
    /// `--handoff`).
    philosophers: Vec<usize>,
    taken: u32,
    eating: u32,
    waiting: Vec<bool>,
    grants: Vec<u64>,
    checks: u64,
    /// Philosophers that changed rank (`--handoff`).
    moves: u64,
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

    /// Rank `to` now plays philosopher `p`, whose rank was `from`: the
    /// previous rank's release (sent before it handed the role on, but
    /// from another rank, so perhaps not yet seen) is taken first; the
    /// philosopher must then hold no fork and wait for none.
    fn moved(&mut self, p: usize, from: usize, to: usize) -> Result<(), String> {
        if p >= self.t.n || self.philosophers[p] != from {
            return Err(format!(
                "arbiter: rank {to} claims philosopher {} from rank {from}, which does not play it",
                p + 1
            ));
        }
        while self.eating & bit(p) != 0 {
            let mut msg = [0u64; 3];
            self.job
                .recv(from, TO_ARBITER, &mut msg, "release before a hand-off")?;
            if msg[0] != RELEASE {
                return Err(format!(
                    "arbiter: philosopher {} handed on by rank {from} while eating",
                    p + 1
                ));
            }
            self.release(p)?;
        }
        if self.waiting[p] {
            return Err(format!(
                "arbiter: philosopher {} handed on while waiting for its forks",
                p + 1
            ));
        }
        self.philosophers[p] = to;
        self.moves += 1;
        self.job.send(to, ANSWER, &[CONFIRMED]);
        Ok(())
    }
}

impl Mpi {
    fn arbiter(&self, job: &Job, philosophers: &[usize]) -> Result<(Stats, Vec<u64>), String> {
        let n = self.t.n;
        let mut a = Arbiter {
            t: &self.t,
            job,
            philosophers: philosophers.to_vec(),
            taken: 0,
            eating: 0,
            waiting: vec![false; n],
            grants: vec![0; n],
            checks: 0,
            moves: 0,
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
                        job.send(a.philosophers[p], ANSWER, &[STOP]);
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
            // [kind, philosopher, its previous rank] (the last two for
            // PLAYS only).
            let mut msg = [0u64; 3];
            job.recv(from, TO_ARBITER, &mut msg, "request or release")?;
            if msg[0] == PLAYS {
                a.moved(msg[1] as usize, msg[2] as usize, from)?;
                continue;
            }
            let Some(p) = a.philosophers.iter().position(|&r| r == from) else {
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
            stats(
                total,
                start,
                &[a.checks, stopped_after.unwrap_or(0), a.moves],
            ),
            a.grants,
        ))
    }

    /// A rank of philosopher `p`'s `ring` (its rotation), whose arbiter
    /// is rank `arbiter`: it plays the philosopher in its turns (the
    /// first rank from the start), thinking and eating until the arbiter
    /// stops it or K meals of the role are done, then hands the role on
    /// and waits for its turn to come back or the role to end.
    fn philosopher(
        &self,
        job: &Job,
        arbiter: usize,
        ring: &[usize],
        p: usize,
    ) -> Result<Stats, String> {
        let rot = Rotation::new(ring, job.rank);
        let period = self.handoff.unwrap_or(u64::MAX);
        let (mut meals, mut hungry_ns, mut eating_ns) = (0u64, 0u64, 0u64);
        let mut handoffs = Handoffs::default();
        // The role's state: its meals (by every rank that played it), the
        // number of hand-offs so far, and which philosopher it is.
        let (mut role_meals, mut turn) = (0u64, 0u64);
        job.barrier();
        let start = monotonic_ns();
        let mut wait = !rot.first();
        loop {
            if wait {
                // [role meals, hand-off number, philosopher, kind, where
                // it ended].
                let mut msg = [0u64; 5];
                if !rot.wait(job, &mut msg)? {
                    break;
                }
                if msg[2] != p as u64
                    || !rot.is_turn(msg[1])
                    || msg[0] != msg[1].saturating_mul(period)
                {
                    return Err(format!(
                        "rank {}: the state handed by rank {} (philosopher {}, hand-off {}, {} meals) does not continue philosopher {}'s rotation (a hand-off every {period} meals)",
                        job.rank,
                        rot.prev,
                        msg[2] + 1,
                        msg[1],
                        msg[0],
                        p + 1
                    ));
                }
                (role_meals, turn) = (msg[0], msg[1]);
                // The arbiter must know who plays the philosopher before
                // this rank asks for forks in its name.
                job.send(arbiter, TO_ARBITER, &[PLAYS, p as u64, rot.prev as u64]);
                let mut answer = [0u64; 1];
                job.recv(arbiter, ANSWER, &mut answer, "the arbiter's confirmation")?;
                if answer[0] != CONFIRMED {
                    return Err(format!(
                        "rank {}: arbiter answered {} to a hand-off",
                        job.rank, answer[0]
                    ));
                }
                Handoffs::acknowledge(job, rot.prev, &msg);
            }
            let stopped = loop {
                if !self.t.think.is_zero() {
                    std::thread::sleep(self.t.think);
                }
                let hungry = monotonic_ns();
                job.send(arbiter, TO_ARBITER, &[REQUEST, 0, 0]);
                let mut answer = [0u64; 1];
                job.recv(arbiter, ANSWER, &mut answer, "answer from the arbiter")?;
                match answer[0] {
                    GRANT => {}
                    STOP => break true,
                    other => return Err(format!("rank {}: arbiter answered {other}", job.rank)),
                }
                let eat = monotonic_ns();
                hungry_ns += eat - hungry;
                self.t.eat_once();
                eating_ns += monotonic_ns() - eat;
                job.send(arbiter, TO_ARBITER, &[RELEASE, 0, 0]);
                meals += 1;
                role_meals += 1;
                if role_meals % period == 0 {
                    break false;
                }
            };
            let state = [role_meals, turn, p as u64];
            if stopped {
                rot.finish(job, &state);
                break;
            }
            // Its forks are released (the release sent): it holds none.
            turn += 1;
            rot.hand(job, &mut handoffs, &[role_meals, turn, p as u64], "meal")?;
            wait = true;
        }
        let [n, ns, max] = handoffs.counters();
        Ok(stats(
            meals,
            start,
            &[meals, hungry_ns, eating_ns, n, ns, max],
        ))
    }

    /// The rotation of philosopher `p` under `cast`.
    fn rotation(&self, cast: &[usize], p: usize) -> Vec<usize> {
        let n = self.t.n;
        super::rotation(&cast[1..=n], &cast[n + 1..], p)
    }
}

impl MpiWorkload for Mpi {
    fn min_ranks(&self) -> usize {
        // With --handoff, a spare for each philosopher.
        if self.handoff.is_some() {
            2 * self.t.n + 1
        } else {
            self.t.n + 1
        }
    }

    fn seats(&self, n: usize) -> Vec<String> {
        let p = self.t.n;
        (0..n)
            .map(|i| match i {
                0 => "arbiter".to_string(),
                i if i <= p => format!("philosopher {i}"),
                i => format!(
                    "philosopher {} spare {}",
                    (i - p - 1) % p + 1,
                    (i - p - 1) / p + 1
                ),
            })
            .collect()
    }

    fn default_cast(&self, size: usize) -> Vec<usize> {
        match self.handoff {
            // Every other rank a spare.
            Some(_) => (0..size.max(2 * self.t.n + 1)).collect(),
            None => (0..=self.t.n).collect(),
        }
    }

    fn check_cast(&self, cast: &[usize]) -> Result<(), String> {
        match self.handoff {
            Some(_) if cast.len() < 2 * self.t.n + 1 => {
                return Err(format!(
                    "{} rank(s) given; with --handoff a placement names the arbiter, the {} philosophers and at least one spare for each philosopher",
                    cast.len(),
                    self.t.n
                ));
            }
            Some(_) => {}
            None => cast_len(self, cast, self.t.n + 1)?,
        }
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

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "philosophers": self.t.n,
            "mechanism": "mpi-arbiter",
            "think_ms": self.t.think.as_secs_f64() * 1e3,
            "eat_ms": self.t.eat.as_secs_f64() * 1e3,
            "work_iterations_per_ms": self.t.work_per_ms,
            "eat_iterations": self.t.eat_iters,
            "engine": "mpi",
            "handoff_every": self.handoff,
        })
    }

    fn duration(&self) -> Option<Duration> {
        Some(self.t.duration)
    }

    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String> {
        let raw = job.places();
        let arbiter = cast[0];
        let n = self.t.n;
        let philosophers = &cast[1..=n];
        let rings: Vec<Vec<usize>> = (0..n).map(|p| self.rotation(cast, p)).collect();
        let (mine, mut grants) = match job.rank {
            r if r == arbiter => {
                let (s, grants) = self.arbiter(job, philosophers)?;
                (s, grants)
            }
            r => match rings.iter().position(|ring| ring.contains(&r)) {
                Some(p) => (self.philosopher(job, arbiter, &rings[p], p)?, Vec::new()),
                // No role: asleep until the run ends (in the gather).
                None => ([0; STATS], Vec::new()),
            },
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
        // Each philosopher's meals, whichever ranks played it.
        let meals: Vec<u64> = rings
            .iter()
            .map(|ring| ring.iter().map(|&r| all[r][super::OPS]).sum())
            .collect();
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
        let names: &[&'static str] = match self.handoff {
            Some(k) => {
                let mut made = 0;
                for (p, ring) in rings.iter().enumerate() {
                    let (n, _) = handoff_metrics(&all, ring, 3);
                    if n != meals[p] / k {
                        return Err(format!(
                            "philosopher {} was handed on {n} times in {} meals, expected {} (one every {k})",
                            p + 1,
                            meals[p],
                            meals[p] / k
                        ));
                    }
                    made += n;
                }
                // The arbiter learnt of every one.
                if all[arbiter][c + 2] != made {
                    return Err(format!(
                        "the arbiter saw {} philosophers change rank, {made} hand-offs were made",
                        all[arbiter][c + 2]
                    ));
                }
                metrics.extend(handoff_metrics(&all, &cast[1..], 3).1);
                &HANDOFF_PHILOSOPHER_COUNTERS
            }
            None => &PHILOSOPHER_COUNTERS,
        };
        Ok(Some(RunRecord {
            elapsed_ns: all[arbiter][super::TIME],
            stopped_after_ns: Some(all[arbiter][c + 1]),
            figure: meals.iter().sum::<u64>() as f64,
            processes: self
                .workers(cast)
                .into_iter()
                .map(|r| process(&roles[r], r, &raw[r], &all[r], names))
                .collect(),
            metrics,
            places: places(&raw, &roles),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_handoff_each_philosopher_has_its_spares() {
        let p = Params {
            philosophers: Some(2),
            ..Params::default()
        };
        let w = prepare(&p, Some(3)).unwrap();
        assert_eq!(w.min_ranks(), 5);
        let cast = w.default_cast(6);
        assert_eq!(cast, [0, 1, 2, 3, 4, 5]);
        assert_eq!(w.rotation(&cast, 0), [1, 3, 5]);
        assert_eq!(w.rotation(&cast, 1), [2, 4]);
        assert_eq!(
            w.roles(&cast, 6)[3..],
            [
                "philosopher 1 spare 1",
                "philosopher 2 spare 1",
                "philosopher 1 spare 2"
            ]
        );
        let e = w.check_cast(&[0, 1, 2, 3]).unwrap_err();
        assert!(e.contains("at least one spare for each philosopher"), "{e}");
        assert!(w.check_cast(&[4, 3, 2, 1, 0]).is_ok());
        assert!(prepare(&p, Some(0)).is_err());
        // Without --handoff the cast is the arbiter and the philosophers.
        assert_eq!(prepare(&p, None).unwrap().default_cast(6), [0, 1, 2]);
    }
}
