//! Mode `score`: one row per Thread-Metric test, its score, rate and R.

use super::ResultTable;
use super::cells::{align_right, new_table, no_figure, whole_column};
use super::figure::{Outcome, outcome};
use crate::record::{FigureRecord, Mode};

/// The score table.
pub struct ScoreTable;

impl ResultTable for ScoreTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Score]
    }

    fn footnote(&self) -> &'static str {
        "score = operations completed in the period (Thread-Metric's Time Period Total; see the JSON's score.operation for what one is); R = rate / the basic test's rate in this run (S / H); spread = (max − min) / median of the reports' rates"
    }

    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "benchmark",
            "score",
            "per s",
            "R",
            "spread %",
            "notes",
        ]);
        let dash = || "-".to_string();
        for r in results {
            let mut cells = vec![r.benchmark.to_string()];
            match (outcome(r), r.score.as_ref()) {
                (Outcome::Ok(_), Some(f)) => {
                    let mut notes = Vec::new();
                    if f.is_baseline {
                        notes.push("baseline".to_string());
                    }
                    if f.intervals_without_operation > 0 {
                        notes.push(format!(
                            "{} of {} intervals completed no operation (no time per operation; counted in the score)",
                            f.intervals_without_operation,
                            f.interval_operations.len()
                        ));
                    }
                    notes.extend(r.note.clone());
                    cells.extend([
                        count(f.operations),
                        per_second(f.ops_per_s),
                        f.relative_to_baseline
                            .map_or_else(dash, |v| format!("{v:.3}")),
                        format!("{:.1}", f.interval_spread * 100.0),
                        notes.join("; "),
                    ]);
                }
                (outcome, _) => cells.extend(no_figure(4, outcome, "score")),
            }
            t.add_row(cells);
        }
        align_right(&mut t, 1..5);
        whole_column(&mut t, 0);
        t.to_string()
    }
}

/// A count with thousands separated by a thin space: 12 345 678.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// A rate per second, to three significant digits with a k / M suffix.
fn per_second(r: f64) -> String {
    let (v, unit) = if r >= 1e6 {
        (r / 1e6, "M")
    } else if r >= 1e3 {
        (r / 1e3, "k")
    } else {
        (r, "")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_rates_read_back() {
        assert_eq!(count(7), "7");
        assert_eq!(count(1234), "1\u{2009}234");
        assert_eq!(count(12_345_678), "12\u{2009}345\u{2009}678");
        assert_eq!(per_second(950.0), "950");
        assert_eq!(per_second(12_340.0), "12.3k");
        assert_eq!(per_second(4_560_000.0), "4.56M");
    }
}
