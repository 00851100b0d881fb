//! The turns of `ipcmark fleet run`: the ranks wait for one another and
//! send rank 0 their reports. While one rank measures, every other rank
//! waits here without spinning (a non-blocking barrier or probe, tested
//! every few milliseconds, then sleep): a rank polling inside a blocking
//! MPI call would take a CPU from the rank that measures.

use mpi::collective::CommunicatorCollectives as _;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use std::time::Duration;

/// How long a waiting rank sleeps between two looks.
const NAP: Duration = Duration::from_millis(5);

/// Waits for every rank of the job, sleeping between looks. Collective.
pub fn barrier() {
    let mut pending = SimpleCommunicator::world().immediate_barrier();
    loop {
        match pending.test() {
            Ok(_) => return,
            Err(again) => {
                pending = again;
                std::thread::sleep(NAP);
            }
        }
    }
}

/// Sends `report` to rank 0 (blocking until rank 0 takes it).
pub fn send_to_lead(report: &[u8]) {
    SimpleCommunicator::world().process_at_rank(0).send(report);
}

/// The bytes rank `from` sent with [`send_to_lead`], waited for without
/// spinning.
pub fn receive_from(from: Rank) -> Vec<u8> {
    let world = SimpleCommunicator::world();
    let peer = world.process_at_rank(from);
    while peer.immediate_probe().is_none() {
        std::thread::sleep(NAP);
    }
    peer.receive_vec::<u8>().0
}
