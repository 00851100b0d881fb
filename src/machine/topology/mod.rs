//! Where each CPU sits in the machine, read from sysfs, and how far apart
//! two CPUs are: the order, the groups and the pair classes of
//! `ipcmark map` (issue 28), and the sampler that measures a few pairs per
//! class instead of all n² on a large machine.
//!
//! Everything is read through a [`SysRoot`], so the same reader runs on
//! this machine and on fixture trees of machines this one is not. A file
//! that cannot be read never stops the reading: the CPU gets the plainest
//! place that file would have told (its own core, its own last-level
//! cache, node 0), and [`Topology::notes`] says what was missing and what
//! was assumed instead.

use crate::machine::environment::{format_cpu_list, parse_cpu_list};
use crate::machine::sysroot::SysRoot;
use std::cmp::Ordering;
use std::collections::BTreeSet;

const CPU_DIR: &str = "/sys/devices/system/cpu";
const NODE_DIR: &str = "/sys/devices/system/node";
/// Intel hybrid parts list their P-cores here…
const P_CORE_CPUS: &str = "/sys/devices/cpu_core/cpus";
/// …and their E-cores here.
const E_CORE_CPUS: &str = "/sys/devices/cpu_atom/cpus";

/// The core type of a performance core.
pub const PERFORMANCE: &str = "performance";
/// The core type of an efficiency core.
pub const EFFICIENCY: &str = "efficiency";

/// Where one CPU sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlace {
    /// The logical CPU number.
    pub cpu: usize,
    /// Its package (socket): `topology/physical_package_id`.
    pub package: usize,
    /// Its core within the package: `topology/core_id`.
    pub core: usize,
    /// Its NUMA node; 0 where the kernel has no `/sys/devices/system/node`.
    pub node: usize,
    /// Its last-level-cache group: the lowest CPU of the `shared_cpu_list`
    /// of its highest-level data or unified cache (itself where no cache
    /// is described).
    pub llc: usize,
    /// The level of that cache (3 for an L3); `None` where none was read.
    pub llc_level: Option<u8>,
    /// The hardware threads of its core, itself included
    /// (`thread_siblings_list`, else `core_cpus_list`).
    pub smt_siblings: Vec<usize>,
    /// [`PERFORMANCE`] or [`EFFICIENCY`] where the machine has cores of
    /// two kinds (Intel `cpu_core`/`cpu_atom`, else differing
    /// `cpu_capacity`); `None` elsewhere.
    pub core_type: Option<String>,
    /// Its `cpu_capacity` (1024 for the largest core) where exposed.
    pub capacity: Option<u32>,
}

impl CpuPlace {
    /// The lowest CPU of its SMT group: one id per physical core, whatever
    /// the `core_id` numbering (which repeats across packages and dies).
    pub fn core_group(&self) -> usize {
        self.smt_siblings
            .iter()
            .copied()
            .chain([self.cpu])
            .min()
            .unwrap_or(self.cpu)
    }

    /// The order of `ipcmark map`'s rows: node, package, last-level cache,
    /// core type (so the P- and E-cores of one cache form two blocks),
    /// core, CPU.
    fn order_key(&self) -> (usize, usize, usize, u8, usize, usize, usize) {
        (
            self.node,
            self.package,
            self.llc,
            type_rank(self.core_type.as_deref()),
            self.core,
            self.core_group(),
            self.cpu,
        )
    }
}

/// The order in which core types are listed: performance first.
fn type_rank(t: Option<&str>) -> u8 {
    match t {
        Some(PERFORMANCE) => 0,
        Some(EFFICIENCY) => 1,
        Some(_) => 2,
        None => 3,
    }
}

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

/// A level at which the ordered CPUs fall into contiguous groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// NUMA nodes.
    Node,
    /// Packages within a node.
    Package,
    /// Last-level caches within a package.
    Llc,
    /// Core types within a last-level cache.
    CoreType,
    /// Physical cores (SMT groups).
    Core,
}

/// One contiguous run of [`Topology::cpus`] sharing a node, package,
/// cache, core type or core: where a heat map draws a class boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The index in [`Topology::cpus`] of its first CPU.
    pub start: usize,
    /// How many CPUs it holds.
    pub len: usize,
    /// What it is, e.g. `"node 1"`, `"package 0"`, `"L3 of CPU 8"`,
    /// `"performance"`, `"core 3"`.
    pub name: String,
}

