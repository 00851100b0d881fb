//! What the HTML report reads of a run report (`ipcmark.run/1`, as
//! `json/run.rs` writes it): each result as a [`Figure`], and the figures
//! grouped into series (one mechanism, one way of timing it) the charts draw.
//!
//! It reads the report as a `serde_json::Value`, field by field, so a result
//! of a mode it does not know is still listed with its status (the schema
//! says a reader should skip what it does not know, not fail).

use crate::output::table::format_size;
use crate::record::key::FigureKey;
use serde_json::Value;
use std::collections::BTreeSet;

/// One result of a run report.
pub struct Figure<'a> {
    raw: &'a Value,
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// `pingpong`, `op`, `stream`, …
    pub mode: String,
    /// The figure's identity, as the history and `compare` know it.
    pub key: FigureKey,
    /// The name of the series the figure belongs to (its key less its
    /// size): its benchmark and how it was timed.
    pub series: String,
    /// Payload bytes (op: bytes one operation moves).
    pub size: usize,
    /// `ok`, `skipped`, `failed`, `below_resolution`.
    pub status: String,
}

impl<'a> Figure<'a> {
    /// Reads one element of `results`.
    pub fn read(raw: &'a Value) -> Figure<'a> {
        let text = |k: &str| raw[k].as_str().unwrap_or("").to_string();
        let key = FigureKey::of_result(raw);
        let (benchmark, mode) = (key.benchmark.clone(), key.mode.clone());
        let mut series = benchmark.clone();
        if mode == "oneway" {
            match key.interval_ns {
                Some(ns) => series.push_str(&format!(" (one-way, every {})", duration(ns as f64))),
                None => series.push_str(" (one-way)"),
            }
        }
        // A periodic benchmark makes one figure per frequency (timer-failures).
        if let Some(hz) = raw["frequency_hz"]
            .as_f64()
            .filter(|_| key.frequency_hz.is_some())
        {
            series.push_str(&format!(" ({} Hz)", sig3(hz)));
        }
        if key.cold {
            series.push_str(" (cold)");
        }
        Figure {
            raw,
            key,
            benchmark,
            mode,
            series,
            size: raw["size_bytes"].as_u64().unwrap_or(0) as usize,
            status: text("status"),
        }
    }

    /// Whether the figure was measured and has a value.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// Whether the figure is a cold one (its cost model is the cold one).
    pub fn cold(&self) -> bool {
        !self.raw["cold_region_bytes"].is_null()
    }

    /// A field of `latency_ns` (ns), when the figure is ok and has it.
    pub fn latency(&self, key: &str) -> Option<f64> {
        if !self.ok() {
            return None;
        }
        self.raw["latency_ns"][key].as_f64()
    }

    /// The headline time (ns): the median latency, or for a stream the median
    /// time per message.
    pub fn median_ns(&self) -> Option<f64> {
        if !self.ok() {
            return None;
        }
        if self.mode == "stream" {
            let mut v: Vec<f64> = self.raw["samples_ns"]
                .as_array()?
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            if v.is_empty() {
                return None;
            }
            v.sort_by(f64::total_cmp);
            return Some(crate::stats::median(&v));
        }
        self.latency("median")
    }

    /// The 95% interval of the figure's level (`precision.interval_ns`), ns.
    pub fn interval_ns(&self) -> Option<(f64, f64)> {
        let i = &self.raw["precision"]["interval_ns"];
        Some((i["low"].as_f64()?, i["high"].as_f64()?))
    }

    /// Bytes per second (stream).
    pub fn throughput(&self) -> Option<f64> {
        if !self.ok() {
            return None;
        }
        self.raw["throughput_bytes_per_s"].as_f64()
    }

    /// Operations per second of a score figure.
    pub fn score_ops_per_s(&self) -> Option<f64> {
        self.raw["score"]["ops_per_s"].as_f64()
    }

    /// R = S / H of a score figure, against the run's baseline.
    pub fn score_relative(&self) -> Option<f64> {
        self.raw["score"]["relative_to_baseline"].as_f64()
    }

    /// How many single times the percentiles are over, when the report says.
    pub fn population(&self) -> Option<f64> {
        [
            "timed_round_trips",
            "timed_ops",
            "messages_received",
            "wakeups",
        ]
        .iter()
        .find_map(|k| self.raw[k].as_f64())
    }

    /// What the percentiles are over (`single_round_trips`, …).
    pub fn percentiles_of(&self) -> String {
        self.raw["latency_ns"]["percentiles_of"]
            .as_str()
            .unwrap_or("")
            .replace('_', " ")
    }

    /// Why the figure has no value: its reason, error or status note.
    pub fn why(&self) -> String {
        ["reason", "error"]
            .iter()
            .find_map(|k| self.raw[k].as_str())
            .unwrap_or("")
            .to_string()
    }

    /// The figure's name in a table: its series and size.
    pub fn name(&self) -> String {
        match (self.size, self.mode.as_str()) {
            // An operation that moves no bytes has no size to name; a message
            // of none is a notification.
            (0, m) if m != "pingpong" && m != "oneway" => self.series.clone(),
            (size, _) => format!("{} {}", self.series, size_label(size)),
        }
    }
}

/// A timestamp of a report (RFC 3339, UTC) as the page shows it: to the
/// second, `2026-11-24 03:53:46 UTC`.
pub fn timestamp(t: &str) -> String {
    match (t.get(..19), t.ends_with('Z')) {
        (Some(head), true) if t.as_bytes().get(10) == Some(&b'T') => {
            format!("{} UTC", head.replacen('T', " ", 1))
        }
        _ => t.to_string(),
    }
}

/// A size as a table shows it: bytes with K or M, or "notify" for none.
pub fn size_label(bytes: usize) -> String {
    match bytes {
        0 => "notify".into(),
        n => format_size(n),
    }
}

/// A duration given in ns, in the unit that reads best.
pub fn duration(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{} s", sig3(n / 1e9)),
        n if n >= 1e6 => format!("{} ms", sig3(n / 1e6)),
        n if n >= 1e3 => format!("{} µs", sig3(n / 1e3)),
        n => format!("{} ns", sig3(n)),
    }
}

