//! Modes `op` and `event`: one row per benchmark, the time per operation
//! (or per event) and the system calls it was proven to make.

use super::ResultTable;
use super::cells::{align_right, new_table, num, p99_cell, quality_notes, unmeasured};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};

/// The table of operation benchmarks, timed by the engine or by themselves.
pub struct OpsTable;

impl ResultTable for OpsTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Op, Mode::Event]
    }

    fn footnote(&self) -> &'static str {
        "ns = batch time / operations (÷ events per op where the notes say so), loop overhead and any baseline subtracted; median of samples; p99 of single operations; system calls each operation was proven to make (seccomp probe; none = no kernel entry); MB/s = bytes / ns per op (10^6 B/s)"
    }

    /// A table that fits 100 columns.
    fn render(&self, results: &[FigureResult]) -> String {
        let mut t = new_table(vec![
            "benchmark",
            "ns",
            "p99 ns",
            "MB/s",
            "system calls",
            "notes",
        ]);
        for r in results {
            let (median, p99, mbps, notes) = match &r.outcome {
                Outcome::Ok(m) => {
                    let med = m.summary.median;
                    let mbps = if r.size > 0 && med > 0.0 {
                        format!("{:.0}", r.size as f64 / med * 1e3)
                    } else {
                        "-".into()
                    };
                    let mut notes = quality_notes(m);
                    // Per what: an operation, or each of several events in it.
                    match r.proof().as_ref().and_then(|p| p.events) {
                        Some(e) => notes.push(format!("per {} ({} per op)", e.name, e.per_op)),
                        None => notes.push("per op".into()),
                    }
                    if let Some(b) = r.proof().as_ref().and_then(|p| p.baseline_ns) {
                        notes.push(format!("{} subtracted per op", num(b)));
                    }
                    notes.extend(r.note.clone());
                    (num(med), p99_cell(&m.latency, num), mbps, notes.join("; "))
                }
                other => ("-".into(), "-".into(), "-".into(), unmeasured(other)),
            };
            t.add_row(vec![
                r.id.to_string(),
                median,
                p99,
                mbps,
                proven_calls(r),
                notes,
            ]);
        }
        align_right(&mut t, 1..4);
        t.to_string()
    }
}

/// The system calls a result proved, for the table: "open + close", "none".
fn proven_calls(r: &FigureResult) -> String {
    let Some(proof) = &r.proof() else {
        return "-".into();
    };
    let must: Vec<String> = proof
        .kernel_calls
        .iter()
        .filter(|k| k.must_enter)
        .map(|k| match k.entered {
            Some(true) => k.call.to_string(),
            Some(false) => format!("{} (not made)", k.call),
            None => format!("{} (unproven)", k.call),
        })
        .collect();
    if must.is_empty() {
        let any_entered = proof.kernel_calls.iter().any(|k| k.entered == Some(true));
        if any_entered { "-" } else { "none" }.to_string()
    } else {
        must.join(" + ")
    }
}
