//! Modes `op` and `event`: one row per benchmark, the time per operation
//! (or per event) and the system calls it was proven to make.

use super::cells::{
    align_right, centre_above_p99, new_table, num, p99_cell, quality_notes, unmeasured,
    whole_column,
};
use super::figure::{Outcome, outcome, single_count};
use super::legend::{Legend, NoNumber, precision_line};
use super::{Look, ResultTable};
use crate::record::{FigureRecord, Mode};

/// The table of operation benchmarks, timed by the engine or by themselves.
pub struct OpsTable;

impl ResultTable for OpsTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Op, Mode::Event]
    }

    fn footnote(&self) -> &'static str {
        "mean ns = time per operation (÷ events per op where the notes say so) averaged over a sample, loop overhead and any baseline subtracted, median over the samples (a sample: a batch of operations; mode event: the events the benchmark timed); p99 single ns = 99th percentile of single operations, each timed on its own in windows between the batches (mode event: of the samples' own events); system calls each operation was proven to make (seccomp probe; none = no kernel entry); MB/s = bytes / mean ns (10^6 B/s)"
    }

    /// A table that fits 100 columns.
    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(COLUMNS.to_vec());
        for r in results {
            let (median, p99, mbps, notes) = match outcome(r) {
                Outcome::Ok(m) => {
                    let med = m.summary.median;
                    let mbps = mbps(r.size_bytes, med);
                    let mut notes = quality_notes(&m);
                    // Per what: an operation, or each of several events in it.
                    notes.push(events_note(r).unwrap_or_else(|| "per op".into()));
                    notes.extend(baseline_note(r));
                    let single = match r.mode {
                        Mode::Event => "events",
                        _ => "operations",
                    };
                    notes.extend(centre_above_p99(med, m.latency, single_count(r), single));
                    notes.extend(r.note.clone());
                    (num(med), p99_cell(m.latency, num), mbps, notes.join("; "))
                }
                other => ("-".into(), "-".into(), "-".into(), unmeasured(other)),
            };
            t.add_row(vec![
                r.benchmark.to_string(),
                median,
                p99,
                mbps,
                proven_calls(r),
                notes,
            ]);
        }
        align_right(&mut t, 1..4);
        // Ids whole; the notes wrap instead.
        whole_column(&mut t, 0);
        t.to_string()
    }

    /// The long table with its notes of what each row is, less what the
    /// page says once: the spread and interval of each figure (one line
    /// under the table), "per op" (the columns' legend), why a mean is above
    /// its p99 (`--long`).
    fn short(&self, results: &[FigureRecord], _look: &Look) -> Option<String> {
        let mut t = new_table(COLUMNS.to_vec());
        let mut legend = Legend::default();
        for r in results {
            let mut notes = Vec::new();
            let (median, p99, mbps) = match outcome(r) {
                Outcome::Ok(m) => {
                    let med = m.summary.median;
                    let mbps = mbps(r.size_bytes, med);
                    notes.extend(events_note(r));
                    notes.extend(baseline_note(r));
                    if centre_above_p99(med, m.latency, single_count(r), "operations").is_some() {
                        notes.push("mean above p99 (why: --long)".to_string());
                    }
                    (num(med), p99_cell(m.latency, num), mbps)
                }
                other => {
                    let (kind, note) =
                        NoNumber::of(other, r.size_bytes).unwrap_or((NoNumber::Failed, None));
                    // The reason in the notes, as in the long table.
                    notes.extend(note.map(|n| n.trim_start_matches("n/a: ").to_string()));
                    (legend.no_number(kind, None), "-".into(), "-".into())
                }
            };
            notes.extend(r.note.clone());
            t.add_row(vec![
                r.benchmark.to_string(),
                median,
                p99,
                mbps,
                proven_calls(r),
                notes.join("; "),
            ]);
        }
        align_right(&mut t, 1..4);
        whole_column(&mut t, 0);
        let mut out = format!(
            "{t}\nmean ns = time per operation (per event where noted), batch mean less loop overhead, \
             median of samples\np99 single = of single operations, each timed alone (--long: how)\n{}",
            legend.render()
        );
        if let Some(p) = precision_line(results) {
            out.push_str(&p);
            out.push('\n');
        }
        Some(out)
    }
}

