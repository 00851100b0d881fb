//! `ipcmark fleet run` under `mpirun`/`srun`: the ranks take turns, one
//! after the other, never two measuring at once (simplest, and on one
//! machine the only honest way: two runs at once would measure each
//! other). For each turn every rank waits at a barrier; the rank whose turn
//! it is runs the request as `ipcmark run` would, without saving it; a rank
//! other than 0 then sends its report (the run's JSON record) to rank 0,
//! which reads it as any report from outside and stores it in the history
//! at once. Rank 0 stores its own run right after its own turn, the first.
//!
//! While rank 0 waits on another rank's turn, the deadline watch
//! ([`deadline::arm_turn`]) holds the line to print if the job is stopped
//! (mpirun's SIGTERM once a rank died): that rank, its host, and what the
//! history kept.

use super::super::run::{finish, measure};
use super::super::{Failure, print_stdout};
use super::{FleetRunArgs, RankFault};
use crate::history::{RunId, RunWriter};
use crate::mpi::{World, deadline, ranks, turns};
use crate::output::sanitise;
use crate::record::RunRecord;
use crate::record::run::Status;
use crate::run::save::failure;
use std::path::Path;
use std::process::ExitCode;

/// What one rank's turn gave, as rank 0 records it.
struct Turn {
    rank: i32,
    host: String,
    /// The run's id in the history, or why it is not there.
    stored: Result<RunId, String>,
    /// Its figures (measured, failed), when its report arrived.
    figures: Option<(usize, usize)>,
}

/// A rank's message to rank 0: `R` and the report's JSON, or `F` and why
/// the run could not be made.
fn message(outcome: Result<RunRecord, Failure>) -> Vec<u8> {
    match outcome {
        Ok(record) => {
            let mut m = b"R".to_vec();
            m.extend(serde_json::to_vec(&record).unwrap_or_default());
            m
        }
        Err(f) => [b"F".as_slice(), f.message.as_bytes()].concat(),
    }
}

/// What rank 0 reads of a message (hostile input: another process's bytes).
fn read(bytes: &[u8]) -> Result<RunRecord, String> {
    match bytes.split_first() {
        Some((b'R', json)) => {
            let mut value: serde_json::Value =
                serde_json::from_slice(json).map_err(|e| format!("its report is not JSON: {e}"))?;
            sanitise::report(&mut value);
            RunRecord::from_value(value).map_err(|e| format!("its report cannot be read: {e}"))
        }
        Some((b'F', why)) => Err(format!(
            "its run failed: {}",
            sanitise::text(&String::from_utf8_lossy(why))
        )),
        _ => Err("it sent something that is not a report".into()),
    }
}

/// Measured and failed figures of a run.
fn figures(record: &RunRecord) -> (usize, usize) {
    let count = |s: Status| record.results.iter().filter(|f| f.status == s).count();
    (count(Status::Ok), count(Status::Failed))
}

/// What the history kept so far, for the line a stop prints.
fn kept(turns: &[Turn]) -> String {
    let runs: Vec<String> = turns
        .iter()
        .filter_map(|t| {
            t.stored
                .as_ref()
                .ok()
                .map(|id| format!("rank {}'s run (id {id})", t.rank))
        })
        .collect();
    if runs.is_empty() {
        "nothing kept in the history".into()
    } else {
        format!("kept in the history: {}", runs.join(", "))
    }
}

