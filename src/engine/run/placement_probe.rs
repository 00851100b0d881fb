//! The placement probe: a cache line bounced between the two measured CPUs,
//! a few milliseconds before the first pass, before each later pass and
//! after the last. Inside a VM the host may put the two vCPUs on cores that
//! share a last-level cache or on cores that do not, and change its mind
//! for minutes at a time; the guest's own topology does not say which, and
//! every figure that moves data between the CPUs follows. The probe's round
//! trip is what the host's placement costs, measured beside the figures,
//! so that a run (and a comparison of runs) can tell the host's move from
//! the code's.

use crate::sys::clock::monotonic_ns;
use crate::sys::sched;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Round trips in one timed block.
const BLOCK: u64 = 200;
/// Timed blocks in one probe (one more is run first, untimed, to warm up).
const BLOCKS: usize = 41;
/// How long one side waits for the other's write before the probe fails:
/// a vCPU the host does not run for this long is no placement to measure.
const PEER_DEADLINE: Duration = Duration::from_secs(1);

/// One probe: the round trip of a cache line between the two CPUs, over
/// its timed blocks (each block's time over its round trips, less the
/// cost of the two clock reads that bound it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeSample {
    /// Median block's round trip, ns.
    pub median_ns: f64,
    /// 10th percentile of the blocks, ns.
    pub p10_ns: f64,
    /// 90th percentile of the blocks, ns.
    pub p90_ns: f64,
    /// The clock-read pair subtracted from each block, per round trip, ns.
    pub clock_ns: f64,
    /// How long the probe took, threads' start and end included, ns: what
    /// it added to the run.
    pub took_ns: u64,
}

/// Round trips below this (ns) suggest SMT siblings (the line stays in
/// one core's caches): published core-to-core figures of bare-metal x86
/// servers put siblings at 10–40 ns a round trip.
pub const SIBLINGS_BELOW_NS: f64 = 40.0;

/// Round trips below this (ns), and not siblings, suggest two cores that
/// share a last-level cache (50–200 ns on bare-metal x86 servers); above
/// it, cores across caches (another CCX, die or socket: 200–700 ns).
pub const SHARED_CACHE_BELOW_NS: f64 = 200.0;

/// The class of placement a round trip suggests, by the thresholds above.
pub fn class(round_trip_ns: f64) -> &'static str {
    if round_trip_ns < SIBLINGS_BELOW_NS {
        "SMT siblings"
    } else if round_trip_ns < SHARED_CACHE_BELOW_NS {
        "shared last-level cache"
    } else {
        "across caches"
    }
}

/// Where in the run a probe was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeAt {
    /// Before the first pass.
    Start,
    /// Before pass `n` (from 2) of the run's passes, counted across levels.
    BeforePass(usize),
    /// After the last pass.
    End,
    /// Before a level placed on a pair of its own (each pair of a map),
    /// that pair.
    Pair,
}

/// The line, alone in its 128 bytes (adjacent-line prefetch pairs 64-byte
/// lines on x86): nothing else shares it.
#[repr(align(128))]
struct Line {
    seq: AtomicU64,
}

/// Waits until `line` holds `want`, spinning; false when the peer did not
/// write it within [`PEER_DEADLINE`] or `quit` was set.
fn wait_for(line: &AtomicU64, want: u64, quit: &AtomicBool) -> bool {
    let mut spins = 0u32;
    let mut since = 0;
    while line.load(Ordering::Acquire) != want {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        // The clock is read once in 4096 spins: a read per spin would be
        // part of what is timed.
        if spins.is_multiple_of(4096) {
            if quit.load(Ordering::Relaxed) {
                return false;
            }
            let now = monotonic_ns();
            if since == 0 {
                since = now;
            } else if now - since > PEER_DEADLINE.as_nanos() as u64 {
                return false;
            }
        }
    }
    true
}

