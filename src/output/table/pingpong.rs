//! Mode `pingpong`: one row per mechanism × size, the one-way time as half
//! a round trip.

use super::cells::{
    align_right, centre_above_p99, format_size, group_names, new_table, p99_cell, quality_notes,
    size_cell, unmeasured, us,
};
use super::figure::{Outcome, outcome, single_count};
use super::legend::{Legend, precision_line};
use super::matrix::{Better, Matrix, Row, Value, is_list};
use super::{Look, ResultTable};
use crate::record::summary::{CostModel, Segment};
use crate::record::{FigureRecord, Mode};

/// The ping-pong table.
pub struct PingPongTable;

impl ResultTable for PingPongTable {
    fn modes(&self) -> &[Mode] {
        &[Mode::PingPong]
    }

    fn footnote(&self) -> &'static str {
        "mean one-way = round trip / 2 averaged over a sample (a batch of round trips), loop overhead subtracted, median over the samples; p99 single = 99th percentile of single round trips, each timed on its own, halved; MB/s = size / mean one-way (10^6 B/s)"
    }

    /// A table that fits an 80-column terminal.
    fn render(&self, results: &[FigureRecord]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "mean one-way µs",
            "p99 single µs",
            "MB/s",
            "notes",
        ]);
        for (r, name) in results.iter().zip(group_names(results)) {
            let (median, p99, mbps, notes) = match outcome(r) {
                Outcome::Ok(m) => {
                    let med = m.summary.median;
                    let mbps = mb_per_s(r.size_bytes, med);
                    let mut notes = quality_notes(&m);
                    if let Some(bytes) = r.cold_region_bytes {
                        notes.push(format!("cold ({} region)", format_size(bytes)));
                    }
                    notes.extend(centre_above_p99(
                        med,
                        m.latency,
                        single_count(r),
                        "round trips",
                    ));
                    notes.extend(r.note.clone());
                    (us(med), p99_cell(m.latency, us), mbps, notes.join("; "))
                }
                other => ("-".into(), "-".into(), "-".into(), unmeasured(other)),
            };
            t.add_row(vec![
                name.to_string(),
                size_cell(r.size_bytes),
                median,
                p99,
                mbps,
                notes,
            ]);
        }
        align_right(&mut t, 1..5);
        t.to_string()
    }

    /// One row per mechanism (warm and cold apart), one column per size,
    /// the one-way time; the cost model fitted on the row beside it.
    fn short(&self, results: &[FigureRecord], look: &Look) -> Option<String> {
        let mut rows = rows_by(results, cold, |r| match outcome(r) {
            Outcome::Ok(m) => Some((m.summary.median, us(m.summary.median))),
            _ => None,
        });
        let list = is_list(rows.iter().map(|(_, r)| r));
        let modelled = !list && with_models(&mut rows, look.cost_models);
        let extra = if list {
            // One figure per row: room for its p99 and MB/s.
            for ((id, kind), row) in rows.iter_mut() {
                let r = results
                    .iter()
                    .find(|r| r.benchmark == *id && cold(r) == *kind)
                    .expect("a row holds a figure");
                row.extra = match outcome(r) {
                    Outcome::Ok(m) => {
                        vec![
                            p99_cell(m.latency, us),
                            mb_per_s(r.size_bytes, m.summary.median),
                        ]
                    }
                    _ => vec![String::new(), String::new()],
                };
            }
            vec!["p99 single µs", "MB/s"]
        } else if modelled {
            vec!["setup µs", "per-B ns"]
        } else {
            vec![]
        };
        let rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
        let matrix = Matrix {
            label: "one-way µs",
            better: Better::Lower,
            extra,
            colour: look.colour,
        };
        let mut legend = Legend::default();
        let table = matrix.render(&rows, &mut legend);
        let mut out = format!(
            "{table}\none-way µs = round trip ÷ 2, batch mean less loop overhead, median of the samples{}\n",
            if list {
                "; p99 single: round trips timed alone"
            } else {
                " (p99, MB/s: --long)"
            }
        );
        if modelled {
            out.push_str(
                "setup µs + per-B ns × bytes: cost model, least squares on each size's median \
                 (└ from: a new per-byte range; R²: --long)\n",
            );
        }
        out.push_str(&legend.render());
        if let Some(p) = precision_line(results) {
            out.push_str(&p);
            out.push('\n');
        }
        Some(out)
    }
}

