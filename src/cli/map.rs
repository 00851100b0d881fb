//! `ipcmark map`: its flags, the study's run (`studies::map`), the page,
//! and each matrix as CSV with `--csv DIR`.

use super::run::{Printing, finish, measure};
use super::{Failure, flags, heading, parse};
use crate::record::RunRecord;
use crate::run::RunRequest;
use crate::studies::map::{self, MapRequest};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `ipcmark map`.
#[derive(Debug, Args)]
pub struct MapArgs {
    /// Ping-pong mechanisms to map (default: shm-spin shm-futex pipe
    /// unix-stream eventfd). See `ipcmark list`.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    /// The CPUs to map, as the kernel writes a list ("0-3,8"); default:
    /// every CPU ipcmark may use.
    #[arg(long, value_name = "LIST", value_parser = parse::cpu_set_arg,
          help_heading = heading::PLACEMENT)]
    cpus: Option<parse::CpuList>,
    /// Measure K pairs of each class (same core, same last-level cache, …),
    /// chosen so that every CPU takes part, instead of every pair.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=10_000),
          help_heading = heading::PLACEMENT)]
    sample: Option<u32>,
    /// Where the channels' shared pages live: fresh (new pages each pair,
    /// where the kernel's first touch puts them), writer (the client's
    /// node), reader (the server's node) or node:N.
    #[arg(long, value_name = "WHERE", default_value = "fresh", value_parser = parse::home,
          help_heading = heading::PLACEMENT)]
    home: parse::Home,
    /// Leave out the diagonal (both sides on one CPU).
    #[arg(long, help_heading = heading::PLACEMENT)]
    no_diagonal: bool,
    /// Run both sides under SCHED_FIFO at this priority (1-99).
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99),
          help_heading = heading::PLACEMENT)]
    rt: Option<i32>,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten)]
    output: flags::Output,
    /// Also write each matrix as CSV into this directory, one file per
    /// mechanism and size (`map-pipe-64.csv`).
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath,
          help_heading = heading::OUTPUT)]
    csv: Option<PathBuf>,
}

/// Runs `ipcmark map`.
pub fn map(args: MapArgs) -> Result<ExitCode, Failure> {
    if let Some(dir) = &args.csv
        && !dir.is_dir()
    {
        return Err(Failure::usage(format!(
            "--csv {}: not a directory (give an existing directory for the matrices' CSV files)",
            dir.display()
        )));
    }
    let printing = Printing {
        long: args.output.long,
        quiet: false,
    };
    let mut run = RunRequest {
        sizes: args.sizes.list,
        rt: args.rt,
        cpu_latency: args.cpu_latency.limit,
        budget: args.budget.into_request(),
        ..RunRequest::default()
    };
    args.output.into_sinks(&mut run.sinks);
    let (request, note) = map::plan(MapRequest {
        names: args.names,
        cpus: args.cpus.map(|c| c.0),
        sample: args.sample,
        home: args.home,
        diagonal: !args.no_diagonal,
        run,
    })?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let csv = args.csv;
    let outcome = measure(request)?;
    finish(
        outcome,
        printing,
        None,
        Some(&mut |outcome| match &csv {
            Some(dir) => write_csv(dir, outcome.report()),
            None => Ok(()),
        }),
    )
}

/// Writes each matrix of `report` as CSV into `dir`.
fn write_csv(dir: &std::path::Path, report: &RunRecord) -> Result<(), Failure> {
    for (name, text) in crate::output::map::csv_files(report) {
        let path = dir.join(&name);
        // A new file renamed over the name: whatever was planted there (a
        // link to a file of root's, say) is replaced, never followed.
        crate::output::json::write_text_atomic(&path, &text)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link planted under a name `map --csv DIR` writes is replaced by
    /// the matrix, and what it pointed to is left as it was.
    #[test]
    fn a_link_planted_in_the_csv_directory_is_not_followed() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reports/map.json"),
        )
        .unwrap();
        let report = RunRecord::parse(&text).unwrap();
        let files = crate::output::map::csv_files(&report);
        assert!(!files.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let csv = dir.path().join("csv");
        std::fs::create_dir(&csv).unwrap();
        for (name, _) in &files {
            std::os::unix::fs::symlink(&victim, csv.join(name)).unwrap();
        }
        write_csv(&csv, &report).unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        for (name, text) in &files {
            let path = csv.join(name);
            assert!(!path.symlink_metadata().unwrap().is_symlink(), "{name}");
            assert_eq!(&std::fs::read_to_string(&path).unwrap(), text);
        }
    }
}
