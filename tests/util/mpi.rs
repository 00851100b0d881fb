//! Running ipcmark under OpenMPI's `mpirun` (cargo feature `mpi`).

use super::{Sandbox, wait_with_deadline};
use std::process::Output;
use std::time::Duration;

/// `mpirun --oversubscribe -n RANKS ipcmark ARGS` in the sandbox (its
/// TMPDIR and history), as root too, ended after two minutes at most.
pub fn mpirun(sb: &Sandbox, ranks: u32, args: &[&str]) -> Output {
    let ranks = ranks.to_string();
    let mut c = sb.wrapped("mpirun", &["--oversubscribe", "-n", &ranks], args);
    // OpenMPI refuses root without both.
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    wait_with_deadline(c.spawn().expect("spawn mpirun"), Duration::from_secs(120))
}
