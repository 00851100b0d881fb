//! `shared-counter --engine mpi`: the study's shared array becomes an MPI
//! window (`MPI_Win_allocate`) on one rank, and its semaphore an exclusive
//! lock of that window (`MPI_Win_lock(MPI_LOCK_EXCLUSIVE)`). Two counter
//! ranks each, in turn, lock the window, read the whole array (`MPI_Get`),
//! and while its sum is below the threshold add 1 to every element and
//! write it back (`MPI_Put`), then unlock: one pass. A cast names the rank
//! holding the array, then the two counters' (the holder may be one of
//! them), then with `--handoff` the spares. By default, with two ranks, rank 0 holds the array and counts
//! with rank 1 (as the study's first process created the memory it used);
//! with three or more, rank 0 only holds the array and ranks 1 and 2 count,
//! so a launcher can put the memory on a node of its own. The final check is the local workload's
//! ([`Counter::check_final`]), on the array read back by rank 0.
//!
//! `--handoff K`: MPI cannot move a process, so each counter's *role* is
//! moved instead. Every K passes of a counter, the rank playing it sends
//! the role's state (its passes so far and the number of the hand-off) to
//! the next rank of that counter's rotation, which checks that the state
//! continues where it expects, acknowledges it and counts on. The spares
//! are dealt alternately to the two counters (spare 1 to counter 1, spare 2
//! to counter 2, spare 3 to counter 1, …), so each rotation is its own and
//! no rank is ever asked to play both counters; every counter needs a spare.
//! The handing rank times each hand-off from sending the state to receiving
//! the acknowledgement (shared with generator-calculator: [`Handoffs`]): an
//! application-level hand-off, not a migration. When a counter finds the
//! threshold reached, the rank playing it tells the next rank of its
//! rotation, which tells the next, so every waiting rank of it stops.

use super::{
    HANDOFF_COUNTERS, Handoffs, Job, MpiWorkload, Rotation, STATS, Stats, cast_len,
    handoff_metrics, places, process, stats,
};
use crate::sys::clock::monotonic_ns;
use crate::sys::mpi_window::Window;
use crate::workloads::shared_counter::Counter;
use crate::workloads::{Params, RunRecord};
use std::time::Duration;

const COUNTERS: [&str; 2] = ["passes", "access_ns"];
/// With `--handoff`: a rank's counters, then its hand-offs'.
const HANDOFF_RANK_COUNTERS: [&str; 5] = [
    COUNTERS[0],
    COUNTERS[1],
    HANDOFF_COUNTERS[0],
    HANDOFF_COUNTERS[1],
    HANDOFF_COUNTERS[2],
];

/// The workload across ranks, and its hand-off period.
pub struct Mpi {
    c: Counter,
    handoff: Option<u64>,
}

/// The local workload's settings and the hand-off period; `--mechanism`
/// has no meaning here.
pub fn prepare(params: &Params, handoff: Option<u64>) -> Result<Mpi, String> {
    if params.mechanism.is_some() {
        return Err(
            "--mechanism does not apply to --engine mpi: the lock is MPI_Win_lock on the window"
                .into(),
        );
    }
    if handoff == Some(0) {
        return Err("--handoff 0: at least one pass between hand-offs".into());
    }
    Ok(Mpi {
        c: Counter::resolve(params)?,
        handoff,
    })
}

/// The ranks that play counter `i` (0 or 1) in turn under `cast`: the
/// counter's rank, then every other spare starting with the `i`-th.
fn rotation(cast: &[usize], i: usize) -> Vec<usize> {
    super::rotation(&cast[1..3], &cast[3..], i)
}

