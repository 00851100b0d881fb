//! Mode `pingpong`: one row per mechanism × size, the one-way time as half
//! a round trip.

use super::ResultTable;
use super::cells::{
    align_right, centre_above_p99, format_size, group_names, new_table, p99_cell, quality_notes,
    size_cell, unmeasured, us,
};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};

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
    fn render(&self, results: &[FigureResult]) -> String {
        let mut t = new_table(vec![
            "mechanism",
            "size",
            "mean one-way µs",
            "p99 single µs",
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
                    notes.extend(centre_above_p99(med, &m.latency, "round trips"));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::Measurement;
    use crate::engine::run::figure::Facts;
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
        let table = PingPongTable.render(&[f]);
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
}
