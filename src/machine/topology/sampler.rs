//! The pairs `ipcmark map` measures: all of them, or a few per class
//! (`map --sample`) on a machine where all n² take too long.

use super::Topology;

/// Every ordered pair of the topology's CPUs in topology order (client's
/// row, then server's column); (c, c) only where `same_cpu`.
pub fn all_pairs(topology: &Topology, same_cpu: bool) -> Vec<(usize, usize)> {
    let ids = topology.cpu_ids();
    let mut out = Vec::with_capacity(ids.len() * ids.len());
    for &c in &ids {
        for &s in &ids {
            if c != s || same_cpu {
                out.push((c, s));
            }
        }
    }
    out
}

/// A few of `pairs` per class, for a machine where all n² take too long:
/// at least `k` of each class (the whole class where it has fewer), spread
/// over the class's CPUs, and then as many more as it takes for every CPU
/// named in `pairs` to be in at least one chosen pair. Why more than `k`:
/// a class median can hide one CPU that is slower than its peers (it takes
/// the device interrupts, or it is the one core of its kind), and a map
/// that never ran on it cannot show it; each added pair covers two CPUs not
/// yet covered where it can, from the class with the fewest pairs so far.
///
/// Deterministic (no random choice: a rerun measures the same pairs, so
/// two maps compare pair for pair). Within a class each pick prefers a pair
/// of CPUs no chosen pair covers yet, then CPUs this class has used least,
/// and ties go to the first from a starting point that moves 1/k of the
/// class on per pick, so the picks spread over the whole class. Classes
/// pick in turn, nearest first. Pairs naming a CPU the topology does not
/// hold are left out. Returned once each, in topology order.
pub fn sample_pairs(
    topology: &Topology,
    pairs: &[(usize, usize)],
    k: usize,
) -> Vec<(usize, usize)> {
    let index = topology.index();
    let pos = |cpu: usize| index[cpu].unwrap_or(0);
    let classes: Vec<Vec<(usize, usize)>> = topology
        .classes(pairs)
        .into_iter()
        .map(|(_, ps)| ps.into_iter().map(|(c, s)| (pos(c), pos(s))).collect())
        .collect();
    let mut picks = Picks::new(&classes, topology.cpus.len());

    loop {
        let mut picked = false;
        for (ci, ps) in classes.iter().enumerate() {
            let target = k.min(ps.len());
            if picks.counts[ci] >= target {
                continue;
            }
            let start = picks.counts[ci] * ps.len() / target;
            let best = (0..ps.len())
                .map(|step| (start + step) % ps.len())
                .filter(|&pi| !picks.chosen[ci][pi])
                .min_by_key(|&pi| {
                    let (c, s) = ps[pi];
                    let (uc, us) = (picks.uses[ci][c], picks.uses[ci][s]);
                    (2 - picks.fresh(ps[pi]), uc + us, uc.max(us))
                });
            if let Some(pi) = best {
                picks.take(ci, pi);
                picked = true;
            }
        }
        if !picked {
            break;
        }
    }

    // The CPUs the turns above left out, each with the pairs it is in.
    let mut by_cpu: Vec<Vec<(usize, usize)>> = vec![Vec::new(); topology.cpus.len()];
    for (ci, ps) in classes.iter().enumerate() {
        for (pi, &(c, s)) in ps.iter().enumerate() {
            by_cpu[c].push((ci, pi));
            if s != c {
                by_cpu[s].push((ci, pi));
            }
        }
    }
    for (cpu, theirs) in by_cpu.iter().enumerate() {
        if picks.covered[cpu] {
            continue;
        }
        let best = theirs
            .iter()
            .filter(|&&(ci, pi)| !picks.chosen[ci][pi])
            .min_by_key(|&&(ci, pi)| (2 - picks.fresh(classes[ci][pi]), picks.counts[ci], ci, pi))
            .copied();
        if let Some((ci, pi)) = best {
            picks.take(ci, pi);
        }
    }

    let mut out: Vec<(usize, usize)> = classes
        .iter()
        .zip(&picks.chosen)
        .flat_map(|(ps, ch)| ps.iter().zip(ch).filter(|(_, c)| **c).map(|(p, _)| *p))
        .collect();
    out.sort_unstable();
    out.into_iter()
        .map(|(c, s)| (topology.cpus[c].cpu, topology.cpus[s].cpu))
        .collect()
}

/// The sampler's state, over CPU positions and (class, pair) indices.
struct Picks<'a> {
    classes: &'a [Vec<(usize, usize)>],
    chosen: Vec<Vec<bool>>,
    counts: Vec<usize>,
    /// How often each class's chosen pairs use each CPU.
    uses: Vec<Vec<u32>>,
    covered: Vec<bool>,
}

impl<'a> Picks<'a> {
    fn new(classes: &'a [Vec<(usize, usize)>], n: usize) -> Picks<'a> {
        Picks {
            classes,
            chosen: classes.iter().map(|ps| vec![false; ps.len()]).collect(),
            counts: vec![0; classes.len()],
            uses: classes.iter().map(|_| vec![0; n]).collect(),
            covered: vec![false; n],
        }
    }

    /// How many CPUs of the pair no chosen pair covers yet.
    fn fresh(&self, (c, s): (usize, usize)) -> u8 {
        u8::from(!self.covered[c]) + u8::from(s != c && !self.covered[s])
    }

    fn take(&mut self, ci: usize, pi: usize) {
        let (c, s) = self.classes[ci][pi];
        self.chosen[ci][pi] = true;
        self.counts[ci] += 1;
        self.uses[ci][c] += 1;
        self.uses[ci][s] += 1;
        self.covered[c] = true;
        self.covered[s] = true;
    }
}
