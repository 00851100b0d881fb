//! What the HTML report reads of a run report (`ipcmark.run/1`, read as a
//! [`RunRecord`]): each result as a [`Figure`], and the figures grouped into
//! series (one mechanism, one way of timing it) the charts draw.

use crate::output::table::format_size;
use crate::record::key::FigureKey;
use crate::record::run::Latency;
use crate::record::{FigureRecord, Mode, RunRecord, Status};
use std::collections::BTreeSet;

/// One result of a run report.
pub struct Figure<'a> {
    raw: &'a FigureRecord,
    /// Mechanism or benchmark id.
    pub benchmark: &'a str,
    /// How it was timed.
    pub mode: Mode,
    /// The figure's identity, as the history and `compare` know it.
    pub key: FigureKey,
    /// The name of the series the figure belongs to (its key less its
    /// size): its benchmark and how it was timed.
    pub series: String,
    /// Payload bytes (op: bytes one operation moves).
    pub size: usize,
    /// How it ended.
    pub status: Status,
}

impl<'a> Figure<'a> {
    /// Reads one element of `results`.
    pub fn read(raw: &'a FigureRecord) -> Figure<'a> {
        let key = raw.key();
        let mut series = raw.benchmark.clone();
        if raw.mode == Mode::OneWay {
            match key.interval_ns {
                Some(ns) => series.push_str(&format!(" (one-way, every {})", duration(ns as f64))),
                None => series.push_str(" (one-way)"),
            }
        }
        // A periodic benchmark makes one figure per frequency (timer-failures).
        if let Some(p) = &raw.periodic {
            series.push_str(&format!(" ({} Hz)", sig3(p.frequency_hz)));
        }
        if key.cold {
            series.push_str(" (cold)");
        }
        Figure {
            raw,
            key,
            benchmark: &raw.benchmark,
            mode: raw.mode,
            series,
            size: raw.size_bytes,
            status: raw.status,
        }
    }

    /// Whether the figure was measured and has a value.
    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// Whether the figure is a cold one (its cost model is the cold one).
    pub fn cold(&self) -> bool {
        self.raw.cold_region_bytes.is_some()
    }

    /// The status as the report writes it (`below_resolution`).
    pub fn status_name(&self) -> &'static str {
        self.status.name()
    }

    /// The figure's latency statistics (ns), when it is ok and has them.
    pub fn latency(&self) -> Option<&'a Latency> {
        self.raw.latency_ns.as_ref().filter(|_| self.ok())
    }

    /// The headline time (ns): the median latency, or for a stream the median
    /// time per message.
    pub fn median_ns(&self) -> Option<f64> {
        if !self.ok() {
            return None;
        }
        if self.mode == Mode::Stream {
            let mut v = self.raw.samples_ns.clone()?;
            if v.is_empty() {
                return None;
            }
            v.sort_by(f64::total_cmp);
            return Some(crate::stats::median(&v));
        }
        self.latency().map(|l| l.median)
    }

    /// The 95% interval of the figure's level (`precision.interval_ns`), ns.
    pub fn interval_ns(&self) -> Option<(f64, f64)> {
        let i = &self.raw.precision.as_ref()?.interval_ns;
        Some((i.low, i.high))
    }

    /// Bytes per second (stream).
    pub fn throughput(&self) -> Option<f64> {
        self.raw.throughput_bytes_per_s.filter(|_| self.ok())
    }

    /// Operations per second of a score figure.
    pub fn score_ops_per_s(&self) -> Option<f64> {
        Some(self.raw.score.as_ref()?.ops_per_s)
    }

    /// R = S / H of a score figure, against the run's baseline.
    pub fn score_relative(&self) -> Option<f64> {
        self.raw.score.as_ref()?.relative_to_baseline
    }

    /// How many single times the percentiles are over, when the report says:
    /// round trips, operations, messages received or wake-ups timed.
    pub fn population(&self) -> Option<f64> {
        let r = self.raw;
        r.timed_round_trips
            .or(r.timed_ops)
            .or(r.oneway.as_ref().map(|o| o.messages_received))
            .or(r.periodic.as_ref().and_then(|p| p.wakeups))
            .map(|n| n as f64)
    }

    /// What the percentiles are over (`single round trips`, …).
    pub fn percentiles_of(&self) -> String {
        self.raw
            .latency_ns
            .as_ref()
            .map_or(String::new(), |l| l.percentiles_of.replace('_', " "))
    }

    /// Why the figure has no value: its reason or error.
    pub fn why(&self) -> &'a str {
        self.raw
            .reason
            .as_deref()
            .or(self.raw.error.as_deref())
            .unwrap_or("")
    }

    /// The figure's name in a table: its series and size.
    pub fn name(&self) -> String {
        match (self.size, self.mode) {
            // An operation that moves no bytes has no size to name; a message
            // of none is a notification.
            (0, m) if m != Mode::PingPong && m != Mode::OneWay => self.series.clone(),
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
pub fn figures(report: &RunRecord) -> Vec<Figure<'_>> {
    report.results.iter().map(Figure::read).collect()
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
pub fn series<'f, 'a>(figures: &'f [Figure<'a>], modes: &[Mode]) -> Vec<Series<'f, 'a>> {
    let mut out: Vec<Series> = Vec::new();
    for f in figures.iter().filter(|f| modes.contains(&f.mode)) {
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
    use super::super::tests::{latency, result};
    use super::*;
    use serde_json::json;

    #[test]
    fn series_tell_cold_and_one_way_figures_apart() {
        let results = [
            json!({"benchmark": "pipe", "mode": "pingpong", "size_bytes": 8, "status": "ok"}),
            json!({"benchmark": "pipe", "mode": "pingpong", "size_bytes": 8, "status": "ok",
             "cold_region_bytes": 1024}),
            json!({"benchmark": "pipe", "mode": "oneway", "size_bytes": 64, "status": "ok",
             "pacing": "sporadic", "interval_ns": 1000000, "messages_sent": 10,
             "messages_received": 10, "gaps": 0, "window": 10, "windows": [], "mean_ns": 1.0,
             "time_bounded": false, "sender_timer_slack_ns": 1,
             "sender_sched_policy": "SCHED_OTHER"}),
            json!({"benchmark": "pipe", "mode": "pingpong", "size_bytes": 64, "status": "failed"}),
            json!({"benchmark": "timer-failures", "mode": "periodic", "size_bytes": 0,
             "status": "ok", "period_ns": 4000000, "frequency_hz": 250.0, "duration_ms": 1.0,
             "timer_slack_ns": 1, "sched_policy": "SCHED_OTHER"}),
        ]
        .map(result);
        let figs: Vec<Figure> = results.iter().map(Figure::read).collect();
        let names: Vec<String> = series(&figs, &[Mode::PingPong, Mode::OneWay])
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(
            names,
            ["pipe", "pipe (cold)", "pipe (one-way, every 1.00 ms)"]
        );
        assert_eq!(
            series(&figs, &[Mode::Periodic])[0].name,
            "timer-failures (250 Hz)"
        );
        let all = series(&figs, &[Mode::PingPong]);
        assert!(all[0].swept());
        assert!(!all[1].swept());
    }

    #[test]
    fn a_figure_without_a_value_has_no_median() {
        let below = result(json!({"benchmark": "x", "mode": "op", "size_bytes": 0,
            "status": "below_resolution", "reason": "median at or below zero",
            "latency_ns": latency(-3.0, json!({}))}));
        let f = Figure::read(&below);
        assert_eq!(f.median_ns(), None);
        assert!(f.latency().is_none());
        assert_eq!(f.why(), "median at or below zero");
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
