//! Figures between the ranks of an MPI job (`ipcmark mpi …`, built with
//! the cargo feature `mpi`): the engine's own models with MPI point-to-point
//! messages as the channel, so that a figure across cluster nodes is
//! obtained, checked and reported like a local one (docs/cluster.md).
//!
//! Every MPI call of ipcmark is made from the process's main thread, after
//! [`World::init`] and before the `World` is dropped (`MPI_Finalize`).

pub mod bandwidth;
pub mod deadline;
pub mod pingpong;
pub mod ranks;
pub mod turns;
pub mod window;
pub mod workloads;

use mpi::collective::CommunicatorCollectives as _;
use mpi::environment::Universe;
use mpi::topology::{Communicator, Rank, SimpleCommunicator};

/// The MPI job this process belongs to; finalised when dropped.
pub struct World {
    // Dropping the universe calls MPI_Finalize.
    _universe: Universe,
}

impl World {
    /// Initialises MPI (once per process) at `MPI_THREAD_SINGLE`, as
    /// `osu_latency` does. ipcmark has threads that never call MPI (signal
    /// handling, the progress display): strictly that asks for FUNNELED,
    /// but OpenMPI 4.1 then takes its thread-safe paths, which cost some
    /// 100 ns one way here (an 8 B figure 40% above osu_latency's).
    pub fn init() -> Result<World, String> {
        let universe = mpi::initialize().ok_or("MPI was already initialised in this process")?;
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
