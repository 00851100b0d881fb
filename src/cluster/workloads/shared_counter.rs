//! `shared-counter --engine mpi`: the study's shared array becomes an MPI
//! window (`MPI_Win_allocate`) on one rank, and its semaphore an exclusive
//! lock of that window (`MPI_Win_lock(MPI_LOCK_EXCLUSIVE)`). Two counter
//! ranks each, in turn, lock the window, read the whole array (`MPI_Get`),
//! and while its sum is below the threshold add 1 to every element and
//! write it back (`MPI_Put`), then unlock: one pass. A cast names the rank
//! holding the array, then the two counters' (the holder may be one of
//! them). By default, with two ranks, rank 0 holds the array and counts
//! with rank 1 (as the study's first process created the memory it used);
//! with three or more, rank 0 only holds the array and ranks 1 and 2 count,
//! so a launcher can put the memory on a node of its own. The final check is the local workload's
//! ([`Counter::check_final`]), on the array read back by rank 0.

use super::{Job, MpiWorkload, STATS, Stats, cast_len, places, process, stats};
use crate::sys::clock::monotonic_ns;
use crate::sys::mpi_window::Window;
use crate::workloads::shared_counter::Counter;
use crate::workloads::{Params, RunRecord};
use std::time::Duration;

const COUNTERS: [&str; 2] = ["passes", "access_ns"];

/// The workload across ranks.
pub struct Mpi {
    c: Counter,
}

/// The local workload's settings; `--mechanism` has no meaning here.
pub fn prepare(params: &Params) -> Result<Mpi, String> {
    if params.mechanism.is_some() {
        return Err(
            "--mechanism does not apply to --engine mpi: the lock is MPI_Win_lock on the window"
                .into(),
        );
    }
    Ok(Mpi {
        c: Counter::resolve(params)?,
    })
}

impl Mpi {
    /// One counter rank: passes until the threshold is reached.
    fn count(&self, win: &Window, job: &Job) -> Result<Stats, String> {
        let mut array = vec![0u32; win.words()];
        let (mut passes, mut access_ns) = (0u64, 0u64);
        job.barrier();
        let start = monotonic_ns();
        loop {
            let t = monotonic_ns();
            win.lock_exclusive()?;
            win.get(&mut array)?;
            // Taking the lock and the first read: MPI may take the lock
            // only when the read is completed.
            access_ns += monotonic_ns() - t;
            let sum: u64 = array.iter().map(|&a| a as u64).sum();
            if sum >= self.c.threshold {
                win.unlock()?;
                break;
            }
            for a in array.iter_mut() {
                *a = a.wrapping_add(1);
            }
            // Test fault: one doubled increment, which the check must catch.
            if self.c.corrupt && passes == 0 {
                array[0] = array[0].wrapping_add(1);
            }
            win.put(&array)?;
            win.unlock()?;
            passes += 1;
            if !self.c.pause.is_zero() {
                std::thread::sleep(self.c.pause);
            }
        }
        Ok(stats(passes, start, &[passes, access_ns]))
    }
}

impl MpiWorkload for Mpi {
    fn min_ranks(&self) -> usize {
        2
    }

    fn seats(&self, _n: usize) -> Vec<String> {
        ["holds the array", "counter 1", "counter 2"]
            .map(String::from)
            .to_vec()
    }

    fn default_cast(&self, size: usize) -> Vec<usize> {
        if size >= 3 {
            vec![0, 1, 2]
        } else {
            vec![0, 0, 1]
        }
    }

    fn check_cast(&self, cast: &[usize]) -> Result<(), String> {
        cast_len(self, cast, 3)?;
        // The holder may count too (the default with two ranks); the two
        // counters are two processes.
        if cast[1] == cast[2] {
            return Err(format!(
                "rank {} is named twice: the two counters are two ranks (the rank holding the array may be one of them)",
                cast[1]
            ));
        }
        Ok(())
    }

    fn roles(&self, cast: &[usize], size: usize) -> Vec<String> {
        (0..size)
            .map(|r| match cast[1..].iter().position(|&c| c == r) {
                Some(i) if r == cast[0] => format!("counter {} (holds the array)", i + 1),
                Some(i) => format!("counter {}", i + 1),
                None if r == cast[0] => "holds the array".to_string(),
                None => "idle".to_string(),
            })
            .collect()
    }

    fn workers(&self, cast: &[usize]) -> Vec<usize> {
        cast[1..].to_vec()
    }

    fn title(&self) -> String {
        let mut t = format!(
            "shared-counter across MPI ranks: {} array ({} element(s)) in an MPI window, threshold {} ({} passes), MPI_Win_lock exclusive",
            self.c.array_label(),
            self.c.elements,
            self.c.threshold,
            self.c.passes()
        );
        if !self.c.pause.is_zero() {
            t.push_str(&format!(
                ", {} ms pause after each pass",
                self.c.pause.as_secs_f64() * 1e3
            ));
        }
        t
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
        })
    }

    fn duration(&self) -> Option<Duration> {
        None
    }

    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String> {
        let raw = job.places();
        let (holder, counters) = (cast[0], &cast[1..]);
        // Collective, as is its release at the end of this function.
        let win = Window::allocate(self.c.elements, holder as i32, job.rank as i32)?;
        let mine = if counters.contains(&job.rank) {
            self.count(&win, job)?
        } else {
            if job.rank == holder {
                job.barrier();
            }
            [0; STATS]
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
        let roles = self.roles(cast, job.size);
        Ok(Some(RunRecord {
            elapsed_ns: elapsed,
            stopped_after_ns: None,
            figure: elapsed as f64,
            processes: counters
                .iter()
                .map(|&r| process(&roles[r], r, &raw[r], &all[r], &COUNTERS))
                .collect(),
            metrics: vec![
                ("time_ns", elapsed as f64),
                ("per_op_ns", elapsed as f64 / passes.max(1) as f64),
                ("final_sum", sum as f64),
                ("threshold", self.c.threshold as f64),
            ],
            places: places(&raw, &roles),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_0_counts_with_two_ranks_and_only_holds_the_array_with_more() {
        let w = prepare(&Params::default()).unwrap();
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
        assert!(prepare(&p).err().unwrap().contains("MPI_Win_lock"));
    }
}
