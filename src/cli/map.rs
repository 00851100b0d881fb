//! `ipcmark map`: what a ping-pong costs between every pair of CPUs. The
//! CPUs' topology is read from sysfs and the pairs planned in its order
//! (every ordered pair, or `--sample K` per class); the run is `ipcmark
//! run`'s, with one level per pair placing its figures (the engine's
//! `Level::placement`), so the map has the run's method (passes,
//! intervals, the history) and its report is a run's with `settings.map`
//! and `map` added (docs/map.md).

use super::plan::{Machine, RunPlan};
use super::{Failure, RunArgs, flags, heading, parse};
use crate::engine::channel::Topology as Shape;
use crate::engine::os::placement::SidePlacement;
use crate::engine::run::session::{Level, PairPlacement};
use crate::machine::sysroot::SysRoot;
use crate::machine::topology::{self, Topology};
use crate::record::RunRecord;
use crate::record::map::{
    CpuRecord, HomeRecord, MapFigureRecord, MapSettingsRecord, PairRecord, TopologyRecord,
};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

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

/// Arguments of `ipcmark map`.
#[derive(Debug, Args)]
pub struct MapArgs {
    /// Ping-pong mechanisms to map (default: shm-spin shm-futex pipe
    /// unix-stream eventfd). See `ipcmark list`.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    /// The CPUs to map, as the kernel writes a list ("0-3,8"); default:
    /// every CPU ipcmark may use.
    #[arg(long, value_name = "LIST", value_parser = parse::cpu_set_arg,
          help_heading = heading::PLACEMENT)]
    cpus: Option<parse::CpuList>,
    /// Measure K pairs of each class (same core, same last-level cache, …),
    /// chosen so that every CPU takes part, instead of every pair.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=10_000),
          help_heading = heading::PLACEMENT)]
    sample: Option<u32>,
    /// Where the channels' shared pages live: fresh (new pages each pair,
    /// where the kernel's first touch puts them), writer (the client's
    /// node), reader (the server's node) or node:N.
    #[arg(long, value_name = "WHERE", default_value = "fresh", value_parser = parse::home,
          help_heading = heading::PLACEMENT)]
    home: parse::Home,
    /// Leave out the diagonal (both sides on one CPU).
    #[arg(long, help_heading = heading::PLACEMENT)]
    no_diagonal: bool,
    /// Run both sides under SCHED_FIFO at this priority (1-99).
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99),
          help_heading = heading::PLACEMENT)]
    rt: Option<i32>,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten)]
    output: flags::Output,
    /// Also write each matrix as CSV into this directory, one file per
    /// mechanism and size (`map-pipe-64.csv`).
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath,
          help_heading = heading::OUTPUT)]
    csv: Option<PathBuf>,
}