impl Mpi {
    /// One rank of a counter's `ring` (its rotation): it plays the counter
    /// in its turns (the first rank from the start), passes until the
    /// threshold is reached or K passes of the role are done, then hands
    /// the role to the next rank of the ring and waits for its turn to
    /// come back or the role to end.
    fn count(&self, win: &Window, job: &Job, ring: &[usize]) -> Result<Stats, String> {
        let mut array = vec![0u32; win.words()];
        let (mut passes, mut access_ns) = (0u64, 0u64);
        let mut handoffs = Handoffs::default();
        let rot = Rotation::new(ring, job.rank);
        let period = self.handoff.unwrap_or(u64::MAX);
        // The role's state: its passes (by every rank that played it) and
        // the number of hand-offs so far.
        let (mut role_passes, mut turn) = (0u64, 0u64);
        job.barrier();
        let start = monotonic_ns();
        // The rotation's first rank starts playing; every other turn
        // begins with the role handed by the previous rank.
        let mut wait = !rot.first();
        loop {
            if wait {
                // [role passes, hand-off number, kind, where it ended].
                let mut msg = [0u64; 4];
                if !rot.wait(job, &mut msg)? {
                    break;
                }
                if !rot.is_turn(msg[1]) || msg[0] != msg[1].saturating_mul(period) {
                    return Err(format!(
                        "rank {}: the counter's state handed by rank {} (hand-off {}, {} passes) does not continue the rotation (a hand-off every {period} passes)",
                        job.rank, rot.prev, msg[1], msg[0]
                    ));
                }
                (role_passes, turn) = (msg[0], msg[1]);
                Handoffs::acknowledge(job, rot.prev, &msg);
            }
            let finished = loop {
                let t = monotonic_ns();
                win.lock_exclusive()?;
                win.get(&mut array)?;
                // Taking the lock and the first read: MPI may take the lock
                // only when the read is completed.
                access_ns += monotonic_ns() - t;
                let sum: u64 = array.iter().map(|&a| a as u64).sum();
                if sum >= self.c.threshold {
                    win.unlock()?;
                    break true;
                }
                for a in array.iter_mut() {
                    *a = a.wrapping_add(1);
                }
                // Test fault: one doubled increment, which the check must
                // catch (on the role's first pass, whoever plays it).
                if self.c.corrupt && role_passes == 0 {
                    array[0] = array[0].wrapping_add(1);
                }
                win.put(&array)?;
                win.unlock()?;
                passes += 1;
                role_passes += 1;
                if !self.c.pause.is_zero() {
                    std::thread::sleep(self.c.pause);
                }
                if role_passes % period == 0 {
                    break false;
                }
            };
            if finished {
                rot.finish(job, &[role_passes, turn]);
                break;
            }
            turn += 1;
            rot.hand(job, &mut handoffs, &[role_passes, turn], "pass")?;
            wait = true;
        }
        let [n, ns, max] = handoffs.counters();
        Ok(stats(passes, start, &[passes, access_ns, n, ns, max]))
    }
}

impl MpiWorkload for Mpi {
    fn min_ranks(&self) -> usize {
        // With --handoff, a spare for each counter (the holder counting).
        if self.handoff.is_some() { 4 } else { 2 }
    }

    fn seats(&self, n: usize) -> Vec<String> {
        let mut seats: Vec<String> = ["holds the array", "counter 1", "counter 2"]
            .map(String::from)
            .to_vec();
        seats.extend((0..n.saturating_sub(3)).map(spare));
        seats
    }

    fn default_cast(&self, size: usize) -> Vec<usize> {
        match self.handoff {
            // Every other rank a spare; with four, rank 0 holds the array
            // and counts so that each counter has a spare.
            Some(_) if size >= 5 => (0..size).collect(),
            Some(_) => [0].into_iter().chain(0..size).collect(),
            None if size >= 3 => vec![0, 1, 2],
            None => vec![0, 0, 1],
        }
    }

    fn check_cast(&self, cast: &[usize]) -> Result<(), String> {
        match self.handoff {
            Some(_) if cast.len() < 5 => {
                return Err(format!(
                    "{} rank(s) given; with --handoff a placement names the rank holding the array, the two counters and at least one spare for each counter",
                    cast.len()
                ));
            }
            Some(_) => {}
            None => cast_len(self, cast, 3)?,
        }
        // The holder may count too (the default with two ranks); the
        // counters and spares are processes of their own.
        for (i, r) in cast[1..].iter().enumerate() {
            if cast[1..1 + i].contains(r) {
                return Err(format!(
                    "rank {r} is named twice: the two counters and their spares are ranks of their own (the rank holding the array may be one of them)"
                ));
            }
        }
        Ok(())
    }

    fn roles(&self, cast: &[usize], size: usize) -> Vec<String> {
        let seats = self.seats(cast.len());
        (0..size)
            .map(|r| match cast[1..].iter().position(|&c| c == r) {
                Some(i) if r == cast[0] => format!("{} (holds the array)", seats[i + 1]),
                Some(i) => seats[i + 1].clone(),
                None if r == cast[0] => "holds the array".to_string(),
                None => "idle".to_string(),
            })
            .collect()
    }

