//! Mode `pingpong`: one row per mechanism × size, the one-way time as half
//! a round trip.

use super::ResultTable;
use super::cells::{
    align_right, format_size, group_names, new_table, p99_cell, quality_notes, size_cell,
    unmeasured, us,
};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};

/// The ping-pong table.
pub struct PingPongTable;

impl ResultTable for PingPongTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::PingPong]
    }

    fn footnote(&self) -> &'static str {
        "one-way = round trip / 2, loop overhead subtracted; median of samples; p99 of single round trips; MB/s = size / one-way (10^6 B/s)"
    }

    /// A table that fits an 80-column terminal.
    fn render(&self, results: &[FigureResult]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "one-way µs",
            "p99 µs",
            "MB/s",
            "notes",
        ]);
        for (r, name) in results.iter().zip(group_names(results)) {
            let (median, p99, mbps, notes) = match &r.outcome {
                Outcome::Ok(m) => {
                    let med = m.summary.median;
                    let mbps = if r.size > 0 && med > 0.0 {
                        let v = r.size as f64 / med * 1e3;
                        if v < 10.0 {
                            format!("{v:.1}")
                        } else {
                            format!("{v:.0}")
                        }
                    } else {
                        "-".into()
                    };
                    let mut notes = quality_notes(m);
                    if let Some(bytes) = r.cold_region {
                        notes.push(format!("cold ({} region)", format_size(bytes)));
                    }
                    notes.extend(r.note.clone());
                    (us(med), p99_cell(&m.latency, us), mbps, notes.join("; "))
                }
                other => ("-".into(), "-".into(), "-".into(), unmeasured(other)),
            };
            t.add_row(vec![
                name.to_string(),
                size_cell(r.size),
                median,
                p99,
                mbps,
                notes,
            ]);
        }
        align_right(&mut t, 1..5);
        t.to_string()
    }
}
