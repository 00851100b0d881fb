//! Mode `periodic`: one row per figure, so timer-failures' rows are the
//! failure curve over its frequencies.

use super::ResultTable;
use super::cells::{align_right, group_names, new_table, no_figure, us, whole_column};
use super::figure::{Outcome, outcome};
use crate::record::{FigureRecord, Mode};

/// The periodic table.
pub struct PeriodicTable;

impl ResultTable for PeriodicTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Periodic]
    }

    fn footnote(&self) -> &'static str {
        "latency = wake time − absolute deadline (clock_nanosleep TIMER_ABSTIME), nothing subtracted; failures = wake-ups later than tolerance × period; Fail_sys = failures / wake-ups; irq: cost per interrupt = (loop time with timer − without) / interrupts, median of alternating rounds"
    }

    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "benchmark",
            "Hz",
            "wake-ups",
            "failures",
            "Fail_sys %",
            "p50 µs",
            "p99 µs",
            "max µs",
            "notes",
        ]);
        for (r, name) in results.iter().zip(group_names(results)) {
            let freq = r
                .periodic
                .as_ref()
                .map_or("-".into(), |p| hz(p.frequency_hz));
            let dash = || "-".to_string();
            let row = match (outcome(r), r.periodic.as_ref()) {
                (Outcome::Ok(m), Some(p)) => {
                    // Slack and policy only when they are not the usual (1 ns
                    // slack, SCHED_OTHER): the JSON records them always.
                    let mut notes = Vec::new();
                    if p.irq.is_none() && p.timer_slack_ns != 1 {
                        notes.push(format!("slack {} ns", p.timer_slack_ns));
                    }
                    if p.sched_policy != "SCHED_OTHER" {
                        notes.push(p.sched_policy.to_string());
                    }
                    notes.extend(r.note.clone());
                    match &p.irq {
                        Some(irq) => {
                            notes.insert(
                                0,
                                format!(
                                    "{} µs per interrupt (median of {} rounds)",
                                    us(irq.cost_per_interrupt_ns),
                                    irq.rounds
                                ),
                            );
                            vec![
                                irq.interrupts.to_string(),
                                dash(),
                                dash(),
                                dash(),
                                dash(),
                                dash(),
                            ]
                        }
                        None => vec![
                            p.wakeups.map_or_else(dash, |w| w.to_string()),
                            p.failures.map_or_else(dash, |f| f.to_string()),
                            p.fail_ratio
                                .map_or_else(dash, |f| format!("{:.2}", f * 100.0)),
                            // At or below zero reads 0, as it was counted.
                            us(m.latency.and_then(|l| l.p50).unwrap_or(0.0)),
                            us(m.latency.and_then(|l| l.p99).unwrap_or(0.0)),
                            us(m.latency.and_then(|l| l.max).unwrap_or(0.0)),
                        ],
                    }
                    .into_iter()
                    .chain(std::iter::once(notes.join("; ")))
                    .collect::<Vec<_>>()
                }
                (outcome, _) => no_figure(6, outcome, "periodic"),
            };
            let mut cells = vec![name.to_string(), freq];
            cells.extend(row);
            t.add_row(cells);
        }
        align_right(&mut t, 1..8);
        // Ids whole; the notes wrap instead.
        whole_column(&mut t, 0);
        t.to_string()
    }
}

/// Frequency in Hz, as short as it reads: 60, 1000, 62.5.
fn hz(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        format!("{f:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_read_back() {
        assert_eq!(hz(60.0), "60");
        assert_eq!(hz(62.5), "62.5");
    }
}