/// The columns of both forms of the table.
const COLUMNS: [&str; 6] = [
    "benchmark",
    "mean ns",
    "p99 single ns",
    "MB/s",
    "system calls",
    "notes",
];

/// Bytes moved per second at `median_ns` an operation, in MB/s; "-" for an
/// operation that moves none or a median with no rate.
fn mbps(size: usize, median_ns: f64) -> String {
    if size > 0 && median_ns > 0.0 {
        format!("{:.0}", size as f64 / median_ns * 1e3)
    } else {
        "-".into()
    }
}

/// "per EVENT (N per op)" for a benchmark that times several events an operation.
fn events_note(r: &FigureRecord) -> Option<String> {
    let e = r.events.as_ref()?;
    Some(format!("per {} ({} per op)", e.name, e.per_op))
}

/// The baseline subtracted from every operation, where there is one.
fn baseline_note(r: &FigureRecord) -> Option<String> {
    let b = r.baseline_ns?;
    Some(format!("{} subtracted per op", num(b)))
}

/// The system calls a result proved, for the table: "open + close", "none".
fn proven_calls(r: &FigureRecord) -> String {
    let Some(kernel_calls) = &r.kernel_calls else {
        return "-".into();
    };
    let must: Vec<String> = kernel_calls
        .iter()
        .filter(|k| k.must_enter)
        .map(|k| match k.entered {
            Some(true) => k.call.to_string(),
            Some(false) => format!("{} (not made)", k.call),
            None => format!("{} (unproven)", k.call),
        })
        .collect();
    if must.is_empty() {
        let any_entered = kernel_calls.iter().any(|k| k.entered == Some(true));
        if any_entered { "-" } else { "none" }.to_string()
    } else {
        must.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::Measurement;
    use crate::engine::run::figure::{Facts, FigureResult, Outcome};
    use crate::output::json::run::figure;
    use crate::output::table::cells::notes_of;
    use crate::stats::{LatencyHistogram, Summary};

    /// A measured op figure whose samples are `samples` and whose single
    /// operations are `singles`.
    fn op(id: &'static str, samples: &[f64], singles: &[f64]) -> FigureResult {
        let mut hist = LatencyHistogram::new();
        singles.iter().for_each(|&v| hist.record_ns(v));
        let mut f = FigureResult::new(id, Facts::Op(None), 0);
        f.outcome = Outcome::Ok(Box::new(Measurement {
            iterations: 100,
            samples_ns: samples.to_vec(),
            summary: Summary::of(samples).unwrap(),
            precision: None,
            loop_overhead_ns: 1.0,
            clock_overhead_ns: 20.0,
            latency: hist.percentiles().unwrap(),
            verified_round_trips: 0,
            histogram: Some(hist),
        }));
        f
    }

    #[test]
    fn a_centre_above_its_p99_says_why() {
        // 300 ns batches; 990 single operations of 100 ns and 10 of 30 µs:
        // p99 100 ns, their own mean about 400 ns (a heavy tail).
        let mut tail = vec![100.0; 990];
        tail.extend([30_000.0; 10]);
        // The same batches beside single operations that never exceed 100.
        let flat = vec![100.0; 1000];
        let results = [
            op("syscall-tail", &[290.0, 300.0, 310.0], &tail),
            op("syscall-flat", &[290.0, 300.0, 310.0], &flat),
            op("syscall-fine", &[90.0, 95.0, 99.0], &flat),
        ];
        let table = OpsTable.render(&results.map(|f| figure(&f)));
        assert!(
            table.contains("mean ns") && table.contains("p99 single ns"),
            "{table}"
        );
        let tail_row = notes_of(&table, "syscall-tail");
        assert!(tail_row.contains("mean above p99: a heavy tail"), "{table}");
        let flat_row = notes_of(&table, "syscall-flat");
        assert!(
            flat_row.contains(
                "mean above p99: the samples held slow stretches that the single operations missed"
            ),
            "{table}"
        );
        assert!(
            !notes_of(&table, "syscall-fine").contains("above p99"),
            "{table}"
        );
    }

    #[test]
    fn an_event_figure_names_its_events() {
        let mut f = op("rhealstone-x", &[300.0], &[100.0; 200]);
        f.facts = Facts::Event(None);
        let table = OpsTable.render(&[figure(&f)]);
        assert!(
            notes_of(&table, "rhealstone-x").contains("that the single events missed"),
            "{table}"
        );
    }
}
