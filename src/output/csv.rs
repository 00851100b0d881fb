//! A run report as CSV, for a spreadsheet (`run --csv`, `export --format
//! csv`): one row per figure with the fields of the report's summary of it,
//! read from the report's records ([`RunRecord`], `ipcmark.run/1`), so a run
//! stored in the history exports as one just measured. Numbers are written
//! in full (Rust's shortest text that reads back to the same f64).

use crate::record::{FigureRecord, RunRecord};

/// Why a report cannot be written as CSV: it is not a run's.
pub const NOT_A_RUN: &str =
    "only a report of ipcmark run has figures to write as CSV (export a workload as JSON)";

/// One cell of a row, before it is written.
enum Cell<'a> {
    /// Nothing: the field is absent or null.
    Empty,
    /// Text, made safe for a spreadsheet (never a formula).
    Text(&'a str),
    /// A number, in full.
    Float(f64),
    /// A whole number.
    Whole(u64),
    /// `true` or `false`.
    Flag(bool),
    /// Whole numbers joined by ' '.
    List(&'a [usize]),
}

impl Cell<'_> {
    fn write(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Text(s) => super::sanitise::csv_cell(s),
            // JSON holds no NaN or infinity: the report writes null there.
            Cell::Float(f) if !f.is_finite() => String::new(),
            Cell::Float(f) => f.to_string(),
            Cell::Whole(n) => n.to_string(),
            Cell::Flag(b) => b.to_string(),
            Cell::List(items) => items
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

fn float(v: Option<f64>) -> Cell<'static> {
    v.map_or(Cell::Empty, Cell::Float)
}

fn text(v: Option<&str>) -> Cell<'_> {
    v.map_or(Cell::Empty, Cell::Text)
}

/// The columns: each a name and its cell of a figure. Times are ns, as in
/// the JSON.
type Column = (&'static str, fn(&FigureRecord) -> Cell<'_>);

const COLUMNS: &[Column] = &[
    ("benchmark", |r| Cell::Text(&r.benchmark)),
    ("mode", |r| Cell::Text(r.mode.name())),
    ("size_bytes", |r| Cell::Whole(r.size_bytes as u64)),
    ("status", |r| Cell::Text(r.status.name())),
    ("pacing", |r| {
        text(r.oneway.as_ref().map(|o| o.pacing.as_str()))
    }),
    ("median_ns", |r| {
        float(r.latency_ns.as_ref().map(|l| l.median))
    }),
    ("mean_ns", |r| float(r.latency_ns.as_ref().map(|l| l.mean))),
    ("stddev_ns", |r| {
        float(r.latency_ns.as_ref().map(|l| l.stddev))
    }),
    ("interval_low_ns", |r| {
        float(r.precision.as_ref().map(|p| p.interval_ns.low))
    }),
    ("interval_high_ns", |r| {
        float(r.precision.as_ref().map(|p| p.interval_ns.high))
    }),
    // Half the interval's width.
    ("interval_half_width_ns", |r| {
        float(
            r.precision
                .as_ref()
                .map(|p| (p.interval_ns.high - p.interval_ns.low) / 2.0),
        )
    }),
    ("precision_target", |r| {
        float(r.precision.as_ref().map(|p| p.target))
    }),
    ("precision_achieved", |r| {
        float(r.precision.as_ref().and_then(|p| p.achieved))
    }),
    ("precision_met", |r| {
        r.precision
            .as_ref()
            .map_or(Cell::Empty, |p| Cell::Flag(p.met))
    }),
    ("interval_basis", |r| {
        text(r.precision.as_ref().map(|p| p.basis.as_str()))
    }),
    ("interval_units", |r| {
        r.precision
            .as_ref()
            .map_or(Cell::Empty, |p| Cell::Whole(p.units as u64))
    }),
    ("min_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.min))
    }),
    ("p50_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.p50))
    }),
    ("p90_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.p90))
    }),
    ("p99_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.p99))
    }),
    ("p999_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.p999))
    }),
    ("max_ns", |r| {
        float(r.latency_ns.as_ref().and_then(|l| l.max))
    }),
    ("median_of", |r| {
        text(r.latency_ns.as_ref().map(|l| l.median_of.as_str()))
    }),
    ("percentiles_of", |r| {
        text(r.latency_ns.as_ref().map(|l| l.percentiles_of.as_str()))
    }),
    ("throughput_bytes_per_s", |r| {
        float(r.throughput_bytes_per_s)
    }),
    ("messages_per_s", |r| {
        float(r.stream.as_ref().and_then(|s| s.messages_per_s))
    }),
    ("ops_per_s", |r| {
        float(r.score.as_ref().map(|s| s.ops_per_s))
    }),
    ("relative_to_baseline", |r| {
        float(r.score.as_ref().and_then(|s| s.relative_to_baseline))
    }),
    ("passes", |r| {
        r.passes
            .as_ref()
            .map_or(Cell::Empty, |p| Cell::Whole(p.count as u64))
    }),
    ("cpus", |r| Cell::List(&r.cpus)),
    ("reason", |r| text(r.reason.as_deref())),
    ("error", |r| text(r.error.as_deref())),
];

