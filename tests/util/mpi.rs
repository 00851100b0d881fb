//! Running ipcmark under OpenMPI's `mpirun` (cargo feature `mpi`).

use super::{Sandbox, bin, wait_with_deadline};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// `mpirun --oversubscribe -n RANKS ipcmark ARGS` in the sandbox (its
/// TMPDIR and history), as root too, ended after two minutes at most.
pub fn mpirun(sb: &Sandbox, ranks: u32, args: &[&str]) -> Output {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(bin())
        .args(args)
        .env("TMPDIR", sb.dir.path())
        .env("XDG_DATA_HOME", sb.path("data"))
        // OpenMPI refuses root without both.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    wait_with_deadline(c.spawn().expect("spawn mpirun"), Duration::from_secs(120))
}
