use super::classes::PairClass;
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
