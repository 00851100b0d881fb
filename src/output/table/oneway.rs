//! Mode `oneway`: one row per mechanism × size × pacing, then each measured
//! figure's windows in the 2011 study's shape.

use super::cells::{align_right, centre_above_p99, format_size, new_table, unmeasured, us};
use super::figure::{Outcome, outcome, single_count};
use super::legend::{Legend, precision_line};
use super::matrix::{Better, Matrix, Row};
use super::pingpong::rows_by;
use super::{Look, ResultTable};
use crate::record::facts::OneWayRecord;
use crate::record::{FigureRecord, Mode};

/// The one-way table, followed by the windows of its figures.
pub struct OneWayTable;

impl ResultTable for OneWayTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::OneWay]
    }

    fn footnote(&self) -> &'static str {
        "client = sender, server = receiver; one-way = receiver's clock after recv − sender's CLOCK_MONOTONIC stamp in the message, one clock read subtracted; one message in flight (the receiver acknowledges each); saturated = next message on the acknowledgement, otherwise one per interval; mean over every message, percentiles of every message"
    }

    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "pacing",
            "messages",
            "min µs",
            "p50 µs",
            "mean µs",
            "p99 µs",
            "max µs",
            "notes",
        ]);
        for r in results {
            let size = format_size(r.size_bytes);
            let mut row = vec![r.benchmark.to_string(), size];
            match (outcome(r), r.oneway.as_ref()) {
                (Outcome::Ok(m), Some(f)) => {
                    let l = m.latency;
                    row.push(pacing(f));
                    row.push(f.messages_sent.to_string());
                    // Unresolved (at or below zero): "< res", as at zero.
                    let pct = |v: fn(&crate::record::run::Latency) -> Option<f64>| {
                        l.and_then(v).unwrap_or(0.0)
                    };
                    for v in [
                        pct(|l| l.min),
                        pct(|l| l.p50),
                        f.mean_ns,
                        pct(|l| l.p99),
                        pct(|l| l.max),
                    ] {
                        row.push(latency(v));
                    }
                    let mut notes = Vec::new();
                    if f.time_bounded {
                        notes.push("stopped at its time bound".to_string());
                    }
                    notes.extend(centre_above_p99(f.mean_ns, l, single_count(r), "messages"));
                    notes.extend(r.note.clone());
                    row.push(notes.join("; "));
                }
                (outcome, _) => {
                    row.extend(std::iter::repeat_n("-".to_string(), 7));
                    row.push(unmeasured(outcome));
                }
            }
            t.add_row(row);
        }
        align_right(&mut t, 3..9);
        t.to_string()
    }

    /// One row per mechanism (and pacing, when the run had several), one
    /// column per size, the mean one-way latency of every message.
    fn short(&self, results: &[FigureRecord], look: &Look) -> Option<String> {
        let mut pacings: Vec<String> = results
            .iter()
            .filter_map(|r| r.oneway.as_ref())
            .map(pacing)
            .collect();
        pacings.dedup();
        // Told apart in the rows only when the run had several.
        let several = pacings.iter().any(|p| *p != pacings[0]);
        let rows = rows_by(
            results,
            |r| r.oneway.as_ref().filter(|_| several).map(pacing),
            |r| {
                r.oneway
                    .as_ref()
                    .filter(|f| f.mean_ns > 0.0)
                    .map(|f| (f.mean_ns, us(f.mean_ns)))
            },
        );
        let rows: Vec<Row> =
            rows.into_iter()
                .map(|((id, _), mut row)| {
                    if results.iter().any(|r| {
                        r.benchmark == id && r.oneway.as_ref().is_some_and(|f| f.time_bounded)
                    }) {
                        row.notes
                            .push("stopped at its time bound (which sizes: --long)".into());
                    }
                    row
                })
                .collect();
        let matrix = Matrix {
            label: "one-way µs",
            better: Better::Lower,
            extra: vec![],
            colour: look.colour,
        };
        let mut legend = Legend::default();
        let table = matrix.render(&rows, &mut legend);
        let paced = match (several, pacings.first()) {
            (false, Some(p)) => format!(", {p}"),
            _ => String::new(),
        };
        let mut out = format!(
            "{table}\none-way µs = receiver's clock − the sender's stamp, mean over every message{paced} \
             (percentiles, windows: --long)\n{}",
            legend.render()
        );
        if let Some(p) = precision_line(results) {
            out.push_str(&p);
            out.push('\n');
        }
        Some(out)
    }

    /// The windows of each measured figure, one line each, in the 2011
    /// study's shape (`min = 1   max = 78 moy = 7.8`, µs).
    fn after(&self, results: &[FigureRecord]) -> String {
        let mut out = String::new();
        for r in results {
            let (Outcome::Ok(_), Some(f)) = (outcome(r), r.oneway.as_ref()) else {
                continue;
            };
            out.push_str(&format!(
                "{} {} {}, windows of {} messages (µs):\n",
                r.benchmark,
                format_size(r.size_bytes),
                pacing(f),
                f.window
            ));
            for w in &f.windows {
                let short = if w.messages < f.window {
                    format!("   ({} messages)", w.messages)
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "  min = {:>7}   max = {:>7}   mean = {:>7}{short}\n",
                    latency(w.min_ns),
                    latency(w.max_ns),
                    latency(w.mean_ns)
                ));
            }
        }
        out
    }
}

/// A latency in µs, or "< res" at or below zero (below the clock's
/// resolution once the clock read was subtracted: not a measured time).
fn latency(ns: f64) -> String {
    if ns > 0.0 { us(ns) } else { "< res".into() }
}

/// "saturated", or "every 100ms" for sporadic sending.
fn pacing(f: &OneWayRecord) -> String {
    match f.interval_ns {
        Some(ns) => format!(
            "every {}",
            crate::presets::format_duration(std::time::Duration::from_nanos(ns))
        ),
        None => "saturated".into(),
    }
}
