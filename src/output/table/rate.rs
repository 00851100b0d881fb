//! Mode `rate`: one row per mechanism × size with its knee and saturation
//! rate, then each measured figure's curve, one line per offered rate (the
//! median over rounds of that rate's points), and a line for each figure
//! whose sender fell behind or whose channel lost messages.

use super::cells::{align_right, group_names, new_table, size_cell, unmeasured, us, whole_column};
use super::figure::outcome;
use super::{Look, ResultTable};
use crate::engine::models::rate::rate_text;
use crate::output::rate::{knee_text, levels, saturation_text};
use crate::record::rate::QuantilesRecord;
use crate::record::{FigureRecord, Mode};

/// The rate table.
pub struct RateTable;

impl ResultTable for RateTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::Rate]
    }

    fn footnote(&self) -> &'static str {
        "rate: the client sends message i at t0 + i/R whether or not the ones before have \
         arrived (open loop), the peer stamps each arrival; latency = arrival − intended send \
         t0 + i/R − one clock read (a stall delays every message due during it); each rate's \
         cells are the median over rounds of its points (lost, late: totals); achieved = \
         received ÷ (last arrival − first intended send); knee = where the p99 crosses 2× the \
         low-rate p99 (median of the rates up to ¼ of saturation) for good, interpolated in log \
         rate between the two rates measured around it; saturation = the highest achieved rate within 5% of \
         its offer (≥: the highest rate offered kept up); (low–high) over rounds; late = sent \
         more than one period after its intended time; notes: how the sender waited (spinning, \
         or a sleep to the wake-up margin, then spinning); latency from the actual send: --json"
    }

    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "rounds",
            "knee",
            "saturation",
            "notes",
        ]);
        for (r, name) in results.iter().zip(group_names(results)) {
            let mut row = vec![name.to_string(), size_cell(r.size_bytes)];
            match r
                .rate_curve
                .as_ref()
                .filter(|_| matches!(r.status, crate::record::Status::Ok))
            {
                Some(c) => {
                    row.push(c.rounds.to_string());
                    row.push(knee_text(c));
                    row.push(saturation_text(c));
                    // How the sender waited says whether its own wake-ups
                    // are inside the latencies.
                    let notes: Vec<String> = std::iter::once(c.waiting.clone())
                        .chain(r.note.clone())
                        .collect();
                    row.push(notes.join("; "));
                }
                None => {
                    row.extend(std::iter::repeat_n("-".to_string(), 3));
                    row.push(unmeasured(outcome(r)));
                }
            }
            t.add_row(row);
        }
        align_right(&mut t, 2..3);
        whole_column(&mut t, 0);
        let mut out = t.to_string();
        let curves: Vec<&FigureRecord> =
            results.iter().filter(|r| r.rate_curve.is_some()).collect();
        if !curves.is_empty() {
            out.push('\n');
            out.push_str(&curve_table(&curves));
        }
        out
    }

    /// The figures whose sender fell behind its schedule or whose channel
    /// lost messages, one line each, by rate.
    fn after(&self, figures: &[FigureRecord]) -> String {
        let mut out = String::new();
        for r in figures {
            let Some(c) = &r.rate_curve else { continue };
            let name = format!("{} {}", r.benchmark, size_cell(r.size_bytes));
            let levels = levels(c);
            let behind: Vec<String> = levels
                .iter()
                .filter(|l| l.late > 0)
                .map(|l| {
                    format!(
                        "{} by up to {} µs ({} late)",
                        rate_text(l.offered_rate),
                        us(l.behind_max_ns as f64),
                        l.late
                    )
                })
                .collect();
            if !behind.is_empty() {
                out.push_str(&format!("{name}: sender behind at {}\n", behind.join(", ")));
            }
            let lost: Vec<String> = levels
                .iter()
                .filter(|l| l.lost > 0)
                .map(|l| format!("{} of {} at {}", l.lost, l.sent, rate_text(l.offered_rate)))
                .collect();
            if !lost.is_empty() {
                out.push_str(&format!("{name}: lost {}\n", lost.join(", ")));
            }
        }
        out
    }

    /// The long form is already compact: a row per figure, a line per rate.
    fn short(&self, _figures: &[FigureRecord], _look: &Look) -> Option<String> {
        None
    }
}

