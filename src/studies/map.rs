//! The study behind `ipcmark map`: what a ping-pong costs between every pair of CPUs. The
//! CPUs' topology is read from sysfs and the pairs planned in its order
//! (every ordered pair, or `--sample K` per class); the run is `ipcmark
//! run`'s, with one level per pair placing its figures (the engine's
//! `Level::placement`), so the map has the run's method (passes,
//! intervals, the history) and its report is a run's with `settings.map`
//! and `map` added (docs/map.md).

use crate::engine::channel::Topology as Shape;
use crate::machine::sysroot::SysRoot;
use crate::machine::topology::{self, Topology};
use crate::record::map::{CpuRecord, HomeRecord, MapSettingsRecord, PairRecord, TopologyRecord};
use crate::run::plan::Machine;
use crate::run::request::{CpuList, Pairs};
use crate::run::values::Home;
use crate::run::{Failure, RunRequest};

/// The mechanisms a map measures when none is named: the cache line's
/// floor (busy-polling), a futex hand-off, and three kernel channels.
pub const DEFAULT_NAMES: &[&str] = &["shm-spin", "shm-futex", "pipe", "unix-stream", "eventfd"];

/// Passes over each pair when `--passes` is not given: three keep a pair's
/// interval honest (the between-pass spread) at three fifths of a run's time.
const MAP_PASSES: u32 = 3;

/// Figures (pairs × mechanisms × sizes) beyond which a map samples each
/// figure for its fixed samples only (`--max-time 0`) unless `--max-time`
/// is given: with the quick budget a figure then takes about 0.1 s over its
/// three passes instead of up to 0.45 s, so that 16 CPUs' 256 pairs of the
/// five default mechanisms stay near five minutes.
const LARGE_MAP_FIGURES: usize = 200;

/// What a map is asked for: its mechanisms, sizes and CPUs, how pairs are
/// chosen and where their pages live, and the run's other settings (the
/// budget, SCHED_FIFO, the CPU latency, where the report goes).
pub struct MapRequest {
    /// Ping-pong mechanisms (default: [`DEFAULT_NAMES`]).
    pub names: Vec<String>,
    /// The CPUs to map (default: every CPU this process may use).
    pub cpus: Option<Vec<usize>>,
    /// K pairs of each class instead of every pair.
    pub sample: Option<u32>,
    /// Where the channels' shared pages live.
    pub home: Home,
    /// Both sides on one CPU too.
    pub diagonal: bool,
    /// The run the map is: sizes, budget, SCHED_FIFO, CPU latency, sinks.
    pub run: RunRequest,
}

/// The run `request` stands for: its mechanisms at its sizes (64 B unless
/// given), the quick budget (a map has many figures), three passes unless
/// given, one level per pair in topology order (or sampled per class),
/// each placing its figures on its pair; and, for a map so large that its
/// figures take their fixed samples only, the line that says so.
pub fn plan(request: MapRequest) -> Result<(RunRequest, Option<String>), Failure> {
    let names: Vec<String> = if request.names.is_empty() {
        DEFAULT_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        request.names.clone()
    };
    check_names(&names)?;
    let machine = Machine::probe()?;
    let cpus = match &request.cpus {
        Some(list) => {
            if let Some(c) = list.iter().find(|c| !machine.allowed_cpus.contains(c)) {
                return Err(Failure::usage(format!(
                    "--cpus: CPU {c} does not exist or is not available to ipcmark; available CPUs: {}",
                    cpu_words(&machine.allowed_cpus)
                )));
            }
            list.clone()
        }
        None => machine.allowed_cpus.clone(),
    };
    let topo = Topology::read(&SysRoot::host(), &cpus);
    let mut pairs = topology::all_pairs(&topo, request.diagonal);
    if let Some(k) = request.sample {
        pairs = topology::sample_pairs(&topo, &pairs, k as usize);
    }
    if pairs.is_empty() {
        return Err(Failure::usage(
            "no pair of CPUs to map: give two CPUs or more, or drop --no-diagonal",
        ));
    }
    let (home, homes) = home_of(&request.home, &topo, &pairs)?;
    let map = MapSettingsRecord {
        topology: topology_record(&topo),
        home,
        sample: request.sample.map(|k| k as usize),
        figures: Vec::new(),
        pairs: pairs
            .iter()
            .zip(&homes)
            .map(|(&(client, server), &home_node)| PairRecord {
                client,
                server,
                class: topo
                    .class(client, server)
                    .map_or_else(|| "unknown".into(), |c| c.label()),
                home_node,
            })
            .collect(),
    };
    let mut run = request.run;
    let sizes = run.sizes.as_ref().map_or(1, |l| l.sizes.len());
    let figures = pairs.len() * names.len() * sizes;
    let mut note = None;
    if figures > LARGE_MAP_FIGURES && run.budget.max_time.is_none() {
        run.budget.max_time = Some(std::time::Duration::ZERO);
        note = Some(format!(
            "map: {figures} figures ({} pairs): each takes its fixed samples only (--max-time 0), \
             so the map ends in minutes; give --max-time or --sample to choose",
            pairs.len()
        ));
    }
    run.names = names;
    run.budget.quick = true;
    run.budget.passes.get_or_insert(MAP_PASSES);
    // Placed on the first pair until the levels place each figure.
    run.cpus = Some(CpuList(vec![pairs[0].0, pairs[0].1]));
    run.pairs = Some(Pairs { pairs, homes, map });
    Ok((run, note))
}