/// Bounces a cache line between CPUs `a` and `b` (each side a thread
/// pinned there): the measuring side writes odd values, the other answers
/// with the next even one.
pub fn probe(a: usize, b: usize) -> Result<ProbeSample, String> {
    let line = Line {
        seq: AtomicU64::new(0),
    };
    let quit = AtomicBool::new(false);
    let began = monotonic_ns();
    // What the two reads that bound a block add to it, as every figure's.
    let clock = crate::engine::message::clock_overhead_ns();
    let rounds = BLOCK * (BLOCKS as u64 + 1);
    std::thread::scope(|scope| {
        let answerer = scope.spawn(|| -> Result<(), String> {
            sched::pin_to_cpu(b).map_err(|e| format!("cannot pin to CPU {b}: {e}"))?;
            for i in 0..rounds {
                if !wait_for(&line.seq, 2 * i + 1, &quit) {
                    return Err(format!("CPU {a}'s side stopped answering"));
                }
                line.seq.store(2 * i + 2, Ordering::Release);
            }
            Ok(())
        });
        let asker = scope.spawn(|| -> Result<Vec<f64>, String> {
            let asked = (|| {
                sched::pin_to_cpu(a).map_err(|e| format!("cannot pin to CPU {a}: {e}"))?;
                let mut blocks = Vec::with_capacity(BLOCKS);
                let mut i = 0;
                for block in 0..=BLOCKS {
                    let t0 = monotonic_ns();
                    for _ in 0..BLOCK {
                        line.seq.store(2 * i + 1, Ordering::Release);
                        if !wait_for(&line.seq, 2 * i + 2, &quit) {
                            return Err(format!("CPU {b}'s side did not answer within 1 s"));
                        }
                        i += 1;
                    }
                    let t1 = monotonic_ns();
                    if block > 0 {
                        blocks.push(((t1 - t0) as f64 - clock).max(0.0) / BLOCK as f64);
                    }
                }
                Ok(blocks)
            })();
            // The other side stops waiting at its next look.
            quit.store(true, Ordering::Relaxed);
            asked
        });
        let asked = asker
            .join()
            .unwrap_or_else(|_| Err("the probe's thread panicked".into()));
        let answered = answerer
            .join()
            .unwrap_or_else(|_| Err("the probe's thread panicked".into()));
        let mut blocks = match (asked, answered) {
            (Ok(blocks), _) => blocks,
            // A side that could not be pinned is why the other waited.
            (Err(_), Err(why)) if why.starts_with("cannot pin") => return Err(why),
            (Err(why), _) => return Err(why),
        };
        blocks.sort_by(f64::total_cmp);
        let at = |q: f64| crate::stats::quantile_sorted(&blocks, q);
        Ok(ProbeSample {
            median_ns: at(0.5),
            p10_ns: at(0.1),
            p90_ns: at(0.9),
            clock_ns: clock / BLOCK as f64,
            took_ns: monotonic_ns() - began,
        })
    })
}

/// The two CPUs a run's probe bounces its line between: the client's and
/// the server's where both are pinned to different CPUs, else the first
/// two this process may use (the CPUs an unpinned pair mostly runs on);
/// `None` with one CPU (no line moves between CPUs).
pub fn pair(client: Option<usize>, server: Option<usize>) -> Option<(usize, usize)> {
    match (client, server) {
        (Some(c), Some(s)) if c != s => Some((c, s)),
        (Some(_), Some(_)) => None,
        _ => {
            let cpus = sched::allowed_cpus().ok()?;
            (cpus.len() >= 2).then(|| (cpus[0], cpus[1]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_between_two_cpus_gives_ordered_positive_figures() {
        let Some((a, b)) = pair(None, None) else {
            return; // one CPU: nothing to bounce between
        };
        let s = probe(a, b).expect("probe");
        assert!(s.median_ns > 0.0, "{s:?}");
        assert!(s.p10_ns <= s.median_ns && s.median_ns <= s.p90_ns, "{s:?}");
        assert!(s.clock_ns >= 0.0);
    }

    #[test]
    fn one_cpu_has_no_pair_and_a_pinned_pair_is_its_own() {
        assert_eq!(pair(Some(1), Some(1)), None);
        assert_eq!(pair(Some(0), Some(3)), Some((0, 3)));
    }
}
