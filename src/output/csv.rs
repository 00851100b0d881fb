//! A run report as CSV, for a spreadsheet (`run --csv`, `export --format
//! csv`): one row per figure with the fields of the report's summary of it,
//! read from the report's JSON (`ipcmark.run/1`, written in `json/run.rs`),
//! so a run stored in the history exports as one just measured. Numbers are
//! written in full (Rust's shortest text that reads back to the same f64).

use serde_json::Value;

/// The columns: each a name and where its value is in a result record
/// (a JSON pointer). Times are ns, as in the JSON.
const COLUMNS: &[(&str, &str)] = &[
    ("benchmark", "/benchmark"),
    ("mode", "/mode"),
    ("size_bytes", "/size_bytes"),
    ("status", "/status"),
    ("pacing", "/pacing"),
    ("median_ns", "/latency_ns/median"),
    ("mean_ns", "/latency_ns/mean"),
    ("stddev_ns", "/latency_ns/stddev"),
    ("interval_low_ns", "/precision/interval_ns/low"),
    ("interval_high_ns", "/precision/interval_ns/high"),
    ("interval_half_width_ns", ""),
    ("precision_target", "/precision/target"),
    ("precision_achieved", "/precision/achieved"),
    ("precision_met", "/precision/met"),
    ("interval_basis", "/precision/basis"),
    ("interval_units", "/precision/units"),
    ("min_ns", "/latency_ns/min"),
    ("p50_ns", "/latency_ns/p50"),
    ("p90_ns", "/latency_ns/p90"),
    ("p99_ns", "/latency_ns/p99"),
    ("p999_ns", "/latency_ns/p999"),
    ("max_ns", "/latency_ns/max"),
    ("median_of", "/latency_ns/median_of"),
    ("percentiles_of", "/latency_ns/percentiles_of"),
    ("throughput_bytes_per_s", "/throughput_bytes_per_s"),
    ("messages_per_s", "/messages_per_s"),
    ("ops_per_s", "/score/ops_per_s"),
    ("relative_to_baseline", "/score/relative_to_baseline"),
    ("passes", "/passes/count"),
    ("cpus", "/cpus"),
    ("reason", "/reason"),
    ("error", "/error"),
];

/// A cell: text made safe for a spreadsheet (never a formula), a number in full, an array's items joined by ' ',
/// nothing for a missing or null value.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => super::sanitise::csv_cell(s),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (_, Some(i), _) => i.to_string(),
            (_, _, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| cell(Some(i)))
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => other.to_string(),
    }
}

/// Half the interval's width, ns.
fn half_width(r: &Value) -> String {
    let bound = |k| r.pointer(&format!("/precision/interval_ns/{k}"))?.as_f64();
    match (bound("low"), bound("high")) {
        (Some(lo), Some(hi)) => ((hi - lo) / 2.0).to_string(),
        _ => String::new(),
    }
}

/// The CSV of a run report's `results`: a header line, then a row per figure.
pub fn render(report: &Value) -> Result<String, String> {
    let results = report.get("results").and_then(Value::as_array).ok_or(
        "only a report of ipcmark run has figures to write as CSV (export a workload as JSON)",
    )?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| e.to_string();
    w.write_record(COLUMNS.iter().map(|(name, _)| *name))
        .map_err(fail)?;
    for r in results {
        let row: Vec<String> = COLUMNS
            .iter()
            .map(|(name, pointer)| match *name {
                "interval_half_width_ns" => half_width(r),
                _ => cell(r.pointer(pointer)),
            })
            .collect();
        w.write_record(&row).map_err(fail)?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_per_figure_with_numbers_in_full_and_blanks_for_absent_fields() {
        let report = json!({"results": [
            {"benchmark": "pipe", "mode": "pingpong", "size_bytes": 64, "status": "ok",
             "cpus": [0, 1], "latency_ns": {"median": 0.1 + 0.2, "p99": null},
             "precision": {"interval_ns": {"low": 1.0, "high": 4.0}}},
            {"benchmark": "mq, \"posix\"", "mode": "pingpong", "size_bytes": 8192,
             "status": "skipped", "reason": "too big"}
        ]});
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
        assert_eq!(col(&rows[1], "reason"), "too big");
        assert!(render(&json!({"configurations": []})).is_err());
    }
}
