//! Figures between the ranks of an MPI job (`ipcmark mpi …`, built with
//! the cargo feature `mpi`): the engine's own models with MPI point-to-point
//! messages as the channel, so that a figure across cluster nodes is
//! obtained, checked and reported like a local one (docs/cluster.md).
//!
//! Every MPI call of ipcmark is made from the process's main thread, after
//! [`World::init`] and before the `World` is dropped (`MPI_Finalize`).

pub mod pingpong;

use mpi::Threading;
use mpi::collective::CommunicatorCollectives as _;
use mpi::environment::Universe;
use mpi::topology::{Communicator, Rank, SimpleCommunicator};

/// The MPI job this process belongs to; finalised when dropped.
pub struct World {
    // Dropping the universe calls MPI_Finalize.
    _universe: Universe,
}

impl World {
    /// Initialises MPI (once per process). Threads may exist beside the
    /// MPI calls (progress display, signal handling), but only the main
    /// thread calls MPI: `MPI_THREAD_FUNNELED`.
    pub fn init() -> Result<World, String> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or("MPI was already initialised in this process")?;
        if provided < Threading::Funneled {
            return Err(format!(
                "this MPI library offers {provided:?} threading; ipcmark needs Funneled"
            ));
        }
        Ok(World {
            _universe: universe,
        })
    }

    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> Rank {
        SimpleCommunicator::world().rank()
    }

    /// The number of ranks of the job.
    pub fn size(&self) -> Rank {
        SimpleCommunicator::world().size()
    }

    /// Waits for every rank (the ranks that take no part in a figure wait
    /// here for the end of the run).
    pub fn barrier(&self) {
        SimpleCommunicator::world().barrier();
    }

    /// Ends the whole job after a failure a rank cannot report otherwise
    /// (its peer would wait for it forever): `MPI_Abort`.
    pub fn abort(&self, code: i32) -> ! {
        SimpleCommunicator::world().abort(code)
    }
}

/// This host's name as MPI gives it (`MPI_Get_processor_name`).
pub fn host() -> String {
    mpi::environment::processor_name().unwrap_or_else(|_| "(unnamed)".into())
}
