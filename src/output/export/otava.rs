//! The history as Apache Otava (formerly DataStax Hunter,
//! <https://otava.apache.org>) reads it from a CSV file (its `csv` test
//! type): one row per run, oldest first — its start (`time`, in the
//! `YYYY-MM-DD HH:MM:SS +0000` form Otava's own examples use), its id in
//! the history (`run`), the commit of the build that measured it
//! (`commit`) and the names given to it with `history --tag` (`tag`) — and
//! one column per figure, its centre in ns, named by the figure's identity.
//!
//! Otava's CSV reader needs a number in every cell, so the columns are the
//! figures the newest run measured, and a run that lacks one of them is
//! left out (the caller says how many; `watch NAME…` and `--since` narrow
//! the table). [`config`] is the YAML that reads the file: the `csv` test
//! with `time_column`, `attributes` and each figure a metric whose
//! `direction` is −1 (a latency: lower is better).

use crate::output::sanitise;
use std::path::{Path, PathBuf};

/// One run of the history, as the table holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Its id in the history.
    pub id: i64,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// The commit of the build that measured it, where known.
    pub commit: Option<String>,
    /// Names given to it with `history --tag`.
    pub tags: Vec<String>,
    /// Each figure it measured: its identity (`pipe/pingpong/64`) and its
    /// centre, ns; the newest run's order is the columns'.
    pub values: Vec<(String, f64)>,
}

/// The CSV and what went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The file's text.
    pub csv: String,
    /// The figures' columns, as the header names them (Otava's metrics).
    pub metrics: Vec<String>,
    /// Rows written.
    pub rows: usize,
    /// Runs left out: lacking one of the columns' figures, or with a start
    /// that does not read as a time.
    pub runs_left_out: usize,
    /// Figures some run measured that the newest did not: no column.
    pub figures_left_out: usize,
}

/// The name of the test [`config`] defines.
pub const TEST: &str = "ipcmark";

/// The columns before the figures'.
const ATTRIBUTES: [&str; 3] = ["run", "commit", "tag"];

/// A run's start as Otava's examples write a time; none when it does not
/// read as RFC 3339.
fn otava_time(started_at: &str) -> Option<String> {
    let t: jiff::Timestamp = started_at.parse().ok()?;
    Some(t.strftime("%Y-%m-%d %H:%M:%S +0000").to_string())
}

/// The table of `runs` (oldest first).
pub fn render(runs: &[Run]) -> Table {
    let columns: Vec<&str> = runs.last().map_or(Vec::new(), |newest| {
        let mut seen = std::collections::HashSet::new();
        newest
            .values
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| seen.insert(*k))
            .collect()
    });
    let figures_left_out = runs
        .iter()
        .flat_map(|r| r.values.iter().map(|(k, _)| k.as_str()))
        .filter(|k| !columns.contains(k))
        .collect::<std::collections::HashSet<_>>()
        .len();
    let metrics: Vec<String> = columns.iter().map(|c| sanitise::csv_cell(c)).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["time".to_string()];
    header.extend(ATTRIBUTES.iter().map(|a| a.to_string()));
    header.extend(metrics.iter().cloned());
    let mut rows = 0;
    let mut left_out = 0;
    let mut records = vec![header];
    for run in runs {
        let value = |column: &str| run.values.iter().find(|(k, _)| k == column).map(|v| v.1);
        let values: Option<Vec<f64>> = columns.iter().map(|c| value(c)).collect();
        let (Some(time), Some(values)) = (otava_time(&run.started_at), values) else {
            left_out += 1;
            continue;
        };
        let mut row = vec![
            time,
            run.id.to_string(),
            sanitise::csv_cell(run.commit.as_deref().unwrap_or("")),
            sanitise::csv_cell(&run.tags.join(" ")),
        ];
        row.extend(values.iter().map(|v| v.to_string()));
        records.push(row);
        rows += 1;
    }
    for r in &records {
        w.write_record(r).expect("writing to memory cannot fail");
    }
    let bytes = w.into_inner().expect("writing to memory cannot fail");
    Table {
        csv: String::from_utf8(bytes).expect("the cells are UTF-8"),
        metrics,
        rows,
        runs_left_out: left_out,
        figures_left_out,
    }
}

/// `s` as a YAML double-quoted scalar.
fn quoted(s: &str) -> String {
    format!(
        "\"{}\"",
        sanitise::text(s).replace('\\', "\\\\").replace('"', "\\\"")
    )
}

/// The Otava configuration that reads the CSV at `csv_path` with `metrics`
/// (the [`Table`]'s) as the test [`TEST`].
pub fn config(csv_path: &str, metrics: &[String]) -> String {
    let mut y = String::from(
        "# Apache Otava's configuration of the CSV `ipcmark watch --export-otava` wrote:\n\
         #   OTAVA_CONFIG=THIS_FILE otava analyze ipcmark\n\
         # One row per run, one metric per figure (its centre, ns; lower is better).\n\
         tests:\n",
    );
    y.push_str(&format!("  {TEST}:\n    type: csv\n"));
    y.push_str(&format!("    file: {}\n", quoted(csv_path)));
    y.push_str("    time_column: time\n");
    y.push_str(&format!(
        "    attributes: [{}]\n",
        ATTRIBUTES
            .iter()
            .map(|a| quoted(a))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    y.push_str("    csv_options:\n      delimiter: \",\"\n      quote_char: '\"'\n");
    if metrics.is_empty() {
        y.push_str("    metrics: {}\n");
    } else {
        y.push_str("    metrics:\n");
        for m in metrics {
            let q = quoted(m);
            y.push_str(&format!(
                "      {q}:\n        column: {q}\n        direction: -1\n        scale: 1\n"
            ));
        }
    }
    y
}

/// Where the configuration of the CSV at `csv` goes: beside it, its
/// extension replaced by `otava.yaml` (`history.csv` → `history.otava.yaml`),
/// never the CSV's own path.
pub fn config_path(csv: &Path) -> PathBuf {
    csv.with_extension("otava.yaml")
}