/// A value with three significant digits (fewer decimals as it grows).
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Every result of a run report, in run order.
pub fn figures(report: &Value) -> Vec<Figure<'_>> {
    report["results"]
        .as_array()
        .map(|r| r.iter().map(Figure::read).collect())
        .unwrap_or_default()
}

/// A series: the figures of one mechanism timed one way, in size order.
pub struct Series<'f, 'a> {
    /// The figures' series name.
    pub name: String,
    /// What the series is: its figures' key less the size.
    pub key: FigureKey,
    /// Its figures, smallest size first.
    pub figures: Vec<&'f Figure<'a>>,
}

impl Series<'_, '_> {
    /// Whether the series was measured at two sizes or more (a sweep).
    pub fn swept(&self) -> bool {
        self.figures
            .iter()
            .map(|f| f.size)
            .collect::<BTreeSet<_>>()
            .len()
            >= 2
    }
}

/// The figures of the given modes grouped into series, in the order each
/// series first appears.
pub fn series<'f, 'a>(figures: &'f [Figure<'a>], modes: &[&str]) -> Vec<Series<'f, 'a>> {
    let mut out: Vec<Series> = Vec::new();
    for f in figures.iter().filter(|f| modes.contains(&f.mode.as_str())) {
        let key = f.key.series();
        match out.iter_mut().find(|s| s.key == key) {
            Some(s) => s.figures.push(f),
            None => out.push(Series {
                name: f.series.clone(),
                key,
                figures: vec![f],
            }),
        }
    }
    for s in &mut out {
        s.figures.sort_by_key(|f| f.size);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn series_tell_cold_and_one_way_figures_apart() {
        let report = json!({"results": [
            {"benchmark": "pipe", "mode": "pingpong", "size_bytes": 8, "status": "ok"},
            {"benchmark": "pipe", "mode": "pingpong", "size_bytes": 8, "status": "ok",
             "cold_region_bytes": 1024},
            {"benchmark": "pipe", "mode": "oneway", "size_bytes": 64, "status": "ok",
             "interval_ns": 1e6},
            {"benchmark": "pipe", "mode": "pingpong", "size_bytes": 64, "status": "failed"},
            {"benchmark": "timer-failures", "mode": "periodic", "size_bytes": 0, "status": "ok",
             "frequency_hz": 250.0},
        ]});
        let figs = figures(&report);
        let names: Vec<String> = series(&figs, &["pingpong", "oneway"])
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(
            names,
            ["pipe", "pipe (cold)", "pipe (one-way, every 1.00 ms)"]
        );
        assert_eq!(
            series(&figs, &["periodic"])[0].name,
            "timer-failures (250 Hz)"
        );
        let all = series(&figs, &["pingpong"]);
        assert!(all[0].swept());
        assert!(!all[1].swept());
    }

    #[test]
    fn a_figure_without_a_value_has_no_median() {
        let report = json!({"results": [
            {"benchmark": "x", "mode": "op", "size_bytes": 0, "status": "below_resolution",
             "reason": "median at or below zero", "latency_ns": {"median": -3.0}},
        ]});
        let figs = figures(&report);
        assert_eq!(figs[0].median_ns(), None);
        assert_eq!(figs[0].why(), "median at or below zero");
    }

    #[test]
    fn three_significant_digits() {
        assert_eq!(sig3(123.456), "123");
        assert_eq!(sig3(12.345), "12.3");
        assert_eq!(sig3(1.2345), "1.23");
        assert_eq!(sig3(0.12345), "0.123");
        assert_eq!(duration(2.5e6), "2.50 ms");
        assert_eq!(
            timestamp("2026-11-24T03:53:46.872551131Z"),
            "2026-11-24 03:53:46 UTC"
        );
        assert_eq!(timestamp("yesterday"), "yesterday");
    }
}
