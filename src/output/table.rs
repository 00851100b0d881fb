//! The terminal table: one row per mechanism × size.

use crate::engine::runner::{FigureResult, Outcome};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

/// Human form of a byte count: 64, 4K, 1M.
pub fn format_size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}K", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

fn us(ns: f64) -> String {
    let v = ns / 1000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Wraps a table to the terminal's width, or to 100 columns when stdout is not
/// a terminal (comfy-table would otherwise never wrap).
pub fn fit_width(t: &mut Table) {
    let w = t.width().unwrap_or(100);
    t.set_width(w.max(72));
}

/// Renders results as a table that fits an 80-column terminal.
pub fn render(results: &[FigureResult]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "mechanism",
            "size",
            "one-way µs",
            "p99 µs",
            "MB/s",
            "notes",
        ]);
    fit_width(&mut t);
    let mut previous: Option<&str> = None;
    for r in results {
        // The name once per group of sizes: the eye finds each mechanism's block.
        let name = if previous == Some(r.mechanism) {
            ""
        } else {
            r.mechanism
        };
        previous = Some(r.mechanism);
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
                let mut notes = Vec::new();
                if m.summary.relative_range() > 0.25 {
                    notes.push(format!("spread {:.0}%", m.summary.relative_range() * 100.0));
                }
                notes.extend(r.note.clone());
                (us(med), us(m.latency.p99 as f64), mbps, notes.join("; "))
            }
            Outcome::Skipped(why) => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("skipped: {why}"),
            ),
            Outcome::Failed(why) => ("-".into(), "-".into(), "-".into(), format!("FAILED: {why}")),
        };
        let size = match r.size {
            0 => "notify".into(),
            n => format_size(n),
        };
        t.add_row(vec![name.to_string(), size, median, p99, mbps, notes]);
    }
    for col in 1..5 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_back() {
        assert_eq!(format_size(1), "1");
        assert_eq!(format_size(64), "64");
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(65536), "64K");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(1500), "1500");
    }
}
