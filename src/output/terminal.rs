//! Whether output goes to the user's terminal, and whether it may be in
//! colour: what every writer of the page, the tables and the progress bar
//! asks first. Apart from the page so that a table's cells can ask it
//! without depending on the page that lays them out.

/// Whether `stream` is the user's terminal. Under an MPI launcher (mpirun,
/// srun) a rank's standard streams are a pseudo-terminal of the launcher's,
/// forwarded to wherever its own output goes (a file, a pipe) and with no
/// width of its own: never taken for the user's terminal, so that no colour
/// codes, progress bar or 72-column wrap reach a file.
pub fn is_users_terminal(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal() && !under_mpi_launcher(|k| std::env::var_os(k).is_some())
}

/// Whether the environment (`has` tells whether a variable is set) is that
/// of a process an MPI launcher started: Open MPI, MPICH's Hydra and PMIx
/// launchers, Slurm's srun.
fn under_mpi_launcher(has: impl Fn(&str) -> bool) -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .any(|k| has(k))
}

/// Whether a stream that `is_terminal` (or not) gets colour: only a
/// terminal, and only while `NO_COLOR` is unset or empty.
pub fn colour_on(is_terminal: bool) -> bool {
    is_terminal && colour_allowed(std::env::var_os("NO_COLOR"))
}

/// Whether `NO_COLOR`'s value (if set) allows colour: only when empty.
fn colour_allowed(no_color: Option<std::ffi::OsString>) -> bool {
    no_color.is_none_or(|v| v.is_empty())
}

/// Writes one line to stderr in a single write, so that what another
/// process writes to the same stderr meanwhile (an MPI launcher's banner,
/// a rank's own line) can never land inside it; `eprintln!` writes the
/// pieces of its format one by one.
pub fn say(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut line = std::fmt::format(args);
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_of_an_mpi_job_is_never_on_the_users_terminal() {
        for var in [
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "PMIX_RANK",
            "SLURM_PROCID",
        ] {
            assert!(under_mpi_launcher(|k| k == var), "{var}");
        }
        assert!(!under_mpi_launcher(|k| k == "HOME"));
    }

    #[test]
    fn no_color_set_to_anything_turns_colour_off() {
        assert!(colour_allowed(None));
        assert!(colour_allowed(Some("".into())));
        assert!(!colour_allowed(Some("1".into())));
    }
}
