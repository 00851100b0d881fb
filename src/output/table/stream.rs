//! Mode `stream`: one row per mechanism × size, throughput and the CPU time
//! each side spent per message.

use super::cells::{
    align_right, format_size, group_names, new_table, no_figure, num, size_cell, us, whole_column,
};
use super::figure::{Outcome, outcome};
use super::legend::Legend;
use super::matrix::{Better, Matrix, Row};
use super::pingpong::{cold, rows_by};
use super::{Look, ResultTable};
use crate::record::{FigureRecord, Mode};

/// The stream table.
pub struct StreamTable;

impl ResultTable for StreamTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Stream]
    }

    fn footnote(&self) -> &'static str {
        "stream: the client sends back to back, the peer receives and checks every sequence number; MB/s (10^6 B/s) and msg/s at the median time per message = the receiver's clock window ÷ messages received, less the loop overhead of the side that bounds the stream (the busier); CPU µs/msg = getrusage user + system time of each side over the timed part ÷ its messages, less its loop overhead (a busy-waiting side shows its spinning; < res: nothing left); loss = 1 − received ÷ sent (lossy channels only)"
    }

    /// Windowed streams (MPI's) are timed otherwise: said under the table.
    fn after(&self, figures: &[FigureRecord]) -> String {
        if windowed(figures) {
            format!("{WINDOWED}\n")
        } else {
            String::new()
        }
    }

    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "MB/s",
            "msg/s",
            "CPU µs/msg send",
            "CPU µs/msg recv",
            "loss",
            "notes",
        ]);
        for (r, name) in results.iter().zip(group_names(results)) {
            let dash = || "-".to_string();
            let mut cells = match (outcome(r), r.stream.as_ref()) {
                (Outcome::Ok(m), Some(f)) => {
                    let mut notes = Vec::new();
                    if m.summary.relative_range() > 0.25 {
                        notes.push(format!("spread {:.0}%", m.summary.relative_range() * 100.0));
                    }
                    if let Some(bytes) = r.cold_region_bytes {
                        notes.push(format!("cold ({} region)", format_size(bytes)));
                    }
                    notes.extend(r.note.clone());
                    let loss = if f.lossy {
                        format!("{:.1}%", f.loss_ratio * 100.0)
                    } else {
                        dash()
                    };
                    let res = || "< res".to_string();
                    vec![
                        r.throughput_bytes_per_s.map_or_else(res, |b| num(b / 1e6)),
                        f.messages_per_s.map_or_else(res, |m| format!("{m:.0}")),
                        f.cpu_ns_per_message.sender.map_or_else(res, us),
                        f.cpu_ns_per_message.receiver.map_or_else(res, us),
                        loss,
                        notes.join("; "),
                    ]
                }
                (outcome, _) => no_figure(5, outcome, "stream"),
            };
            cells.splice(0..0, [name.to_string(), size_cell(r.size_bytes)]);
            t.add_row(cells);
        }
        align_right(&mut t, 1..7);
        whole_column(&mut t, 0);
        t.to_string()
    }

    /// One row per mechanism, one column per size, the throughput.
    fn short(&self, results: &[FigureRecord], look: &Look) -> Option<String> {
        let rows: Vec<Row> = rows_by(results, cold, |r| {
            let b = r.throughput_bytes_per_s.filter(|_| r.stream.is_some())?;
            Some((b, num(b / 1e6)))
        })
        .into_iter()
        .map(|((id, _), mut row)| {
            if results.iter().any(|r| {
                r.benchmark == id
                    && r.stream
                        .as_ref()
                        .is_some_and(|f| f.lossy && f.loss_ratio > 0.0)
            }) {
                row.notes
                    .push("lost messages (its loss per size: --long)".into());
            }
            row
        })
        .collect();
        let matrix = Matrix {
            label: "stream MB/s",
            better: Better::Higher,
            extra: vec![],
            colour: look.colour,
        };
        let mut legend = Legend::default();
        let table = matrix.render(&rows, &mut legend);
        let clock = if windowed(results) {
            "the sender's clock over acknowledged windows (MPI: rank 0's; between barriers for \
             several pairs)"
        } else {
            "the receiver's clock"
        };
        Some(format!(
            "{table}\nMB/s (10^6 B/s) one way, back to back, at the median time per message by \
             {clock} (msg/s, CPU/msg: --long)\n{}",
            legend.render()
        ))
    }
}

/// How a stream sent in acknowledged windows is timed.
const WINDOWED: &str = "windowed streams (MPI): a window of non-blocking sends, all waited for, \
    then the receiver's acknowledgement; time per message = the sender's (rank 0's) clock over \
    a sample's windows, acknowledgements included (for several pairs, from barrier to barrier) \
    ÷ the messages of every pair; nothing subtracted but one clock read";

/// Whether any of the figures is a stream sent in acknowledged windows.
fn windowed(figures: &[FigureRecord]) -> bool {
    figures.iter().any(|r| {
        r.stream
            .as_ref()
            .is_some_and(|f| f.messages_per_window.is_some())
    })
}