/// Refuses what a map cannot measure: a name that is no mechanism (a
/// benchmark or group), or a mechanism that runs in one process.
fn check_names(names: &[String]) -> Result<(), Failure> {
    for name in names {
        let Some(m) = crate::mechanisms::find(name) else {
            return Err(Failure::usage(format!(
                "map measures ping-pong mechanisms; '{name}' is not one (mechanisms: {})",
                crate::mechanisms::ids().join(", ")
            )));
        };
        if m.info().topology == Shape::SelfLoop {
            return Err(Failure::usage(format!(
                "{name} runs in one process: it has no pair of CPUs to map"
            )));
        }
    }
    Ok(())
}

/// Where each pair's pages are preferred, and the record of `--home`: on
/// one node nothing is applied (every page is on it whatever is asked).
fn home_of(
    home: &Home,
    topo: &Topology,
    pairs: &[(usize, usize)],
) -> Result<(HomeRecord, Vec<Option<usize>>), Failure> {
    let node_of = |cpu: usize| topo.cpus.iter().find(|p| p.cpu == cpu).map(|p| p.node);
    let nodes = topo.nodes();
    if let Home::Node(n) = home
        && !topo.cpus.iter().any(|p| p.node == *n)
        && !SysRoot::host().exists(&format!("/sys/devices/system/node/node{n}"))
    {
        return Err(Failure::usage(format!(
            "--home node:{n}: no such NUMA node (this machine has {nodes})"
        )));
    }
    let requested = home.to_string();
    if nodes <= 1 {
        return Ok((
            HomeRecord {
                requested,
                applied: false,
                note: "one NUMA node: every page is on it, whatever --home asks".into(),
            },
            vec![None; pairs.len()],
        ));
    }
    let (homes, note): (Vec<Option<usize>>, &str) = match home {
        Home::Fresh => (
            vec![None; pairs.len()],
            "new pages for each pair, on the node of the CPU that first touches them",
        ),
        Home::Writer => (
            pairs.iter().map(|&(c, _)| node_of(c)).collect(),
            "each pair's pages preferred on the client's (the writer's) node",
        ),
        Home::Reader => (
            pairs.iter().map(|&(_, s)| node_of(s)).collect(),
            "each pair's pages preferred on the server's (the reader's) node",
        ),
        Home::Node(n) => (
            vec![Some(*n); pairs.len()],
            "every pair's pages preferred on one node",
        ),
    };
    Ok((
        HomeRecord {
            requested,
            applied: homes.iter().any(Option::is_some),
            note: note.into(),
        },
        homes,
    ))
}

/// The topology as the report writes it.
fn topology_record(t: &Topology) -> TopologyRecord {
    TopologyRecord {
        cpus: t
            .cpus
            .iter()
            .map(|p| CpuRecord {
                cpu: p.cpu,
                package: p.package,
                core: p.core,
                node: p.node,
                llc: p.llc,
                llc_level: p.llc_level,
                smt_siblings: p.smt_siblings.clone(),
                core_type: p.core_type.clone(),
                capacity: p.capacity,
            })
            .collect(),
        nodes: t.nodes(),
        notes: t.notes.clone(),
    }
}

/// CPUs in words: "0,1,2".
fn cpu_words(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