/// MB/s (10^6 B/s) of `size` bytes moved in `ns`; "-" without a payload.
fn mb_per_s(size: usize, ns: f64) -> String {
    if size == 0 || ns <= 0.0 {
        return "-".into();
    }
    let v = size as f64 / ns * 1e3;
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The key of a matrix row: the id, and what tells its rows apart
/// (cold buffers, a pacing), which the label shows after the id.
pub(super) type RowKey = (String, Option<String>);

/// The figures as matrix rows, one per key `kind` gives with the id (the
/// id alone when `None`), in run order, each cell `number` of its figure; a
/// note of the mechanism's (where its FIFOs live) once per row.
pub(super) fn rows_by(
    results: &[FigureRecord],
    kind: impl Fn(&FigureRecord) -> Option<String>,
    number: impl Fn(&FigureRecord) -> Option<(f64, String)>,
) -> Vec<(RowKey, Row)> {
    let mut rows: Vec<(RowKey, Row)> = Vec::new();
    for r in results {
        let key = (r.benchmark.clone(), kind(r));
        let i = match rows.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let label = match &key.1 {
                    Some(k) => format!("{} ({k})", r.benchmark),
                    None => r.benchmark.to_string(),
                };
                rows.push((
                    key,
                    Row {
                        label,
                        ..Row::default()
                    },
                ));
                rows.len() - 1
            }
        };
        let row = &mut rows[i].1;
        if let Some(n) = &r.note
            && !row.notes.contains(n)
        {
            row.notes.push(n.clone());
        }
        row.cells.push((r.size_bytes, Value::of(r, &number)));
    }
    rows
}

/// Cold figures are a row of their own.
pub(super) fn cold(r: &FigureRecord) -> Option<String> {
    r.cold_region_bytes.is_some().then(|| "cold".to_string())
}

/// Puts each mechanism's cost model beside its row: its first range's
/// setup and per-byte cost in the row, each further range on a line of its
/// own. Whether any row had one (if none, no row has the columns).
fn with_models(rows: &mut [(RowKey, Row)], models: &[CostModel]) -> bool {
    let cells = |s: &Segment| vec![us(s.setup_ns), significant(s.per_byte_ns)];
    let mut any = false;
    for ((id, kind), row) in rows.iter_mut() {
        let cold = kind.is_some();
        match models
            .iter()
            .find(|m| m.benchmark == *id && m.cold == cold && !m.segments.is_empty())
        {
            Some(m) => {
                any = true;
                row.extra = cells(&m.segments[0]);
                row.more = m.segments[1..]
                    .iter()
                    .map(|s| (format!("└ from {}", format_size(s.from_bytes)), cells(s)))
                    .collect();
            }
            None => row.extra = vec![String::new(), String::new()],
        }
    }
    if !any {
        rows.iter_mut().for_each(|(_, r)| r.extra.clear());
    }
    any
}