/// The CPUs a run may use, each with its place, in the order `ipcmark map`
/// lists them, and what could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// One place per CPU read, ordered by node, package, last-level cache,
    /// core type, core and CPU, so SMT siblings sit together and every
    /// class forms blocks.
    pub cpus: Vec<CpuPlace>,
    /// What could not be read and what was assumed instead; empty where
    /// every file was there.
    pub notes: Vec<String>,
}

/// Missing facts, gathered over the CPUs so one note names them all.
#[derive(Default)]
struct Gaps {
    items: Vec<(String, String, Vec<usize>)>,
}

impl Gaps {
    fn add(&mut self, missing: impl Into<String>, assumed: &str, cpu: usize) {
        let missing = missing.into();
        match self
            .items
            .iter_mut()
            .find(|(m, a, _)| *m == missing && a == assumed)
        {
            Some((_, _, cpus)) => cpus.push(cpu),
            None => self.items.push((missing, assumed.to_string(), vec![cpu])),
        }
    }

    fn notes(self, total: usize) -> Vec<String> {
        self.items
            .into_iter()
            .map(|(missing, assumed, cpus)| {
                let whom = if cpus.len() == total && total > 1 {
                    "every CPU".to_string()
                } else if cpus.len() == 1 {
                    format!("CPU {}", cpus[0])
                } else {
                    format!("CPUs {}", format_cpu_list(&cpus))
                };
                format!("{missing} for {whom}: {assumed}")
            })
            .collect()
    }
}

/// A sysfs id; `None` where unreadable or negative (some kernels write
/// `physical_package_id` -1 where the firmware names no package).
fn read_id(root: &SysRoot, path: &str) -> Option<usize> {
    let v: i64 = root.read(path)?.parse().ok()?;
    usize::try_from(v).ok()
}

/// A sorted, de-duplicated CPU list file; `None` where unreadable or empty.
fn read_list(root: &SysRoot, path: &str) -> Option<Vec<usize>> {
    let mut cpus = parse_cpu_list(&root.read(path)?);
    cpus.sort_unstable();
    cpus.dedup();
    (!cpus.is_empty()).then_some(cpus)
}

/// The highest-level data or unified cache of `cpu`: (level, lowest CPU
/// sharing it), or what is missing.
fn last_level_cache(root: &SysRoot, cpu: usize) -> Result<(u8, usize), (String, &'static str)> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
    let mut best: Option<(u8, String)> = None;
    for index in root
        .list(&dir)
        .into_iter()
        .filter(|n| n.starts_with("index"))
    {
        let at = format!("{dir}/{index}");
        let kind = root.read(&format!("{at}/type"));
        if !matches!(kind.as_deref(), Some("Unified" | "Data")) {
            continue;
        }
        let Some(level) = root
            .read(&format!("{at}/level"))
            .and_then(|l| l.parse::<u8>().ok())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, at));
        }
    }
    let Some((level, at)) = best else {
        return Err((
            "no cache/index*/ with a level and a Data or Unified type".into(),
            "each CPU taken as its own last-level cache",
        ));
    };
    match read_list(root, &format!("{at}/shared_cpu_list")) {
        Some(shared) => Ok((level, shared[0].min(cpu))),
        None => Err((
            format!("no shared_cpu_list of the L{level} cache"),
            "each CPU taken as its own last-level cache",
        )),
    }
}

