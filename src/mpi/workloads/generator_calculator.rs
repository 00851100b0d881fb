//! `generator-calculator --engine mpi`: the study's two pipes become MPI
//! messages. A cast names the generator's rank, then the calculator's, then
//! with `--handoff` the spares' (by default ranks 0, 1, then 2 and up, every
//! other rank of the job a spare). The messages, the squaring and the check of every element are
//! the local workload's ([`Exchange`]).
//!
//! `--handoff K`: MPI cannot move a process, so the calculator's *role* is
//! moved instead. Every K vectors the rank playing it sends its state (the
//! next vector's number and the elements computed so far by every rank) to the
//! next rank in the rotation of the cast's calculator ranks (by default
//! 1, 2, …, size−1, 1, …), which checks that the
//! state continues where it expects, acknowledges it and serves the next K
//! vectors. The generator knows the rotation and sends each question to the
//! rank whose turn it is. The handing rank times each hand-off from sending
//! the state to receiving the acknowledgement: an application-level
//! hand-off, not a migration.

use super::{
    HANDOFF_COUNTERS, Handoffs, Job, MpiWorkload, STATS, Stats, cast_len, distinct,
    handoff_metrics, places, process, stats,
};
use crate::sys::clock::monotonic_ns;
use crate::workloads::generator_calculator::Exchange;
use crate::workloads::{Params, RunRecord};
use std::time::Duration;

/// Tags: a question, its answer (a hand-off's are [`super::STATE`] and
/// [`super::ACK`]).
const QUESTION: i32 = 11;
const ANSWER: i32 = 12;

const GENERATOR_COUNTERS: [&str; 2] = ["verified_elements", "reply_wait_ns"];
const CALCULATOR_COUNTERS: [&str; 4] = [
    "computed_elements",
    HANDOFF_COUNTERS[0],
    HANDOFF_COUNTERS[1],
    HANDOFF_COUNTERS[2],
];

/// The workload and its hand-off period.
pub struct Mpi {
    ex: Exchange,
    handoff: Option<u64>,
}

/// The local workload's settings, and the hand-off period.
pub fn prepare(params: &Params, handoff: Option<u64>) -> Result<Mpi, String> {
    if handoff == Some(0) {
        return Err("--handoff 0: at least one vector between hand-offs".into());
    }
    Ok(Mpi {
        ex: Exchange::resolve(params)?,
        handoff,
    })
}

impl Mpi {
    /// Vectors per turn of the calculator role.
    fn period(&self) -> u64 {
        self.handoff.unwrap_or(self.ex.ops)
    }

    /// The rank that answers vector `op`.
    fn holder_of(&self, op: u64, holders: &[usize]) -> usize {
        holders[((op / self.period()) % holders.len() as u64) as usize]
    }

    fn generator(&self, job: &Job, holders: &[usize]) -> Result<Stats, String> {
        let len = self.ex.message_bytes();
        let (mut question, mut answer) = (vec![0u8; len], vec![0u8; len]);
        let mut x = Exchange::seed();
        let (mut verified, mut wait_ns) = (0u64, 0u64);
        job.barrier();
        let start = monotonic_ns();
        for op in 0..self.ex.ops {
            let to = self.holder_of(op, holders);
            self.ex.fill_question(&mut question, op, &mut x);
            job.send(to, QUESTION, &question);
            let sent = monotonic_ns();
            job.recv(to, ANSWER, &mut answer, "answer")?;
            wait_ns += monotonic_ns() - sent;
            self.ex.check_answer(&question, &answer, op)?;
            verified += self.ex.vector as u64;
        }
        Ok(stats(self.ex.ops, start, &[verified, wait_ns]))
    }

    /// A rank that plays the calculator in its turns (or never), for the
    /// generator on rank `generator_rank`.
    fn calculator(
        &self,
        job: &Job,
        generator_rank: usize,
        holders: &[usize],
    ) -> Result<Stats, String> {
        let mut buf = vec![0u8; self.ex.message_bytes()];
        let (mut served, mut computed) = (0u64, 0u64);
        // Elements computed by every rank that played the role: the state.
        let mut total = 0u64;
        let mut handoffs = Handoffs::default();
        let period = self.period();
        let turns = self.ex.ops.div_ceil(period);
        job.barrier();
        let start = monotonic_ns();
        for turn in 0..turns {
            let first = turn * period;
            if self.holder_of(first, holders) != job.rank {
                continue;
            }
            if turn > 0 {
                let from = self.holder_of(first - 1, holders);
                let mut state = [0u64; 2];
                Handoffs::receive(job, from, &mut state)?;
                if state != [first, first * self.ex.vector as u64] {
                    return Err(format!(
                        "rank {}: the calculator's state handed by rank {from} resumes at vector {} with {} elements computed, expected {} with {}",
                        job.rank,
                        state[0] + 1,
                        state[1],
                        first + 1,
                        first * self.ex.vector as u64
                    ));
                }
                total = state[1];
                Handoffs::acknowledge(job, from, &state);
            }
            let last = (first + period).min(self.ex.ops);
            for op in first..last {
                job.recv(generator_rank, QUESTION, &mut buf, "question")?;
                self.ex.compute(&mut buf, op);
                job.send(generator_rank, ANSWER, &buf);
                computed += self.ex.vector as u64;
                total += self.ex.vector as u64;
                served += 1;
            }
            if last < self.ex.ops {
                let to = self.holder_of(last, holders);
                // The role's state: where it stands (the vector index, which
                // the acknowledgement echoes) and what it has done.
                handoffs.hand(job, to, &[last, total], "vector index")?;
            }
        }
        // Counted by the rank that hands the role on: each hand-off once.
        let [n, ns, max] = handoffs.counters();
        Ok(stats(served, start, &[computed, n, ns, max]))
    }
}

