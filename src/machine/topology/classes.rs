//! The classes of a pair of CPUs: how far apart they are (`Distance`)
//! and, on a machine with two core types, which types they are
//! (`PairClass`); a topology's pairs grouped by class.

use super::{CpuPlace, EFFICIENCY, PERFORMANCE, Topology, type_rank};
use std::cmp::Ordering;

/// How far apart two CPUs are, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Distance {
    /// Client and server on one CPU.
    SameCpu,
    /// Two hardware threads of one core.
    Smt,
    /// Two cores sharing a last-level cache.
    SameLlc,
    /// One package and NUMA node, different last-level caches (AMD CCXs).
    SameNode,
    /// One package, different NUMA nodes (sub-NUMA clustering, NPS2/4).
    OtherNode,
    /// Different packages.
    CrossSocket,
}

impl Distance {
    /// Every distance, nearest first.
    pub const ALL: [Distance; 6] = [
        Distance::SameCpu,
        Distance::Smt,
        Distance::SameLlc,
        Distance::SameNode,
        Distance::OtherNode,
        Distance::CrossSocket,
    ];

    /// The stable name records, tables and `compare` use.
    pub fn name(self) -> &'static str {
        match self {
            Distance::SameCpu => "same-cpu",
            Distance::Smt => "smt",
            Distance::SameLlc => "same-llc",
            Distance::SameNode => "same-node",
            Distance::OtherNode => "other-node",
            Distance::CrossSocket => "cross-socket",
        }
    }

    /// The distance a [`name`](Distance::name) names.
    pub fn from_name(name: &str) -> Option<Distance> {
        Distance::ALL.into_iter().find(|d| d.name() == name)
    }

    /// What the two CPUs share, in one line.
    pub fn description(self) -> &'static str {
        match self {
            Distance::SameCpu => {
                "one CPU: client and server take turns on it, every hand-off a context switch"
            }
            Distance::Smt => "two hardware threads of one core: they share its L1 and L2",
            Distance::SameLlc => "two cores that share the last-level cache",
            Distance::SameNode => {
                "one package and NUMA node, different last-level caches (e.g. AMD CCXs)"
            }
            Distance::OtherNode => {
                "one package, different NUMA nodes (sub-NUMA clustering): memory is nearer one side"
            }
            Distance::CrossSocket => "different packages: every line crosses the socket link",
        }
    }
}

/// The class of an ordered (client, server) pair: its distance and, on a
/// machine with two core types, the types of the two CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PairClass {
    /// How far apart the two CPUs are.
    pub distance: Distance,
    /// (client's, server's) core type, only on a machine with cores of more
    /// than one type; `"unknown"` for a CPU whose type was not read there.
    pub types: Option<(String, String)>,
}

impl PairClass {
    /// The class as tables show it: `"smt"`, `"same-llc P→E"`.
    pub fn label(&self) -> String {
        match &self.types {
            None => self.distance.name().to_string(),
            Some((c, s)) => format!(
                "{} {}→{}",
                self.distance.name(),
                type_letter(c),
                type_letter(s)
            ),
        }
    }

    fn sort_key(&self) -> (Distance, u8, u8, Option<&(String, String)>) {
        let (c, s) = match &self.types {
            Some((c, s)) => (type_rank(Some(c)), type_rank(Some(s))),
            None => (0, 0),
        };
        (self.distance, c, s, self.types.as_ref())
    }
}

/// Nearest first; on a hybrid machine P→P, P→E, E→P, E→E within a distance.
impl Ord for PairClass {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl PartialOrd for PairClass {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn type_letter(t: &str) -> &str {
    match t {
        PERFORMANCE => "P",
        EFFICIENCY => "E",
        _ => "?",
    }
}

impl Topology {
    /// The class of the ordered pair (client, server); `None` where either
    /// CPU is not one of those read. Checked in this order: one CPU,
    /// different packages, SMT siblings, different nodes (even where a
    /// cache spans them), one last-level cache, else same node.
    pub fn class(&self, client: usize, server: usize) -> Option<PairClass> {
        Some(self.class_of(self.place(client)?, self.place(server)?, self.hybrid()))
    }

    fn class_of(&self, c: &CpuPlace, s: &CpuPlace, hybrid: bool) -> PairClass {
        // Package before node: a node never spans packages on real machines,
        // but a kernel without NUMA puts every CPU on node 0.
        let distance = if c.cpu == s.cpu {
            Distance::SameCpu
        } else if c.package != s.package {
            Distance::CrossSocket
        } else if c.smt_siblings.contains(&s.cpu) || s.smt_siblings.contains(&c.cpu) {
            Distance::Smt
        } else if c.node != s.node {
            Distance::OtherNode
        } else if c.llc == s.llc {
            Distance::SameLlc
        } else {
            Distance::SameNode
        };
        let types = hybrid.then(|| {
            let t = |p: &CpuPlace| p.core_type.clone().unwrap_or_else(|| "unknown".into());
            (t(c), t(s))
        });
        PairClass { distance, types }
    }

    /// The position of every CPU read, indexed by CPU number.
    pub(super) fn index(&self) -> Vec<Option<usize>> {
        let len = self.cpus.iter().map(|p| p.cpu + 1).max().unwrap_or(0);
        let mut index = vec![None; len];
        for (i, p) in self.cpus.iter().enumerate() {
            index[p.cpu] = Some(i);
        }
        index
    }

    /// `pairs` by class, nearest class first, each class's pairs once and
    /// in topology order (client's row, then server's column). Pairs that
    /// name a CPU not read are left out.
    pub fn classes(&self, pairs: &[(usize, usize)]) -> Vec<(PairClass, Vec<(usize, usize)>)> {
        let index = self.index();
        let at = |cpu: usize| index.get(cpu).copied().flatten();
        let mut placed: Vec<(usize, usize)> = pairs
            .iter()
            .filter_map(|&(c, s)| Some((at(c)?, at(s)?)))
            .collect();
        placed.sort_unstable();
        placed.dedup();
        let hybrid = self.hybrid();
        let mut out: Vec<(PairClass, Vec<(usize, usize)>)> = Vec::new();
        for (ci, si) in placed {
            let (c, s) = (&self.cpus[ci], &self.cpus[si]);
            let class = self.class_of(c, s, hybrid);
            match out.iter_mut().find(|(k, _)| *k == class) {
                Some((_, v)) => v.push((c.cpu, s.cpu)),
                None => out.push((class, vec![(c.cpu, s.cpu)])),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