impl Topology {
    /// The places of the `allowed` CPUs under `root`, ordered. A CPU whose
    /// files are missing still gets a place, with a note saying what was
    /// assumed.
    pub fn read(root: &SysRoot, allowed: &[usize]) -> Topology {
        let allowed: Vec<usize> = allowed
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut gaps = Gaps::default();
        let mut notes = Vec::new();

        let has_nodes = root.exists(NODE_DIR);
        let node_lists: Vec<(usize, Vec<usize>)> = root
            .list(NODE_DIR)
            .into_iter()
            .filter_map(|n| {
                let id = n.strip_prefix("node")?.parse::<usize>().ok()?;
                let cpus = read_list(root, &format!("{NODE_DIR}/{n}/cpulist"))?;
                Some((id, cpus))
            })
            .collect();
        if !has_nodes {
            notes.push(format!(
                "no {NODE_DIR} (a kernel without NUMA): every CPU taken as node 0"
            ));
        }

        let mut cpus: Vec<CpuPlace> = allowed
            .iter()
            .map(|&cpu| {
                let topo = format!("{CPU_DIR}/cpu{cpu}/topology");
                let package =
                    read_id(root, &format!("{topo}/physical_package_id")).unwrap_or_else(|| {
                        gaps.add("no topology/physical_package_id", "taken as package 0", cpu);
                        0
                    });
                let core = read_id(root, &format!("{topo}/core_id")).unwrap_or_else(|| {
                    gaps.add("no topology/core_id", "each CPU taken as its own core", cpu);
                    cpu
                });
                let smt_siblings = read_list(root, &format!("{topo}/thread_siblings_list"))
                    .or_else(|| read_list(root, &format!("{topo}/core_cpus_list")))
                    .unwrap_or_else(|| {
                        gaps.add(
                            "no topology/thread_siblings_list or core_cpus_list",
                            "taken as without SMT siblings",
                            cpu,
                        );
                        vec![cpu]
                    });
                let (llc_level, llc) = match last_level_cache(root, cpu) {
                    Ok((level, llc)) => (Some(level), llc),
                    Err((missing, assumed)) => {
                        gaps.add(missing, assumed, cpu);
                        (None, cpu)
                    }
                };
                let node = node_lists
                    .iter()
                    .find(|(_, cpus)| cpus.binary_search(&cpu).is_ok())
                    .map(|(id, _)| *id)
                    .or_else(|| {
                        // The kernel also links each CPU to its node as cpuN/nodeM.
                        root.list(&format!("{CPU_DIR}/cpu{cpu}"))
                            .iter()
                            .find_map(|n| n.strip_prefix("node")?.parse().ok())
                    })
                    .unwrap_or_else(|| {
                        if has_nodes {
                            gaps.add(
                                "in no node*/cpulist and no cpuN/node* link",
                                "taken as node 0",
                                cpu,
                            );
                        }
                        0
                    });
                let capacity = root
                    .read(&format!("{CPU_DIR}/cpu{cpu}/cpu_capacity"))
                    .and_then(|c| c.parse().ok());
                CpuPlace {
                    cpu,
                    package,
                    core,
                    node,
                    llc,
                    llc_level,
                    smt_siblings,
                    core_type: None,
                    capacity,
                }
            })
            .collect();

        core_types(root, &mut cpus, &mut gaps, &mut notes);
        notes.extend(gaps.notes(cpus.len()));
        Topology::new(cpus, notes)
    }

    /// A topology of the given places (put in order), e.g. read back from
    /// a record or made by a test.
    pub fn new(mut cpus: Vec<CpuPlace>, notes: Vec<String>) -> Topology {
        cpus.sort_by_key(CpuPlace::order_key);
        Topology { cpus, notes }
    }

    /// The place of `cpu`, where it is one of the CPUs read.
    pub fn place(&self, cpu: usize) -> Option<&CpuPlace> {
        self.cpus.iter().find(|p| p.cpu == cpu)
    }

    /// The index of `cpu` in [`cpus`](Topology::cpus): its row and column
    /// in the map.
    pub fn position(&self, cpu: usize) -> Option<usize> {
        self.cpus.iter().position(|p| p.cpu == cpu)
    }

    /// The CPU numbers in topology order.
    pub fn cpu_ids(&self) -> Vec<usize> {
        self.cpus.iter().map(|p| p.cpu).collect()
    }