/// Runs `ipcmark fleet run` on this rank.
pub fn run(args: FleetRunArgs) -> Result<ExitCode, Failure> {
    let fault = args.rank_fault;
    if args.run.export.any() {
        return Err(Failure::usage(
            "fleet run takes no --export-bmf or --export-gab: the ranks' runs go to the history; \
             export them from there (ipcmark watch --host NAME --export-bmf FILE)",
        ));
    }
    let (mut request, printing) = args.run.into_request();
    // Rank 0 stores every run itself, its own included, so that each run's
    // id is known; the ranks' own runs save nothing.
    let db = (!request.sinks.no_save)
        .then(|| crate::history::path_or_default(request.sinks.db.as_deref()))
        .transpose()
        .map_err(failure)?;
    request.sinks.db = None;
    request.sinks.no_save = true;
    let timeout = request.budget.timeout;
    let world = World::init().map_err(Failure::run)?;
    let (size, me) = (world.size(), world.rank());
    let places = ranks::gather();
    if me != 0 {
        // Only rank 0 writes files: the other ranks' runs reach it by MPI.
        request.sinks.json = None;
        request.sinks.csv = None;
        request.sinks.hdr = None;
        for turn in 1..size {
            turns::barrier();
            if turn != me {
                continue;
            }
            if fault == Some(RankFault::DieOnTurn) && me == 1 {
                let _ = crate::sys::process::kill(std::process::id() as i32, libc::SIGKILL);
            }
            let outcome = measure(request.clone()).map(|o| o.report().clone());
            turns::send_to_lead(&message(outcome));
        }
        turns::barrier();
        return Ok(ExitCode::SUCCESS);
    }
    deadline::watch(timeout)
        .map_err(|e| Failure::run(format!("cannot start the MPI deadline thread: {e}")))?;
    let hosts = ranks::nodes(&places).len();
    let mut done: Vec<Turn> = Vec::new();
    let mut code = ExitCode::SUCCESS;
    let mut bad = false;
    for turn in 0..size {
        let host = places
            .get(turn as usize)
            .map(|p| sanitise::text(&p.host).into_owned())
            .unwrap_or_default();
        eprintln!(
            "fleet run: turn {} of {size}: rank {turn} on {host} measures",
            turn + 1
        );
        let received = if turn == 0 {
            let outcome = measure(request.clone())?;
            let record = outcome.report().clone();
            code = finish(outcome, printing, request.sinks.csv.as_deref(), None)?;
            Ok(record)
        } else {
            let _armed = deadline::arm_turn(format!(
                "ipcmark: fleet run: rank {turn} on {host} stopped before it reported; {}",
                kept(&done)
            ));
            turns::barrier();
            read(&turns::receive_from(turn))
        };
        let t = match received {
            Ok(record) => Turn {
                rank: turn,
                host,
                stored: match &db {
                    Some(db) => RunWriter::store_whole(db, &record).map_err(|e| e.to_string()),
                    None => Err("not saved (--no-save)".into()),
                },
                figures: Some(figures(&record)),
            },
            Err(why) => Turn {
                rank: turn,
                host,
                stored: Err(why),
                figures: None,
            },
        };
        bad |=
            t.figures.is_none_or(|(_, failed)| failed > 0) || (db.is_some() && t.stored.is_err());
        done.push(t);
    }
    turns::barrier();
    print_stdout(&page(&done, hosts, db.as_deref()))?;
    if bad && code == ExitCode::SUCCESS {
        code = ExitCode::from(1);
    }
    Ok(code)
}

/// Rank 0's page once every turn is over.
fn page(turns: &[Turn], hosts: usize, db: Option<&Path>) -> String {
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut out = format!(
        "\nfleet run: {} on {}, measured one after the other, never at once\n",
        plural(turns.len(), "rank"),
        plural(hosts, "host")
    );
    for t in turns {
        let stored = match &t.stored {
            Ok(id) => format!("run {id}"),
            Err(why) => why.clone(),
        };
        let figures = match t.figures {
            Some((ok, 0)) => format!("{} measured", plural(ok, "figure")),
            Some((ok, failed)) => format!("{} measured, {failed} failed", plural(ok, "figure")),
            None => "no report".into(),
        };
        out.push_str(&format!(
            "  rank {:<3} {:<24} {figures}; {stored}\n",
            t.rank, t.host
        ));
    }
    if let Some(db) = db {
        out.push_str(&format!(
            "history: {} (ipcmark fleet --db {0})\n",
            db.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
