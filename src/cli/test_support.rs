//! What tests elsewhere need of the command line: the request an `ipcmark
//! run` command line stands for, so that the plan's rules are tested as a
//! user writes them.

use super::{Cli, Command};
use crate::run::RunRequest;
use clap::Parser;

/// The request `ipcmark run ARGS…` stands for (tests of the plan's rules).
pub fn run_request(args: &[&str]) -> Result<RunRequest, clap::Error> {
    let argv = ["ipcmark", "run"].iter().chain(args);
    match Cli::try_parse_from(argv)?.command {
        Command::Run(a) => Ok(a.into_request().0),
        _ => unreachable!("a run command"),
    }
}
