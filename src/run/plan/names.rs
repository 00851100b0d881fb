//! The names given to `ipcmark run` (mechanism ids, benchmark ids, group
//! names) resolved to the items a session measures, each once.

use crate::benchmarks;
use crate::engine::run::session::Item;
use crate::mechanisms;
use crate::run::Failure;

impl From<benchmarks::Benchmark> for Item {
    fn from(b: benchmarks::Benchmark) -> Self {
        match b {
            benchmarks::Benchmark::Op(b) => Item::Op(b),
            benchmarks::Benchmark::Periodic(b) => Item::Periodic(b),
            benchmarks::Benchmark::Scored(b) => Item::Scored(b),
        }
    }
}

/// What makes two selected items the same figure set: id, cold, and the
/// one-way pacing (0: not one-way; 1: saturated; 2 + ns: sporadic).
pub(super) fn key(item: &Item) -> (&'static str, bool, u64) {
    match item {
        Item::PingPong(_, cold) | Item::Stream(_, cold) => (item.id(), *cold, 0),
        Item::OneWay(_, plan) => (
            item.id(),
            false,
            plan.interval.map_or(1, |d| 2 + d.as_nanos() as u64),
        ),
        Item::Rate(..) | Item::Op(_) | Item::Periodic(_) | Item::Scored(_) | Item::External(_) => {
            (item.id(), false, 0)
        }
    }
}

/// Resolves the names given to `ipcmark run`: mechanism ids, benchmark ids and
/// group names, in the order given, each thing once. No name: the ipc group.
pub fn resolve(names: &[String], cold: bool) -> Result<Vec<Item>, Failure> {
    let ipc = || {
        mechanisms::REGISTRY
            .iter()
            .map(move |&m| Item::PingPong(m, cold))
    };
    if names.is_empty() {
        return Ok(ipc().collect());
    }
    let mut out: Vec<Item> = Vec::new();
    for name in names {
        let found: Vec<Item> = if name == benchmarks::ALL {
            ipc()
                .chain(benchmarks::REGISTRY.iter().map(|&b| Item::from(b)))
                .collect()
        } else if name == benchmarks::IPC {
            ipc().collect()
        } else if let Some(group) = benchmarks::group(name) {
            let members: Vec<Item> = benchmarks::members(group.name)
                .into_iter()
                .map(Item::from)
                .collect();
            if members.is_empty() {
                return Err(Failure::usage(format!(
                    "group '{name}' has no benchmarks yet; groups: {}, {}",
                    benchmarks::available_groups().join(", "),
                    benchmarks::ALL
                )));
            }
            members
        } else if let Some(m) = mechanisms::find(name) {
            vec![Item::PingPong(m, cold)]
        } else if let Some(b) = benchmarks::find(name) {
            vec![b.into()]
        } else {
            return Err(Failure::usage(format!(
                "unknown benchmark or group '{name}'; groups: {}, {}; benchmarks: {}, {}",
                benchmarks::available_groups().join(", "),
                benchmarks::ALL,
                mechanisms::ids().join(", "),
                benchmarks::ids().join(", ")
            )));
        };
        for sel in found {
            if !out.iter().any(|o| key(o) == key(&sel)) {
                out.push(sel);
            }
        }
    }
    Ok(out)
}
