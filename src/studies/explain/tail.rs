//! What a traced round trips' pass says beyond its parts: the slowest round
//! trips with their culprits named from this machine (a task's command,
//! whether it is a kernel thread or the held load, an idle state's name),
//! and each side's wake-ups the kernel left an event out of.

use crate::analysis::explain::Decomposed;
use crate::analysis::explain::RoundTrip;
use crate::analysis::explain::tail::{Naming, TailSelect, tail, tail_of_kept};
use crate::machine::sysroot::SysRoot;
use crate::machine::tracefs::decode::Labels;
use crate::record::explain::{TailRecord, WakeUpRecord};

/// The tail of `trips`, its culprits named: `labels` are the trace's words,
/// `load` the held load's processes.
pub(super) fn tail_of(
    trips: &[RoundTrip],
    select: TailSelect,
    labels: &Labels,
    load: &[i32],
) -> TailRecord {
    with_naming(labels, load, |naming| tail(trips, select, naming))
}

/// [`tail_of_kept`] with its culprits named as [`tail_of`] names them.
pub(super) fn tail_of_kept_named(
    slowest: &[(u64, &RoundTrip)],
    typical: Option<&RoundTrip>,
    seen: u64,
    asked: String,
    labels: &Labels,
    load: &[i32],
) -> TailRecord {
    with_naming(labels, load, |naming| {
        tail_of_kept(slowest, typical, seen, asked, naming)
    })
}

/// Calls `f` with the naming of this machine: the trace's words, a task
/// told as a kernel thread or the held load, idle states by cpuidle's names.
fn with_naming(labels: &Labels, load: &[i32], f: impl FnOnce(&Naming) -> TailRecord) -> TailRecord {
    let root = SysRoot::host();
    let word = |l: u32| crate::output::sanitise::text(labels.word(l)).into_owned();
    let task_kind = |pid: i32| {
        if load.contains(&pid) {
            ", ipcmark's load".to_string()
        } else if crate::machine::schedstat::kernel_thread(&root, pid) == Some(true) {
            ", kernel thread".to_string()
        } else {
            String::new()
        }
    };
    let idle_state = |s: u32| idle_state_name(&root, s);
    let process = |pid: i32| {
        crate::machine::schedstat::process_of(&root, pid)
            .map(|(_, comm)| crate::output::sanitise::text(&comm).into_owned())
    };
    f(&Naming {
        word: &word,
        task_kind: &task_kind,
        idle_state: &idle_state,
        process: &process,
    })
}

/// An idle state's name as cpuidle gives it (CPU 0's states; every CPU has
/// the same), or its number where there is no cpuidle driver (the state
/// the kernel's default idle loop reports).
fn idle_state_name(root: &SysRoot, state: u32) -> String {
    match root.read(&format!(
        "/sys/devices/system/cpu/cpu0/cpuidle/state{state}/name"
    )) {
        Some(name) if !name.trim().is_empty() => {
            crate::output::sanitise::text(name.trim()).into_owned()
        }
        _ => format!("{state} (no cpuidle driver names it)"),
    }
}

/// What the note of an anatomy made without the trace says of a `--tail`
/// (and a soak) asked for: per-task counters give no round trip parts of
/// its own, so neither is made.
pub(super) fn untraced_tail_line(tail: bool, soak: bool) -> Option<&'static str> {
    match (tail, soak) {
        (false, _) => None,
        (true, false) => Some(
            "--tail: without the trace no round trip or wake-up has parts of its own, so there \
             is no tail",
        ),
        (true, true) => Some(
            "--tail --duration: without the trace no round trip has parts of its own, so there \
             is no tail and no soak (the figure's pass was counted once)",
        ),
    }
}

/// Each side's wake-ups as the record holds them.
pub(super) fn wake_up_records(d: &Decomposed) -> Vec<WakeUpRecord> {
    d.wake_ups
        .iter()
        .map(|w| WakeUpRecord {
            side: w.side.to_string(),
            seen: w.seen,
            no_switch_in: w.no_switch_in,
            no_waking: w.no_waking,
            early: w.early,
        })
        .collect()
}

/// What the note says of the wake-ups: where the kernel left events out
/// (and how many of the `round_trips` a part then names two things in),
/// and the wake-ups that came before the message.
pub(super) fn wake_up_notes(d: &Decomposed, round_trips: usize) -> Vec<String> {
    let mut notes = Vec::new();
    for w in &d.wake_ups {
        if w.no_switch_in > 0 || w.no_waking > 0 {
            notes.push(format!(
                "the kernel left out the switch to the {side} in {} of its {} wake-ups \
                 and its sched_waking in {}",
                w.no_switch_in,
                w.seen,
                w.no_waking,
                side = w.side
            ));
        }
        if w.early > 0 {
            notes.push(format!(
                "the {side} was woken early {} times (by its peer's receive, before the \
                 message was sent: a socket's write space): those wake-ups are off the \
                 path, and the message passes to the {side} when the send ends",
                w.early,
                side = w.side
            ));
        }
    }
    if d.merged_round_trips > 0 {
        notes.push(format!(
            "in {} of {round_trips} round trips the kernel left out a switch the path \
             waited on: a wake-up's idle exit, its switch and the return of the call it slept \
             in, or a wake-up's idle exit and another task's run on that CPU, are one stretch \
             with no event between them, named for both (\"… (no switch seen)\")",
            d.merged_round_trips
        ));
    }
    notes
}

/// Writes a pass's anatomy as stretches of the path, one a line (round
/// trip, start and end ns on the trace's clock, part) under a header that
/// names the client's and the server's thread ids and the stamps: what a
/// reader checks against the kernel's text trace of the same pass.
pub(super) fn save_segments(
    to: &std::path::Path,
    segments: &[crate::analysis::explain::Segment],
    pass: &crate::engine::run::runner::StampedPass,
) -> Result<(), String> {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# client {} server {} stamps {}",
        pass.client_tid,
        pass.server_tid
            .map_or_else(|| "-".to_string(), |t| t.to_string()),
        pass.stamps.len()
    );
    let _ = writeln!(out, "# round_trip\tstart_ns\tend_ns\tpart");
    for s in segments {
        let _ = writeln!(out, "{}\t{}\t{}\t{}", s.trip, s.start_ns, s.end_ns, s.part);
    }
    std::fs::write(to, out).map_err(|e| format!("cannot write {}: {e}", to.display()))
}
