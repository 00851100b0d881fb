//! Where every rank of the job runs: its host, its process, the CPUs the
//! launcher bound it to and the CPU it was on — what `mpirun
//! --report-bindings` shows, gathered by ipcmark itself so that every
//! figure and workload can name the node of each process, as the OpenSSI
//! study's tables did, and the report's environment can list them.

pub use crate::machine::environment::{MpiJob, RankPlace, nodes};
use mpi::Count;
use mpi::collective::CommunicatorCollectives as _;
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use serde::Deserialize;

/// One rank's place as it travels between the ranks (JSON): a wire format
/// between the processes of one job, read back here and never a report.
#[derive(Deserialize)]
struct Wire {
    rank: Rank,
    host: String,
    pid: u32,
    allowed_cpus: Vec<usize>,
    cpu: Option<usize>,
}

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

/// `place` as the bytes [`decode`] reads.
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

/// The place [`encode`] wrote, or one saying it could not be read.
fn decode(rank: Rank, bytes: &[u8]) -> RankPlace {
    match serde_json::from_slice::<Wire>(bytes) {
        Ok(w) => RankPlace {
            rank: w.rank,
            host: w.host,
            pid: w.pid,
            allowed_cpus: w.allowed_cpus,
            cpu: w.cpu,
        },
        Err(_) => RankPlace {
            rank,
            host: "(unreadable)".into(),
            pid: 0,
            allowed_cpus: Vec::new(),
            cpu: None,
        },
    }
}

/// Every rank's place, in rank order, on every rank. Collective: every rank
/// of `MPI_COMM_WORLD` must call it at the same point of the program.
pub fn gather() -> Vec<RankPlace> {
    let world = SimpleCommunicator::world();
    let mine = encode(&here(world.rank()));
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
        .map(|(rank, (&n, &at))| decode(rank as Rank, &all[at as usize..(at + n) as usize]))
        .collect()
}

/// The job as the report's environment records it: the library, the
/// standard and every rank's place (`places`, from [`gather`]).
pub fn job(places: Vec<RankPlace>) -> MpiJob {
    MpiJob {
        // The library pads its description with NULs and a newline.
        library: mpi::environment::library_version()
            .map(|v| v.trim_end_matches(['\0', '\n', ' ']).to_string())
            .unwrap_or_else(|_| "(not UTF-8)".into()),
        standard: mpi::environment::version(),
        ranks: places,
    }
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
        assert_eq!(decode(3, &encode(&p)), p);
        assert_eq!(decode(5, b"{").host, "(unreadable)");
    }
}