    fn workers(&self, cast: &[usize]) -> Vec<usize> {
        cast[1..].to_vec()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "array_bytes": 4 * self.c.elements,
            "elements": self.c.elements,
            "threshold": self.c.threshold,
            "passes": self.c.passes(),
            "mechanism": "mpi-win-lock",
            "pause_ms": self.c.pause.as_secs_f64() * 1e3,
            "engine": "mpi",
            "handoff_every": self.handoff,
        })
    }

    fn duration(&self) -> Option<Duration> {
        None
    }

    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String> {
        let raw = job.places();
        let (holder, counters) = (cast[0], &cast[1..]);
        let rings = [rotation(cast, 0), rotation(cast, 1)];
        // Collective, as is its release at the end of this function.
        let win = Window::allocate(self.c.elements, holder as i32, job.rank as i32)?;
        let mine = match rings.iter().find(|ring| ring.contains(&job.rank)) {
            Some(ring) => self.count(&win, job, ring)?,
            None => {
                if job.rank == holder {
                    job.barrier();
                }
                [0; STATS]
            }
        };
        // Across nodes (osc pt2pt) the holder serves the locks only inside
        // MPI calls: it must keep calling MPI until the counters are done.
        let all = if job.rank == holder {
            job.gather_serving(&mine)
        } else {
            job.gather(&mine)
        };
        if job.rank != 0 {
            return Ok(None);
        }
        // Every counter has stopped (the gather): rank 0 reads the array.
        let mut array = vec![0u32; self.c.elements];
        win.lock_shared()?;
        win.get(&mut array)?;
        win.unlock()?;
        let passes: u64 = counters.iter().map(|&r| all[r][super::OPS]).sum();
        let sum = self.c.check_final(&array, passes)?;
        // The run ends when the last counter stops.
        let elapsed = counters
            .iter()
            .map(|&r| all[r][super::TIME])
            .max()
            .unwrap_or(0);
        let mut metrics = vec![
            ("time_ns", elapsed as f64),
            ("per_op_ns", elapsed as f64 / passes.max(1) as f64),
            ("final_sum", sum as f64),
            ("threshold", self.c.threshold as f64),
        ];
        let names: &[&'static str] = match self.handoff {
            Some(k) => {
                // A role hands on after each K of its passes, including
                // the last if it ends on one (the next rank then finds the
                // threshold reached).
                for (i, ring) in rings.iter().enumerate() {
                    let role: u64 = ring.iter().map(|&r| all[r][super::OPS]).sum();
                    let (made, _) = handoff_metrics(&all, ring, 2);
                    if made != role / k {
                        return Err(format!(
                            "counter {} made {made} hand-offs in {role} passes, expected {} (one every {k})",
                            i + 1,
                            role / k
                        ));
                    }
                }
                metrics.extend(handoff_metrics(&all, counters, 2).1);
                &HANDOFF_RANK_COUNTERS
            }
            None => &COUNTERS,
        };
        let roles = self.roles(cast, job.size);
        Ok(Some(RunRecord {
            elapsed_ns: elapsed,
            stopped_after_ns: None,
            figure: elapsed as f64,
            processes: counters
                .iter()
                .map(|&r| process(&roles[r], r, &raw[r], &all[r], names))
                .collect(),
            metrics,
            places: places(&raw, &roles),
        }))
    }
}

/// The role of the `j`-th spare (from 0): spares are dealt alternately to
/// the two counters.
fn spare(j: usize) -> String {
    format!("counter {} spare {}", j % 2 + 1, j / 2 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_0_counts_with_two_ranks_and_only_holds_the_array_with_more() {
        let w = prepare(&Params::default(), None).unwrap();
        assert_eq!(w.workers(&w.default_cast(2)), [0, 1]);
        assert_eq!(w.workers(&w.default_cast(3)), [1, 2]);
        assert_eq!(w.roles(&w.default_cast(3), 3)[0], "holds the array");
        assert!(w.roles(&w.default_cast(2), 2)[0].starts_with("counter 1"));
        // A placement: the holder first, then the two counters.
        assert_eq!(
            w.roles(&[2, 0, 2], 3),
            ["counter 1", "idle", "counter 2 (holds the array)"]
        );
        assert!(w.check_cast(&[1, 1, 2]).is_ok());
        assert!(
            w.check_cast(&[0, 1, 1])
                .unwrap_err()
                .contains("two counters")
        );
        assert!(w.check_cast(&[0, 1]).unwrap_err().contains("names 3"));
        let p = Params {
            mechanism: Some(crate::workloads::LockKind::Futex),
            ..Params::default()
        };
        assert!(prepare(&p, None).err().unwrap().contains("MPI_Win_lock"));
    }

    #[test]
    fn with_handoff_the_spares_are_dealt_alternately_to_the_two_counters() {
        let w = prepare(&Params::default(), Some(100)).unwrap();
        assert_eq!(w.min_ranks(), 4);
        // Four ranks: rank 0 holds the array and counts.
        let cast = w.default_cast(4);
        assert_eq!(cast, [0, 0, 1, 2, 3]);
        assert_eq!(
            (rotation(&cast, 0), rotation(&cast, 1)),
            (vec![0, 2], vec![1, 3])
        );
        let cast = w.default_cast(6);
        assert_eq!(cast, [0, 1, 2, 3, 4, 5]);
        assert_eq!(rotation(&cast, 0), [1, 3, 5]);
        assert_eq!(rotation(&cast, 1), [2, 4]);
        assert_eq!(
            w.roles(&cast, 6),
            [
                "holds the array",
                "counter 1",
                "counter 2",
                "counter 1 spare 1",
                "counter 2 spare 1",
                "counter 1 spare 2"
            ]
        );
        assert_eq!(
            w.roles(&[3, 0, 1, 2, 3], 4)[3],
            "counter 2 spare 1 (holds the array)"
        );
        assert!(
            w.check_cast(&[0, 1, 2, 3])
                .unwrap_err()
                .contains("at least one spare for each")
        );
        assert!(
            w.check_cast(&[0, 1, 2, 3, 1])
                .unwrap_err()
                .contains("rank 1 is named twice")
        );
        assert!(prepare(&Params::default(), Some(0)).is_err());
    }
}
