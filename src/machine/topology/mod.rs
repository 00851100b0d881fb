//! Where each CPU sits in the machine, read from sysfs, and how far apart
//! two CPUs are: the order and the groups of `ipcmark map` (issue 28)
//! here, the pair classes in [`classes`], and in [`sampler`] the pairs a
//! map measures, all of them or a few per class instead of all n² on a
//! large machine.
//!
//! Everything is read through a [`SysRoot`], so the same reader runs on
//! this machine and on fixture trees of machines this one is not. A file
//! that cannot be read never stops the reading: the CPU gets the plainest
//! place that file would have told (its own core, its own last-level
//! cache, node 0), and [`Topology::notes`] says what was missing and what
//! was assumed instead.

use crate::machine::environment::{format_cpu_list, parse_cpu_list};
use crate::machine::sysroot::SysRoot;
use std::collections::BTreeSet;

pub mod classes;
pub mod sampler;

pub use classes::Distance;
pub use sampler::{all_pairs, sample_pairs};

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

#[cfg(test)]
mod tests;