    /// How many NUMA nodes the CPUs read lie on (1 where the kernel has no
    /// nodes): with one, where a page is homed makes no difference.
    pub fn nodes(&self) -> usize {
        self.cpus
            .iter()
            .map(|p| p.node)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// How many packages the CPUs read lie on.
    pub fn packages(&self) -> usize {
        self.cpus
            .iter()
            .map(|p| p.package)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Whether the CPUs read are of more than one core type, so pair
    /// classes name the types.
    pub fn hybrid(&self) -> bool {
        self.cpus
            .iter()
            .filter_map(|p| p.core_type.as_deref())
            .collect::<BTreeSet<_>>()
            .len()
            > 1
    }

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
    fn index(&self) -> Vec<Option<usize>> {
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

    /// The contiguous runs of [`cpus`](Topology::cpus) at `level`. A run
    /// never crosses a boundary of a coarser level (two packages of one
    /// node whose LLC ids match are still two LLC runs).
    pub fn groups(&self, level: Level) -> Vec<Group> {
        let key = |p: &CpuPlace| {
            let mut k = vec![p.node as u64];
            if level >= Level::Package {
                k.push(p.package as u64);
            }
            if level >= Level::Llc {
                k.push(p.llc as u64);
            }
            if level >= Level::CoreType {
                k.push(type_rank(p.core_type.as_deref()) as u64);
            }
            if level >= Level::Core {
                k.push(p.core_group() as u64);
            }
            k
        };
        let name = |p: &CpuPlace| match level {
            Level::Node => format!("node {}", p.node),
            Level::Package => format!("package {}", p.package),
            Level::Llc => match p.llc_level {
                Some(l) => format!("L{l} of CPU {}", p.llc),
                None => format!("cache of CPU {}", p.llc),
            },
            Level::CoreType => p.core_type.clone().unwrap_or_else(|| "unknown".into()),
            Level::Core => format!("core {}", p.core),
        };
        let mut out: Vec<Group> = Vec::new();
        let mut last = None;
        for (i, p) in self.cpus.iter().enumerate() {
            let k = key(p);
            if last.as_ref() == Some(&k) {
                if let Some(g) = out.last_mut() {
                    g.len += 1;
                }
            } else {
                out.push(Group {
                    start: i,
                    len: 1,
                    name: name(p),
                });
                last = Some(k);
            }
        }
        out
    }
}

/// Sets each CPU's core type: Intel's `cpu_core`/`cpu_atom` lists where
/// present, else differing `cpu_capacity` (the highest is a performance
/// core, every lower one an efficiency core).
fn core_types(root: &SysRoot, cpus: &mut [CpuPlace], gaps: &mut Gaps, notes: &mut Vec<String>) {
    let p_cores = read_list(root, P_CORE_CPUS);
    let e_cores = read_list(root, E_CORE_CPUS);
    if p_cores.is_some() || e_cores.is_some() {
        let p_cores = p_cores.unwrap_or_default();
        let e_cores = e_cores.unwrap_or_default();
        for p in cpus.iter_mut() {
            p.core_type = if p_cores.binary_search(&p.cpu).is_ok() {
                Some(PERFORMANCE.into())
            } else if e_cores.binary_search(&p.cpu).is_ok() {
                Some(EFFICIENCY.into())
            } else {
                gaps.add(
                    "in neither /sys/devices/cpu_core/cpus nor cpu_atom/cpus",
                    "core type unknown",
                    p.cpu,
                );
                None
            };
        }
        return;
    }
    let levels: BTreeSet<u32> = cpus.iter().filter_map(|p| p.capacity).collect();
    let Some(&top) = levels.last() else {
        return;
    };
    if levels.len() < 2 {
        return;
    }
    let lower: Vec<String> = levels.iter().rev().skip(1).map(|c| c.to_string()).collect();
    notes.push(format!(
        "core types from cpu_capacity: {top} taken as performance, {} as efficiency",
        lower.join(", ")
    ));
    for p in cpus.iter_mut() {
        p.core_type = match p.capacity {
            Some(c) if c == top => Some(PERFORMANCE.into()),
            Some(_) => Some(EFFICIENCY.into()),
            None => {
                gaps.add("no cpu_capacity", "core type unknown", p.cpu);
                None
            }
        };
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A sysfs tree in a temporary directory, written file by file as each
    /// test's machine needs it.
    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new() -> Tree {
            Tree {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn root(&self) -> SysRoot {
            SysRoot::at(self.dir.path())
        }

        fn write(&self, abs: &str, text: &str) {
            let path = self.root().path(abs);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, format!("{text}\n")).unwrap();
        }

        /// `topology/` of one CPU.
        fn cpu(&self, cpu: usize, package: usize, core: usize, siblings: &[usize]) {
            let t = format!("{CPU_DIR}/cpu{cpu}/topology");
            self.write(&format!("{t}/physical_package_id"), &package.to_string());
            self.write(&format!("{t}/core_id"), &core.to_string());
            self.write(
                &format!("{t}/thread_siblings_list"),
                &format_cpu_list(siblings),
            );
            self.write(&format!("{t}/core_cpus_list"), &format_cpu_list(siblings));
        }

        /// One `cache/indexN/` of one CPU.
        fn cache(&self, cpu: usize, index: usize, level: u8, kind: &str, shared: &[usize]) {
            let c = format!("{CPU_DIR}/cpu{cpu}/cache/index{index}");
            self.write(&format!("{c}/level"), &level.to_string());
            self.write(&format!("{c}/type"), kind);
            self.write(&format!("{c}/shared_cpu_list"), &format_cpu_list(shared));
        }

        /// L1d, L1i and L2 of the core's threads, and the L3 `llc`.
        fn caches(&self, cpu: usize, core: &[usize], llc: &[usize]) {
            self.cache(cpu, 0, 1, "Data", core);
            self.cache(cpu, 1, 1, "Instruction", core);
            self.cache(cpu, 2, 2, "Unified", core);
            self.cache(cpu, 3, 3, "Unified", llc);
        }

        fn node(&self, node: usize, cpus: &[usize]) {
            self.write(
                &format!("{NODE_DIR}/node{node}/cpulist"),
                &format_cpu_list(cpus),
            );
        }
    }

    fn range(r: std::ops::Range<usize>) -> Vec<usize> {
        r.collect()
    }

    /// This machine's layout: one package, two cores without SMT, private
    /// L1 and L2, one shared L3, one node, equal capacities.
    fn two_cores() -> Tree {
        let t = Tree::new();
        for cpu in 0..2 {
            t.cpu(cpu, 0, cpu, &[cpu]);
            t.caches(cpu, &[cpu], &[0, 1]);
            t.write(&format!("{CPU_DIR}/cpu{cpu}/cpu_capacity"), "1024");
        }
        t.node(0, &[0, 1]);
        t
    }

    /// 2 sockets × 8 cores × SMT 2, siblings N and N+16, each socket its
    /// own node and L3.
    fn two_sockets() -> Tree {
        let t = Tree::new();
        for socket in 0..2 {
            let threads: Vec<usize> = (0..8)
                .map(|c| socket * 8 + c)
                .chain((0..8).map(|c| socket * 8 + c + 16))
                .collect();
            for core in 0..8 {
                let pair = [socket * 8 + core, socket * 8 + core + 16];
                for cpu in pair {
                    t.cpu(cpu, socket, core, &pair);
                    t.caches(cpu, &pair, &threads);
                }
            }
            t.node(socket, &threads);
        }
        t
    }

    /// An Intel hybrid part: P-cores 0-7 (4 × SMT 2), E-cores 8-15 sharing
    /// an L2 per 4, one L3 for all.
    fn hybrid() -> Tree {
        let t = Tree::new();
        let all = range(0..16);
        for core in 0..4 {
            let pair = [2 * core, 2 * core + 1];
            for cpu in pair {
                t.cpu(cpu, 0, 4 * core, &pair);
                t.caches(cpu, &pair, &all);
            }
        }
        for cpu in 8..16 {
            let cluster = if cpu < 12 {
                range(8..12)
            } else {
                range(12..16)
            };
            t.cpu(cpu, 0, 8 + cpu, &[cpu]);
            t.cache(cpu, 0, 1, "Data", &[cpu]);
            t.cache(cpu, 1, 1, "Instruction", &[cpu]);
            t.cache(cpu, 2, 2, "Unified", &cluster);
            t.cache(cpu, 3, 3, "Unified", &all);
        }
        t.node(0, &all);
        t.write(P_CORE_CPUS, "0-7");
        t.write(E_CORE_CPUS, "8-15");
        t
    }

    /// One package of 16 cores, an L3 per 2 cores, 4 nodes of 4 CPUs.
    fn four_nodes() -> Tree {
        let t = Tree::new();
        for cpu in 0..16 {
            t.cpu(cpu, 0, cpu, &[cpu]);
            t.caches(cpu, &[cpu], &[cpu & !1, cpu | 1]);
        }
        for node in 0..4 {
            t.node(node, &range(node * 4..node * 4 + 4));
        }
        t
    }

    fn names(classes: &[(PairClass, Vec<(usize, usize)>)]) -> Vec<String> {
        classes.iter().map(|(c, _)| c.label()).collect()
    }

    fn sizes(classes: &[(PairClass, Vec<(usize, usize)>)]) -> BTreeMap<String, usize> {
        classes.iter().map(|(c, p)| (c.label(), p.len())).collect()
    }

    #[test]
    fn two_cores_without_smt_share_the_l3() {
        let t = two_cores();
        let topo = Topology::read(&t.root(), &[0, 1]);
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
        assert_eq!(topo.cpu_ids(), [0, 1]);
        let p = topo.place(1).unwrap();
        assert_eq!((p.package, p.core, p.node), (0, 1, 0));
        assert_eq!((p.llc, p.llc_level), (0, Some(3)));
        assert_eq!(p.smt_siblings, [1]);
        assert_eq!((p.core_type.as_deref(), p.capacity), (None, Some(1024)));
        assert_eq!(topo.nodes(), 1);
        assert!(!topo.hybrid());
        let classes = topo.classes(&all_pairs(&topo, true));
        assert_eq!(names(&classes), ["same-cpu", "same-llc"]);
        assert_eq!(classes[1].1, [(0, 1), (1, 0)]);
    }

    #[test]
    fn two_sockets_order_smt_siblings_together() {
        let t = two_sockets();
        let topo = Topology::read(&t.root(), &range(0..32));
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
        let want: Vec<usize> = (0..16).flat_map(|c| [c, c + 16]).collect();
        assert_eq!(topo.cpu_ids(), want);
        assert_eq!((topo.nodes(), topo.packages()), (2, 2));
        let llc: Vec<usize> = topo.groups(Level::Llc).iter().map(|g| g.len).collect();
        assert_eq!(llc, [16, 16]);
        let cores = topo.groups(Level::Core);
        assert_eq!(cores.len(), 16);
        assert!(cores.iter().all(|g| g.len == 2));
        assert_eq!(cores[1].start, 2);
        assert_eq!(topo.groups(Level::Node)[1].name, "node 1");
    }

    #[test]
    fn two_sockets_yield_smt_same_llc_and_cross_socket() {
        let t = two_sockets();
        let topo = Topology::read(&t.root(), &range(0..32));
        let classes = topo.classes(&all_pairs(&topo, false));
        assert_eq!(names(&classes), ["smt", "same-llc", "cross-socket"]);
        assert_eq!(sizes(&classes)["smt"], 32);
        assert_eq!(sizes(&classes)["same-llc"], 2 * 16 * 14);
        assert_eq!(sizes(&classes)["cross-socket"], 2 * 16 * 16);
        let with_self = topo.classes(&all_pairs(&topo, true));
        assert_eq!(
            names(&with_self),
            ["same-cpu", "smt", "same-llc", "cross-socket"]
        );
        assert_eq!(topo.class(3, 19).unwrap().distance, Distance::Smt);
        assert_eq!(topo.class(3, 4).unwrap().distance, Distance::SameLlc);
        assert_eq!(topo.class(3, 27).unwrap().distance, Distance::CrossSocket);
        assert_eq!(topo.class(3, 99), None);
        // The pairs of a class come in topology order: row, then column.
        assert_eq!(classes[0].1[..3], [(0, 16), (16, 0), (1, 17)]);
    }

    #[test]
    fn only_the_allowed_cpus_are_read() {
        let t = two_sockets();
        let topo = Topology::read(&t.root(), &[17, 1, 2, 1]);
        assert_eq!(topo.cpu_ids(), [1, 17, 2]);
        assert_eq!(topo.place(17).unwrap().smt_siblings, [1, 17]);
        assert_eq!(topo.nodes(), 1);
    }

    #[test]
    fn hybrid_cores_are_labelled_by_type() {
        let t = hybrid();
        let topo = Topology::read(&t.root(), &range(0..16));
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
        assert!(topo.hybrid());
        assert_eq!(
            topo.place(0).unwrap().core_type.as_deref(),
            Some(PERFORMANCE)
        );
        assert_eq!(
            topo.place(9).unwrap().core_type.as_deref(),
            Some(EFFICIENCY)
        );
        assert_eq!(topo.class(0, 1).unwrap().label(), "smt P→P");
        assert_eq!(topo.class(0, 8).unwrap().label(), "same-llc P→E");
        assert_eq!(topo.class(8, 0).unwrap().label(), "same-llc E→P");
        assert_eq!(topo.class(8, 13).unwrap().label(), "same-llc E→E");
        let classes = topo.classes(&all_pairs(&topo, false));
        assert_eq!(
            names(&classes),
            [
                "smt P→P",
                "same-llc P→P",
                "same-llc P→E",
                "same-llc E→P",
                "same-llc E→E"
            ]
        );
        let types: Vec<(usize, usize, String)> = topo
            .groups(Level::CoreType)
            .into_iter()
            .map(|g| (g.start, g.len, g.name))
            .collect();
        assert_eq!(
            types,
            [(0, 8, PERFORMANCE.into()), (8, 8, EFFICIENCY.into())]
        );
    }

    #[test]
    fn differing_capacities_name_big_and_little_cores() {
        let t = Tree::new();
        for cpu in 0..6 {
            t.cpu(cpu, 0, cpu, &[cpu]);
            t.caches(cpu, &[cpu], &range(0..6));
            let cap = if cpu < 4 { 446 } else { 1024 };
            t.write(
                &format!("{CPU_DIR}/cpu{cpu}/cpu_capacity"),
                &cap.to_string(),
            );
        }
        let topo = Topology::read(&t.root(), &range(0..6));
        assert!(topo.hybrid());
        // Performance cores first within the shared cache.
        assert_eq!(topo.cpu_ids(), [4, 5, 0, 1, 2, 3]);
        assert_eq!(topo.class(4, 0).unwrap().label(), "same-llc P→E");
        assert_eq!(topo.place(0).unwrap().capacity, Some(446));
        assert!(
            topo.notes.iter().any(|n| n.contains("cpu_capacity")),
            "the capacities' reading is said: {:?}",
            topo.notes
        );
    }

    #[test]
    fn four_nodes_yield_other_node_pairs() {
        let t = four_nodes();
        let topo = Topology::read(&t.root(), &range(0..16));
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
        assert_eq!((topo.nodes(), topo.packages()), (4, 1));
        assert_eq!(topo.place(5).unwrap().node, 1);
        assert_eq!(topo.class(4, 5).unwrap().distance, Distance::SameLlc);
        assert_eq!(topo.class(4, 6).unwrap().distance, Distance::SameNode);
        assert_eq!(topo.class(4, 8).unwrap().distance, Distance::OtherNode);
        let classes = topo.classes(&all_pairs(&topo, false));
        assert_eq!(names(&classes), ["same-llc", "same-node", "other-node"]);
        assert_eq!(sizes(&classes)["other-node"], 16 * 12);
        let nodes: Vec<usize> = topo.groups(Level::Node).iter().map(|g| g.start).collect();
        assert_eq!(nodes, [0, 4, 8, 12]);
    }

    #[test]
    fn missing_cache_and_node_dirs_are_noted() {
        let t = Tree::new();
        for cpu in 0..2 {
            t.cpu(cpu, 0, cpu, &[cpu]);
        }
        let topo = Topology::read(&t.root(), &[0, 1]);
        assert_eq!(topo.cpus.len(), 2);
        assert!(
            topo.notes.iter().any(|n| n.contains("node 0")),
            "{:?}",
            topo.notes
        );
        assert!(
            topo.notes
                .iter()
                .any(|n| n.contains("every CPU") && n.contains("own last-level cache")),
            "{:?}",
            topo.notes
        );
        let p = topo.place(1).unwrap();
        assert_eq!((p.llc, p.llc_level, p.node), (1, None, 0));
        // With no cache named, two cores are one node apart, not one cache.
        assert_eq!(topo.class(0, 1).unwrap().distance, Distance::SameNode);
    }

    #[test]
    fn a_cpu_with_no_files_still_gets_a_place() {
        let t = two_cores();
        let topo = Topology::read(&t.root(), &[0, 1, 7]);
        assert_eq!(topo.cpus.len(), 3);
        let p = topo.place(7).unwrap();
        assert_eq!((p.package, p.core, p.llc), (0, 7, 7));
        assert_eq!(p.smt_siblings, [7]);
        for what in ["physical_package_id", "core_id", "thread_siblings_list"] {
            assert!(
                topo.notes
                    .iter()
                    .any(|n| n.contains(what) && n.contains("for CPU 7")),
                "{what}: {:?}",
                topo.notes
            );
        }
        assert!(
            topo.notes.iter().any(|n| n.contains("in no node")),
            "{:?}",
            topo.notes
        );
    }

    #[test]
    fn an_empty_root_reads_without_panic() {
        let t = Tree::new();
        let topo = Topology::read(&t.root(), &[0, 3]);
        assert_eq!(topo.cpu_ids(), [0, 3]);
        assert!(!topo.notes.is_empty());
        assert_eq!(Topology::read(&t.root(), &[]).cpus.len(), 0);
    }

    #[test]
    fn the_hosts_topology_has_one_place_per_allowed_cpu() {
        let allowed = crate::sys::sched::allowed_cpus().unwrap();
        let topo = Topology::read(&SysRoot::host(), &allowed);
        let mut read = topo.cpu_ids();
        read.sort_unstable();
        assert_eq!(read, allowed);
        assert!(topo.nodes() >= 1);
    }

    #[test]
    fn distances_have_stable_names_nearest_first() {
        let names: Vec<&str> = Distance::ALL.iter().map(|d| d.name()).collect();
        assert_eq!(
            names,
            [
                "same-cpu",
                "smt",
                "same-llc",
                "same-node",
                "other-node",
                "cross-socket"
            ]
        );
        for d in Distance::ALL {
            assert_eq!(Distance::from_name(d.name()), Some(d));
            assert!(!d.description().is_empty());
        }
        assert!(Distance::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Distance::from_name("far"), None);
    }

    #[test]
    fn all_pairs_leave_out_the_diagonal_unless_asked() {
        let t = two_cores();
        let topo = Topology::read(&t.root(), &[0, 1]);
        assert_eq!(all_pairs(&topo, false), [(0, 1), (1, 0)]);
        assert_eq!(all_pairs(&topo, true), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    }

    /// The sample's CPUs, pairs per class, and whether it is in topology order.
    fn check_sample(topo: &Topology, pairs: &[(usize, usize)], sample: &[(usize, usize)]) {
        let pos = |(c, s): (usize, usize)| (topo.position(c).unwrap(), topo.position(s).unwrap());
        assert!(
            sample.windows(2).all(|w| pos(w[0]) < pos(w[1])),
            "{sample:?}"
        );
        assert!(sample.iter().all(|p| pairs.contains(p)));
        let named: BTreeSet<usize> = pairs.iter().flat_map(|&(c, s)| [c, s]).collect();
        let covered: BTreeSet<usize> = sample.iter().flat_map(|&(c, s)| [c, s]).collect();
        assert_eq!(covered, named, "every CPU in a sampled pair");
    }

    #[test]
    fn a_sample_of_4_covers_every_cpu_with_4_pairs_per_class() {
        let t = two_sockets();
        let topo = Topology::read(&t.root(), &range(0..32));
        let pairs = all_pairs(&topo, false);
        let sample = sample_pairs(&topo, &pairs, 4);
        check_sample(&topo, &pairs, &sample);
        let classes = topo.classes(&sample);
        assert_eq!(names(&classes), ["smt", "same-llc", "cross-socket"]);
        assert!(classes.iter().all(|(_, p)| p.len() >= 4), "{classes:?}");
        // 12 pairs cover 24 CPUs; each added pair covers two of the other 8.
        assert_eq!(sample.len(), 16, "{sample:?}");
        assert_eq!(sample_pairs(&topo, &pairs, 4), sample, "deterministic");
    }

    #[test]
    fn a_class_smaller_than_k_is_sampled_whole() {
        let t = two_sockets();
        let topo = Topology::read(&t.root(), &range(0..32));
        let pairs = all_pairs(&topo, true);
        let sample = sample_pairs(&topo, &pairs, 40);
        check_sample(&topo, &pairs, &sample);
        let sizes = sizes(&topo.classes(&sample));
        assert_eq!(sizes["same-cpu"], 32);
        assert_eq!(sizes["smt"], 32);
        assert!(sizes["same-llc"] >= 40 && sizes["cross-socket"] >= 40);
        let mut every = sample_pairs(&topo, &pairs, 10_000);
        every.sort_unstable();
        let mut pairs = pairs;
        pairs.sort_unstable();
        assert_eq!(every, pairs);
    }

    #[test]
    fn a_sample_spreads_over_the_cpus_of_a_class() {
        let t = four_nodes();
        let topo = Topology::read(&t.root(), &range(0..16));
        let pairs: Vec<(usize, usize)> = topo
            .classes(&all_pairs(&topo, false))
            .into_iter()
            .find(|(c, _)| c.distance == Distance::OtherNode)
            .unwrap()
            .1;
        let sample = sample_pairs(&topo, &pairs, 8);
        check_sample(&topo, &pairs, &sample);
        assert_eq!(sample.len(), 8);
        // Eight pairs over sixteen CPUs: each CPU once.
        let mut uses = BTreeMap::<usize, usize>::new();
        for (c, s) in &sample {
            *uses.entry(*c).or_default() += 1;
            *uses.entry(*s).or_default() += 1;
        }
        assert!(uses.values().all(|&u| u == 1), "{uses:?}");
    }

    #[test]
    fn a_sample_leaves_out_pairs_of_unknown_cpus() {
        let t = two_cores();
        let topo = Topology::read(&t.root(), &[0, 1]);
        assert_eq!(sample_pairs(&topo, &[(0, 1), (0, 9)], 4), [(0, 1)]);
        assert!(sample_pairs(&topo, &[], 4).is_empty());
        assert_eq!(sample_pairs(&topo, &[(1, 0), (0, 1)], 0).len(), 1);
    }
}