/// Each measured figure's curve: one line per offered rate.
fn curve_table(figures: &[&FigureRecord]) -> String {
    let mut t = new_table(vec![
        "mechanism",
        "size",
        "offered",
        "achieved",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "lost",
        "late",
    ]);
    let mut previous: Option<(&str, usize)> = None;
    for r in figures {
        let Some(c) = &r.rate_curve else { continue };
        for l in levels(c) {
            let first = previous != Some((r.benchmark.as_str(), r.size_bytes));
            previous = Some((r.benchmark.as_str(), r.size_bytes));
            // A rate at which no message arrived has no latency to show.
            let latency = |v: fn(&QuantilesRecord) -> f64| {
                l.latency_ns.as_ref().map_or("-".to_string(), |q| us(v(q)))
            };
            t.add_row(vec![
                if first {
                    r.benchmark.clone()
                } else {
                    String::new()
                },
                if first {
                    size_cell(r.size_bytes)
                } else {
                    String::new()
                },
                rate_text(l.offered_rate),
                rate_text(l.achieved_rate),
                latency(|q| q.p50),
                latency(|q| q.p99),
                latency(|q| q.p999),
                l.lost.to_string(),
                l.late.to_string(),
            ]);
        }
    }
    align_right(&mut t, 1..9);
    whole_column(&mut t, 0);
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::rate::RateCurveRecord;
    use crate::record::rate::tests::curve;
    use crate::record::{Mode, Status};

    /// A rate figure of `pipe` at 64 B with `c` as its curve.
    fn figure(c: Option<RateCurveRecord>, status: Status) -> FigureRecord {
        let mut f: FigureRecord = serde_json::from_value(serde_json::json!({
            "benchmark": "pipe", "mode": "rate", "size_bytes": 64,
            "status": status.name(), "cpus": [0, 1],
            "reason": "cannot be offered a rate: it cannot queue messages",
        }))
        .unwrap();
        f.rate_curve = c;
        assert_eq!(f.mode, Mode::Rate);
        f
    }

    #[test]
    fn a_curve_has_its_knee_saturation_and_a_line_per_rate() {
        let mut c = curve();
        // Round 1 fell behind and lost at 10k.
        c.points[1].late = 7;
        c.points[1].behind_max_ns = 250_000;
        c.points[1].lost = 3;
        let f = figure(Some(c), Status::Ok);
        let page = RateTable.render(std::slice::from_ref(&f));
        assert!(page.contains("none ≤ 10k"), "{page}");
        // Every round's highest rate kept up: a bound, from one round of two.
        assert!(page.contains("≥ 9.9k, 1 of 2 rounds"), "{page}");
        assert!(page.contains("sleep, then spin"), "{page}");
        // 1k: the median of the two rounds' p50 (5.0 and 5.1 µs).
        let line = page.lines().find(|l| l.contains(" 1k ")).expect(&page);
        assert!(line.contains("5.05"), "{line}");
        assert!(page.lines().any(|l| l.contains(" 10k ")), "{page}");
        let after = RateTable.after(&[f]);
        assert_eq!(
            after,
            "pipe 64: sender behind at 10k by up to 250 µs (7 late)\n\
             pipe 64: lost 3 of 1000 at 10k\n"
        );
    }

    #[test]
    fn a_skipped_figure_says_why_and_has_no_curve() {
        let f = figure(None, Status::Skipped);
        let page = RateTable.render(std::slice::from_ref(&f));
        assert!(page.contains("skipped: cannot be offered"), "{page}");
        assert!(!page.contains("achieved"), "no curve: {page}");
        assert!(RateTable.after(&[f]).is_empty());
    }
}
