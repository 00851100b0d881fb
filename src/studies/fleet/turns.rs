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

use crate::history::RunWriter;
use crate::mpi::{World, deadline, ranks, turns};
use crate::output::fleet::Turn;
use crate::output::progress::Progress;
use crate::output::sanitise;
use crate::record::RunRecord;
use crate::record::run::Status;
use crate::run::save::failure;
use crate::run::{Failure, Outcome, RunRequest};
use std::path::PathBuf;

/// What a fleet run is asked for: the run every rank makes in its turn,
/// its history (`sinks.db`, or the default; none with `sinks.no_save`)
/// being the one rank 0 keeps every rank's run in.
pub struct FleetRunRequest {
    /// The run each rank makes.
    pub run: RunRequest,
    /// Rank 1 kills itself (SIGKILL) as its turn starts (for testing
    /// ipcmark itself: what rank 0 says and keeps when a rank dies).
    pub die_on_turn: bool,
}

/// What rank 0 hands back once every turn is over.
pub struct FleetRun {
    /// Each rank's turn, in rank order.
    pub turns: Vec<Turn>,
    /// The hosts the ranks ran on.
    pub hosts: usize,
    /// The history the runs were kept in (none with `--no-save`).
    pub db: Option<PathBuf>,
}

impl FleetRun {
    /// Whether a rank's turn went wrong: no report, a failed figure, or a
    /// run the history was to keep and did not.
    pub fn failed(&self) -> bool {
        self.turns.iter().any(|t| {
            t.figures.is_none_or(|(_, failed)| failed > 0)
                || (self.db.is_some() && t.stored.is_err())
        })
    }
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

/// Measures `request` with the progress bar on stderr.
fn measure(request: RunRequest) -> Result<Outcome, Failure> {
    crate::run::run(request, &mut Progress::new(0))
}

/// Runs a fleet run on this rank: every rank measures in its turn; rank 0
/// hands its own run to `own` as soon as it is over (its page is printed
/// before anyone else measures) and, once every turn is over, returns what
/// each turn gave. The other ranks return `None`.
pub fn fleet_run(
    request: FleetRunRequest,
    own: super::super::Finish,
) -> Result<Option<FleetRun>, Failure> {
    let mut run = request.run;
    // Rank 0 stores every run itself, its own included, so that each run's
    // id is known; the ranks' own runs save nothing.
    let db = (!run.sinks.no_save)
        .then(|| crate::history::path_or_default(run.sinks.db.as_deref()))
        .transpose()
        .map_err(failure)?;
    run.sinks.db = None;
    run.sinks.no_save = true;
    let timeout = run.budget.timeout;
    let world = World::init().map_err(Failure::run)?;
    let (size, me) = (world.size(), world.rank());
    let places = ranks::gather();
    if me != 0 {
        // Only rank 0 writes files: the other ranks' runs reach it by MPI.
        run.sinks.json = None;
        run.sinks.csv = None;
        run.sinks.hdr = None;
        for turn in 1..size {
            turns::barrier();
            if turn != me {
                continue;
            }
            if request.die_on_turn && me == 1 {
                let _ = crate::sys::process::kill(std::process::id() as i32, libc::SIGKILL);
            }
            let outcome = measure(run.clone()).map(|o| o.report().clone());
            turns::send_to_lead(&message(outcome));
        }
        turns::barrier();
        return Ok(None);
    }
    deadline::watch(timeout)
        .map_err(|e| Failure::run(format!("cannot start the MPI deadline thread: {e}")))?;
    let hosts = ranks::nodes(&places).len();
    let mut done: Vec<Turn> = Vec::new();
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
            let outcome = measure(run.clone())?;
            let record = outcome.report().clone();
            own(outcome)?;
            Ok(record)
        } else {
            let _armed = deadline::arm_turn(format!(
                "ipcmark: fleet run: rank {turn} on {host} stopped before it reported; {}",
                kept(&done)
            ));
            turns::barrier();
            read(&turns::receive_from(turn))
        };
        done.push(match received {
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
        });
    }
    turns::barrier();
    Ok(Some(FleetRun {
        turns: done,
        hosts,
        db,
    }))
}

#[cfg(test)]
mod tests;