impl MpiWorkload for Mpi {
    fn min_ranks(&self) -> usize {
        if self.handoff.is_some() { 3 } else { 2 }
    }

    fn seats(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i {
                0 => "generator".to_string(),
                1 => "calculator".to_string(),
                i => format!("spare calculator {}", i - 1),
            })
            .collect()
    }

    fn default_cast(&self, size: usize) -> Vec<usize> {
        match self.handoff {
            Some(_) => (0..size).collect(),
            None => vec![0, 1],
        }
    }

    fn check_cast(&self, cast: &[usize]) -> Result<(), String> {
        match self.handoff {
            // The rotation may be as long as the job allows.
            Some(_) if cast.len() < 3 => Err(format!(
                "{} rank(s) given; with --handoff a placement names the generator, the calculator and at least one spare calculator",
                cast.len()
            )),
            Some(_) => Ok(()),
            None => cast_len(self, cast, 2),
        }?;
        distinct(cast, "generator-calculator")
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

    fn workers(&self, cast: &[usize]) -> Vec<usize> {
        cast.to_vec()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "vector": self.ex.vector,
            "ops": self.ex.ops,
            "element_bytes": 4,
            "message_bytes": self.ex.message_bytes(),
            "engine": "mpi",
            "handoff_every": self.handoff,
        })
    }

    fn duration(&self) -> Option<Duration> {
        None
    }

    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String> {
        let raw = job.places();
        let (generator_rank, holders) = (cast[0], &cast[1..]);
        let mine = match job.rank {
            r if r == generator_rank => self.generator(job, holders)?,
            r if holders.contains(&r) => self.calculator(job, generator_rank, holders)?,
            // No role: asleep until the run ends (in the gather).
            _ => [0; STATS],
        };
        let all = job.gather(&mine);
        if job.rank != 0 {
            return Ok(None);
        }
        let roles = self.roles(cast, job.size);
        let served: u64 = holders.iter().map(|&r| all[r][super::OPS]).sum();
        if served != self.ex.ops {
            return Err(format!(
                "the calculator ranks answered {served} vectors, the generator sent {}",
                self.ex.ops
            ));
        }
        let elapsed = all[generator_rank][super::TIME];
        let verified = all[generator_rank][super::STATS - super::COUNTERS];
        let (handoffs, handoff) = handoff_metrics(&all, holders, 1);
        let mut metrics = vec![
            ("time_ns", elapsed as f64),
            ("per_op_ns", elapsed as f64 / self.ex.ops as f64),
            ("verified_elements", verified as f64),
        ];
        if self.handoff.is_some() {
            let expected = self.ex.ops.div_ceil(self.period()) - 1;
            if handoffs != expected {
                return Err(format!(
                    "{handoffs} hand-offs were made, expected {expected}"
                ));
            }
            metrics.extend(handoff);
        }
        let processes = self
            .workers(cast)
            .into_iter()
            .map(|r| {
                let names: &[&'static str] = if r == generator_rank {
                    &GENERATOR_COUNTERS
                } else {
                    &CALCULATOR_COUNTERS
                };
                process(&roles[r], r, &raw[r], &all[r], names)
            })
            .collect();
        Ok(Some(RunRecord {
            elapsed_ns: elapsed,
            stopped_after_ns: None,
            figure: elapsed as f64,
            processes,
            metrics,
            places: places(&raw, &roles),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calculator_role_rotates_every_k_vectors_over_the_ranks_after_the_generator() {
        let p = Params {
            ops: Some(2000),
            ..Params::default()
        };
        let w = prepare(&p, Some(500)).unwrap();
        let cast = w.default_cast(3);
        assert_eq!(cast, [0, 1, 2]);
        let at = |op| w.holder_of(op, &cast[1..]);
        assert_eq!(
            [at(0), at(499), at(500), at(999), at(1000), at(1999)],
            [1, 1, 2, 2, 1, 2]
        );
        assert_eq!(
            w.roles(&w.default_cast(4), 4),
            [
                "generator",
                "calculator",
                "spare calculator 1",
                "spare calculator 2"
            ]
        );
        // Without --handoff rank 1 answers everything and the rest idle.
        let w = prepare(&p, None).unwrap();
        assert_eq!(w.default_cast(4), [0, 1]);
        assert_eq!(w.holder_of(1999, &[1]), 1);
        assert_eq!(w.roles(&[0, 1], 3)[2], "idle");
        assert!(prepare(&p, Some(0)).is_err());
    }

    #[test]
    fn a_placement_names_the_generator_then_the_calculator() {
        let w = prepare(&Params::default(), None).unwrap();
        assert_eq!(w.roles(&[2, 0], 3), ["calculator", "idle", "generator"]);
        assert_eq!(w.workers(&[2, 0]), [2, 0]);
        assert!(w.check_cast(&[0, 2]).is_ok());
        let e = w.check_cast(&[0, 1, 2]).unwrap_err();
        assert!(
            e.contains("names 2") && e.contains("generator, calculator"),
            "{e}"
        );
        assert!(
            w.check_cast(&[1, 1])
                .unwrap_err()
                .contains("rank 1 is named twice")
        );
        let w = prepare(&Params::default(), Some(10)).unwrap();
        assert!(w.check_cast(&[0, 2, 1]).is_ok());
        assert!(
            w.check_cast(&[0, 2])
                .unwrap_err()
                .contains("at least one spare")
        );
        assert_eq!(w.roles(&[0, 2, 1], 3)[1], "spare calculator 1");
    }
}
