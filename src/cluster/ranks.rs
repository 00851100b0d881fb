//! Where every rank of the job runs: its host, its process, the CPUs the
//! launcher bound it to and the CPU it was on — what `mpirun
//! --report-bindings` shows, gathered by ipcmark itself so that every
//! figure and workload can name the node of each process, as the OpenSSI
//! study's tables did.

use mpi::Count;
use mpi::collective::CommunicatorCollectives as _;
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use serde::Deserialize;

/// One rank's place, as that rank saw it when [`gather`] was called. It
/// travels between the ranks as JSON written by [`encode`] (no derive:
/// only output's records serialise themselves) and read back here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RankPlace {
    /// The rank in `MPI_COMM_WORLD`.
    pub rank: Rank,
    /// `MPI_Get_processor_name`: the node's name.
    pub host: String,
    /// The rank's process id on its node.
    pub pid: u32,
    /// The CPUs the process may run on (`sched_getaffinity`): the
    /// launcher's binding, or every CPU when it bound nothing.
    pub allowed_cpus: Vec<usize>,
    /// The CPU the process was running on (`sched_getcpu`), if known.
    pub cpu: Option<usize>,
}

impl RankPlace {
    /// This process's place.
    pub fn here(rank: Rank) -> RankPlace {
        RankPlace {
            rank,
            host: super::host(),
            pid: std::process::id(),
            allowed_cpus: crate::sys::sched::allowed_cpus().unwrap_or_default(),
            cpu: crate::sys::sched::current_cpu(),
        }
    }
}

/// Every rank's place, in rank order, on every rank. Collective: every rank
/// of `MPI_COMM_WORLD` must call it at the same point of the program.
pub fn gather() -> Vec<RankPlace> {
    let world = SimpleCommunicator::world();
    let me = RankPlace::here(world.rank());
    let mine = encode(&me);
    let size = world.size() as usize;
    let mut counts: Vec<Count> = vec![0; size];
    world.all_gather_into(&(mine.len() as Count), &mut counts[..]);
    let displs: Vec<Count> = counts
        .iter()
        .scan(0, |at, &n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect();
    let mut all = vec![0u8; counts.iter().map(|&n| n as usize).sum()];
    {
        let mut parts = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        world.all_gather_varcount_into(&mine[..], &mut parts);
    }
    counts
        .iter()
        .zip(&displs)
        .enumerate()
        .map(|(rank, (&n, &at))| {
            let bytes = &all[at as usize..(at + n) as usize];
            serde_json::from_slice(bytes).unwrap_or_else(|_| RankPlace {
                rank: rank as Rank,
                host: "(unreadable)".into(),
                pid: 0,
                allowed_cpus: Vec::new(),
                cpu: None,
            })
        })
        .collect()
}

/// `place` as the JSON bytes [`gather`] reads back.
fn encode(place: &RankPlace) -> Vec<u8> {
    serde_json::json!({
        "rank": place.rank,
        "host": place.host,
        "pid": place.pid,
        "allowed_cpus": place.allowed_cpus,
        "cpu": place.cpu,
    })
    .to_string()
    .into_bytes()
}

/// The nodes of the job in order of first appearance, so that a table can
/// number them (node 0 is rank 0's).
pub fn nodes(places: &[RankPlace]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for p in places {
        if !seen.contains(&p.host.as_str()) {
            seen.push(&p.host);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rank: Rank, host: &str) -> RankPlace {
        RankPlace {
            rank,
            host: host.into(),
            pid: 1,
            allowed_cpus: vec![0],
            cpu: Some(0),
        }
    }

    #[test]
    fn nodes_are_numbered_by_first_appearance() {
        let places = [at(0, "b"), at(1, "a"), at(2, "b"), at(3, "c")];
        assert_eq!(nodes(&places), ["b", "a", "c"]);
    }

    #[test]
    fn a_place_survives_its_encoding() {
        let p = at(3, "node-1");
        let back: RankPlace = serde_json::from_slice(&encode(&p)).unwrap();
        assert_eq!(back, p);
    }
}