/// Runs `ipcmark map`.
pub fn map(args: MapArgs) -> Result<ExitCode, Failure> {
    let names: Vec<String> = if args.names.is_empty() {
        DEFAULT_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        args.names.clone()
    };
    check_names(&names)?;
    if let Some(dir) = &args.csv
        && !dir.is_dir()
    {
        return Err(Failure::usage(format!(
            "--csv {}: not a directory (give an existing directory for the matrices' CSV files)",
            dir.display()
        )));
    }
    let machine = Machine::probe()?;
    let cpus = match &args.cpus {
        Some(parse::CpuList(list)) => {
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
    let mut pairs = topology::all_pairs(&topo, !args.no_diagonal);
    if let Some(k) = args.sample {
        pairs = topology::sample_pairs(&topo, &pairs, k as usize);
    }
    if pairs.is_empty() {
        return Err(Failure::usage(
            "no pair of CPUs to map: give two CPUs or more, or drop --no-diagonal",
        ));
    }
    let (home, homes) = home_of(&args.home, &topo, &pairs)?;
    let settings = MapSettingsRecord {
        topology: topology_record(&topo),
        home,
        sample: args.sample.map(|k| k as usize),
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
    let csv = args.csv.clone();
    let sizes = args.sizes.list.as_ref().map_or(1, |l| l.sizes.len());
    let figures = pairs.len() * names.len() * sizes;
    let mut args = args;
    if figures > LARGE_MAP_FIGURES && args.budget.max_time.is_none() {
        args.budget.max_time = Some(std::time::Duration::ZERO);
        eprintln!(
            "map: {figures} figures ({} pairs): each takes its fixed samples only (--max-time 0), \
             so the map ends in minutes; give --max-time or --sample to choose",
            pairs.len()
        );
    }
    let run = run_args(args, names, pairs[0])?;
    super::run::run_with(
        run,
        Some(&|plan: &mut RunPlan| by_pairs(plan, &pairs, &homes, settings.clone())),
        Some(&|report: &mut RunRecord| match &csv {
            Some(dir) => write_csv(dir, &*report),
            None => Ok(()),
        }),
    )
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

/// The `ipcmark run` a map stands for: its mechanisms at its sizes (64 B
/// unless `--sizes`), the quick budget (a map has many figures), three
/// passes unless `--passes`, placed on its first pair until its levels
/// place each figure.
fn run_args(args: MapArgs, names: Vec<String>, first: (usize, usize)) -> Result<RunArgs, Failure> {
    let mut budget = args.budget;
    budget.quick = true;
    budget.passes.get_or_insert(MAP_PASSES);
    Ok(RunArgs {
        names,
        sizes: args.sizes,
        cpus: Some(parse::CpuList(vec![first.0, first.1])),
        rt: args.rt,
        cpu_latency: args.cpu_latency,
        budget,
        output: args.output,
        ..RunArgs::defaults()?
    })
}

/// Replaces the plan's one level by one level per pair, each placing its
/// figures on its pair (and its pages on its home), under the plan's load.
fn by_pairs(
    plan: &mut RunPlan,
    pairs: &[(usize, usize)],
    homes: &[Option<usize>],
    mut map: MapSettingsRecord,
) {
    let base = plan.session.levels[0].clone();
    let rt_priority = plan.session.settings.client.rt_priority;
    let side = |cpu| SidePlacement {
        cpu: Some(cpu),
        rt_priority,
    };
    plan.session.levels = pairs
        .iter()
        .zip(homes)
        .map(|(&(c, s), &home)| Level {
            label: format!("CPU {c} → CPU {s}"),
            placement: Some(PairPlacement {
                client: side(c),
                server: side(s),
                home,
            }),
            ..base.clone()
        })
        .collect();
    // Each pair's figures, in the order the session measures them.
    map.figures = base
        .items
        .iter()
        .flat_map(|&k| {
            let (item, sizes) = &plan.session.items[k];
            sizes.iter().map(move |&z| MapFigureRecord {
                benchmark: item.id().to_string(),
                size_bytes: z,
            })
        })
        .collect();
    plan.settings.client_cpu = None;
    plan.settings.server_cpu = None;
    plan.settings.map = Some(map);
}

/// Where each pair's pages are preferred, and the record of `--home`: on
/// one node nothing is applied (every page is on it whatever is asked).
fn home_of(
    home: &parse::Home,
    topo: &Topology,
    pairs: &[(usize, usize)],
) -> Result<(HomeRecord, Vec<Option<usize>>), Failure> {
    let node_of = |cpu: usize| topo.cpus.iter().find(|p| p.cpu == cpu).map(|p| p.node);
    let nodes = topo.nodes();
    if let parse::Home::Node(n) = home
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
        parse::Home::Fresh => (
            vec![None; pairs.len()],
            "new pages for each pair, on the node of the CPU that first touches them",
        ),
        parse::Home::Writer => (
            pairs.iter().map(|&(c, _)| node_of(c)).collect(),
            "each pair's pages preferred on the client's (the writer's) node",
        ),
        parse::Home::Reader => (
            pairs.iter().map(|&(_, s)| node_of(s)).collect(),
            "each pair's pages preferred on the server's (the reader's) node",
        ),
        parse::Home::Node(n) => (
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

/// Writes each matrix of `report` as CSV into `dir`.
fn write_csv(dir: &std::path::Path, report: &RunRecord) -> Result<(), Failure> {
    for (name, text) in crate::output::map::csv_files(report) {
        let path = dir.join(&name);
        std::fs::write(&path, text)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// CPUs in words: "0,1,2".
fn cpu_words(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
