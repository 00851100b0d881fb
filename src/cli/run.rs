//! `ipcmark run`: the arguments become a [`RunRequest`], `run::run`
//! measures it with the progress bar watching, and [`finish`] prints the
//! page and the warnings and says by the exit code how the run went. The
//! commands that ask for runs of their own (`explain`, `map`, `selftest`,
//! `advise`, `mpi`) end the same way, through [`finish`].

use super::{Failure, RunArgs, print_stdout};
use crate::engine::os::interrupt;
use crate::output::page;
use crate::output::progress::Progress;
use crate::run::{Outcome, RunRequest};
use std::process::ExitCode;

/// How a run's page is printed: compact or `--long`, or not at all (a
/// command that prints its own summary of its runs, `selftest`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Printing {
    /// The long page.
    pub long: bool,
    /// Neither the page nor the warnings.
    pub quiet: bool,
}

/// What a command writes of a run's report once its page is printed; what
/// it adds to the report (`explain`'s anatomies) is saved where the run
/// was, the history included.
pub type After<'a> = &'a mut dyn FnMut(&mut Outcome) -> Result<(), Failure>;

/// `ipcmark run`.
pub fn run(mut args: RunArgs) -> Result<ExitCode, Failure> {
    let export = std::mem::take(&mut args.export);
    export.check()?;
    let (request, printing) = args.into_request();
    let csv = request.sinks.csv.clone();
    let outcome = measure(request)?;
    // The figures for dashboards, written once the run is over (or
    // stopped: what was measured).
    let mut exports = |o: &mut Outcome| export.write(&crate::output::export::of_run(o.report()));
    let after: Option<After> = export.any().then_some(&mut exports);
    finish(outcome, printing, csv.as_deref(), after)
}

/// Measures `request` with the progress bar on stderr.
pub fn measure(request: RunRequest) -> Result<Outcome, Failure> {
    let mut progress = Progress::new(0);
    crate::run::run(request, &mut progress)
}

/// Prints a run's page, writes its CSV, lets `after` add to it, prints
/// the warnings, and turns how it went into the exit code: 128 + the
/// signal that stopped it, 1 when a figure failed or the report could not
/// be saved everywhere, else 0.
pub fn finish(
    mut outcome: Outcome,
    printing: Printing,
    csv: Option<&std::path::Path>,
    after: Option<After>,
) -> Result<ExitCode, Failure> {
    if !printing.quiet {
        print_stdout(&page::render(
            outcome.report(),
            page::Options::for_stdout(printing.long),
        ))?;
    }
    if let Some(path) = csv {
        let text = crate::output::csv::render(outcome.report()).map_err(Failure::run)?;
        std::fs::write(path, text)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(after) = after {
        after(&mut outcome)?;
    }
    if !printing.quiet {
        eprint!(
            "{}",
            crate::output::warnings::render(
                outcome.warnings(),
                printing.long,
                crate::output::terminal::colour_on(crate::output::terminal::is_users_terminal(
                    &std::io::stderr()
                ))
            )
        );
    }
    let failed = outcome.failed();
    // Each place was named in a warning when it failed; the run measured
    // and showed everything, but what it saved is not the whole run.
    let unsaved = outcome.unsaved();
    if let Some(line) = crate::run::save::unsaved_line(unsaved) {
        eprintln!("{line}");
    }
    if let Some(sig) = outcome.stopped() {
        crate::cli::say(format_args!(
            "ipcmark: interrupted by {}; results so far were kept",
            interrupt::signal_name(sig)
        ));
        return Ok(ExitCode::from(128 + sig as u8));
    }
    if failed > 0 {
        crate::cli::say(format_args!(
            "ipcmark: {failed} figure(s) failed (see the table)"
        ));
    }
    if failed > 0 || unsaved > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