/// A cost per byte to three significant digits: 0.708, 0.0123, 1.03, 12.3.
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v:.0}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::Measurement;
    use crate::engine::run::figure::{Facts, FigureResult, Outcome};
    use crate::output::json::run::figure;
    use crate::output::table::cells::notes_of;
    use crate::stats::{LatencyHistogram, Summary};

    #[test]
    fn the_columns_name_their_populations_and_a_mean_above_p99_says_why() {
        let mut hist = LatencyHistogram::new();
        (0..1000).for_each(|_| hist.record(2_000));
        let samples = [2_900.0, 3_000.0, 3_100.0];
        let mut f = FigureResult::new("pipe", Facts::PingPong, 64);
        f.outcome = Outcome::Ok(Box::new(Measurement {
            iterations: 100,
            samples_ns: samples.to_vec(),
            summary: Summary::of(&samples).unwrap(),
            precision: None,
            loop_overhead_ns: 10.0,
            clock_overhead_ns: 20.0,
            latency: hist.percentiles().unwrap(),
            verified_round_trips: 16,
            histogram: Some(hist),
        }));
        let table = PingPongTable.render(&[figure(&f)]);
        assert!(
            table.contains("mean one-way µs") && table.contains("p99 single µs"),
            "{table}"
        );
        assert!(
            notes_of(&table, "pipe").contains(
                "mean above p99: the samples held slow stretches that the single round trips missed (their mean 2000 ns)"
            ),
            "{table}"
        );
    }

    /// A measured ping-pong figure of `id` at `size` whose samples have
    /// median `ns`, its interval ± `achieved` over 5 passes (target 2%).
    fn measured(id: &'static str, size: usize, ns: f64, achieved: f64) -> FigureResult {
        use crate::engine::measure::{Achieved, Basis};
        let mut hist = LatencyHistogram::new();
        (0..100).for_each(|_| hist.record(ns as u64 * 2));
        let samples = [ns - 1.0, ns, ns + 1.0];
        let mut f = FigureResult::new(id, Facts::PingPong, size);
        f.outcome = Outcome::Ok(Box::new(Measurement {
            iterations: 100,
            samples_ns: samples.to_vec(),
            summary: Summary::of(&samples).unwrap(),
            precision: Some(Achieved {
                target: 0.02,
                achieved,
                met: achieved <= 0.02,
                interval_ns: crate::stats::compare::Interval {
                    low: ns * (1.0 - achieved),
                    high: ns * (1.0 + achieved),
                },
                basis: Basis::Passes(5),
            }),
            loop_overhead_ns: 10.0,
            clock_overhead_ns: 20.0,
            latency: hist.percentiles().unwrap(),
            verified_round_trips: 16,
            histogram: Some(hist),
        }));
        f
    }

    #[test]
    fn the_short_table_is_a_matrix_with_the_cost_model_and_one_precision_line() {
        let mut figures = vec![
            measured("pipe", 1, 5_000.0, 0.01),
            measured("pipe", 64, 5_100.0, 0.03),
            measured("pipe", 4096, 6_000.0, 0.071),
            measured("shm-spin", 1, 200.0, 0.008),
            measured("shm-spin", 64, 210.0, 0.015),
        ];
        let mut failed = FigureResult::new("shm-spin", Facts::PingPong, 4096);
        failed.outcome = Outcome::Failed("message 812 came back corrupted".into());
        figures.push(failed);
        let figures: Vec<_> = figures.iter().map(figure).collect();
        let model = crate::analysis::cost_model::fit(&figures);
        assert_eq!(model.len(), 1, "pipe alone has three sizes");
        let look = Look {
            cost_models: &model,
            colour: false,
        };
        let page = PingPongTable.short(&figures, &look).unwrap();
        let row = |id: &str| {
            page.lines()
                .find(|l| l.starts_with(&format!("│ {id} ")))
                .unwrap_or_else(|| panic!("no row {id}:\n{page}"))
        };
        // One row per mechanism, its sizes in columns, the lowest marked
        // (not a figure alone in its column: nothing to rank it against).
        assert!(
            row("pipe").contains("5.00 ") && row("pipe").contains("6.00 "),
            "{page}"
        );
        assert!(
            row("shm-spin").contains("0.20*") && row("shm-spin").contains("FAIL¹"),
            "{page}"
        );
        assert!(
            page.contains("setup µs") && page.contains("per-B ns"),
            "{page}"
        );
        assert!(
            page.contains("¹ FAILED: message 812 came back corrupted"),
            "{page}"
        );
        assert!(page.contains("* lowest in its column"), "{page}");
        assert!(
            page.contains(
                "intervals (95%): ±0.8–7.1% over 5 passes (target 2%); 2 figures wider than the target"
            ),
            "{page}"
        );
        // The figures' intervals themselves are for --long.
        assert!(!page.contains("±3%") && !page.contains("spread"), "{page}");
        assert!(page.lines().all(|l| l.chars().count() <= 120), "{page}");
        // One size each: a list, with each figure's p99 and MB/s.
        let quick = [
            measured("pipe", 64, 5_000.0, 0.01),
            measured("eventfd", 64, 4_000.0, 0.01),
        ];
        let list = PingPongTable
            .short(&quick.map(|f| figure(&f)), &look)
            .unwrap();
        assert!(
            list.contains("p99 single µs") && list.contains("MB/s") && !list.contains("setup µs"),
            "{list}"
        );
        assert!(list.contains("* lowest at its size"), "{list}");
        assert!(list.lines().all(|l| l.chars().count() <= 120), "{list}");
        let long = PingPongTable.render(&figures);
        assert!(
            long.contains("mean one-way µs") && long.contains("±7.1% over 5 passes"),
            "{long}"
        );
    }
}