/// The CSV of a run report's `results`: a header line, then a row per figure.
pub fn render(report: &RunRecord) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| e.to_string();
    w.write_record(COLUMNS.iter().map(|(name, _)| *name))
        .map_err(fail)?;
    for r in &report.results {
        let row: Vec<String> = COLUMNS.iter().map(|(_, cell)| cell(r).write()).collect();
        w.write_record(&row).map_err(fail)?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Status;
    use crate::record::run::tests::FIXTURES;

    /// Every mode's report gives the CSV the JSON reading of it gave
    /// (tests/reports/NAME.csv, written by that reading), byte for byte.
    #[test]
    fn every_modes_report_gives_its_csv() {
        let expected: &[(&str, &str)] = &[
            (
                "ipc-quick",
                include_str!("../../tests/reports/ipc-quick.csv"),
            ),
            ("op", include_str!("../../tests/reports/op.csv")),
            ("oneway", include_str!("../../tests/reports/oneway.csv")),
            ("event", include_str!("../../tests/reports/event.csv")),
            ("periodic", include_str!("../../tests/reports/periodic.csv")),
            ("passes", include_str!("../../tests/reports/passes.csv")),
            (
                "cost-model",
                include_str!("../../tests/reports/cost-model.csv"),
            ),
            ("load", include_str!("../../tests/reports/load.csv")),
            (
                "load-sweep",
                include_str!("../../tests/reports/load-sweep.csv"),
            ),
            ("score", include_str!("../../tests/reports/score.csv")),
            ("stream", include_str!("../../tests/reports/stream.csv")),
            ("rate", include_str!("../../tests/reports/rate.csv")),
            ("map", include_str!("../../tests/reports/map.csv")),
            (
                "explain-a",
                include_str!("../../tests/reports/explain-a.csv"),
            ),
            (
                "explain-b",
                include_str!("../../tests/reports/explain-b.csv"),
            ),
        ];
        assert_eq!(expected.len(), FIXTURES.len(), "a fixture has no CSV");
        for ((name, report), (csv_name, csv)) in FIXTURES.iter().zip(expected) {
            assert_eq!(name, csv_name);
            let record = RunRecord::parse(report).unwrap();
            assert_eq!(render(&record).unwrap(), *csv, "{name}");
        }
    }

    #[test]
    fn status_and_mode_cells_are_the_names_the_report_writes() {
        for s in [
            Status::Ok,
            Status::Skipped,
            Status::Failed,
            Status::BelowResolution,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        for (_, text) in FIXTURES {
            for r in RunRecord::parse(text).unwrap().results {
                assert_eq!(serde_json::to_value(r.mode).unwrap(), r.mode.name());
            }
        }
    }

    #[test]
    fn a_row_per_figure_with_numbers_in_full_and_blanks_for_absent_fields() {
        let (_, text) = FIXTURES.iter().find(|(n, _)| *n == "ipc-quick").unwrap();
        let mut report = RunRecord::parse(text).unwrap();
        report.results.truncate(2);
        let ok = &mut report.results[0];
        ok.cpus = vec![0, 1];
        let latency = ok.latency_ns.as_mut().unwrap();
        latency.median = 0.1 + 0.2;
        latency.p99 = None;
        let interval = &mut ok.precision.as_mut().unwrap().interval_ns;
        (interval.low, interval.high) = (1.0, 4.0);
        let skipped = &mut report.results[1];
        skipped.benchmark = "mq, \"posix\"".into();
        skipped.status = Status::Skipped;
        skipped.reason = Some("too big".into());
        (skipped.latency_ns, skipped.precision) = (None, None);

        let text = render(&report).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let headers = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let col = |row: &csv::StringRecord, name: &str| {
            row[headers.iter().position(|h| h == name).unwrap()].to_string()
        };
        assert_eq!(
            col(&rows[0], "median_ns").parse::<f64>().unwrap(),
            0.1 + 0.2
        );
        assert_eq!(col(&rows[0], "interval_half_width_ns"), "1.5");
        assert_eq!(col(&rows[0], "cpus"), "0 1");
        assert_eq!(col(&rows[0], "p99_ns"), "");
        assert_eq!(col(&rows[1], "benchmark"), "mq, \"posix\"");
        assert_eq!(col(&rows[1], "status"), "skipped");
        assert_eq!(col(&rows[1], "reason"), "too big");
        assert_eq!(col(&rows[1], "median_ns"), "");
        assert_eq!(col(&rows[1], "interval_half_width_ns"), "");
    }
}
