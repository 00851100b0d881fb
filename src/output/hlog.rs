//! `--hdr DIR`: one HdrHistogram interval log per rate figure
//! (`<mechanism>-<size>.hlog`), in the text format of HdrHistogram's
//! `HistogramLogWriter`, so HdrHistogram's own tools
//! (`HistogramLogProcessor`, the log plotter) read it. Each point of the
//! figure is two intervals: `latency-r<round>-<rate>` (from the intended
//! send) and `service-r<round>-<rate>` (from the actual send), placed at
//! the time its schedule began; values are ns.

use crate::engine::models::rate::{RatePoint, rate_text};
use crate::engine::run::figure::FigureResult;
use crate::stats::decode_histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// Writes a log of `points` to `w`, `comments` in its header.
pub fn write_log(w: &mut impl Write, comments: &[String], points: &[RatePoint]) -> io::Result<()> {
    let first = points
        .iter()
        .map(|p| p.logged.start_unix_ns)
        .min()
        .unwrap_or(0);
    let start = UNIX_EPOCH + Duration::from_nanos(first);
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    for c in comments {
        builder.add_comment(c);
    }
    let mut log = builder
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(w, &mut serializer)?;
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    for p in points {
        let at = Duration::from_nanos(p.logged.start_unix_ns.saturating_sub(first));
        let span = Duration::from_nanos(p.logged.span_ns);
        for (what, encoded) in [
            ("latency", &p.logged.latency),
            ("service", &p.logged.service),
        ] {
            let h = decode_histogram(encoded).map_err(bad)?;
            let tag = format!("{what}-r{}-{}", p.round, rate_text(p.offered_rate));
            let tag = Tag::new(&tag).ok_or_else(|| bad(format!("a tag with a space: {tag}")))?;
            log.write_histogram(&h, at, span, Some(tag))
                .map_err(|e| io::Error::other(e.to_string()))?;
        }
    }
    Ok(())
}

/// The file a figure's log goes to in `dir`.
pub fn log_path(dir: &Path, id: &str, size: usize) -> PathBuf {
    dir.join(format!("{id}-{size}.hlog"))
}

/// Writes the log of every measured rate figure of `results` into `dir`
/// (created if need be): each written to a new file renamed over its name,
/// so a link planted there is replaced, never followed. The paths written.
pub fn write_dir(dir: &Path, results: &[FigureResult]) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for r in results {
        let Some(facts) = r.rate() else { continue };
        if facts.points.is_empty() {
            continue;
        }
        std::fs::create_dir_all(dir)?;
        let path = log_path(dir, r.id, r.size);
        let comments = [
            format!(
                "ipcmark rate figure: {} {} B, {} round(s)",
                r.id, r.size, facts.rounds
            ),
            "values in ns; latency-*: from the intended send, service-*: from the actual send"
                .to_string(),
        ];
        let mut text = Vec::new();
        write_log(&mut text, &comments, &facts.points)?;
        let tmp = dir.join(format!(
            ".{}-{}.hlog.{}.tmp",
            r.id,
            r.size,
            std::process::id()
        ));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let wrote = f.write_all(&text).and_then(|_| f.sync_all());
        drop(f);
        if let Err(e) = wrote.and_then(|_| std::fs::rename(&tmp, &path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::rate::{Logged, Quantiles};
    use crate::stats::LatencyHistogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    fn point(round: usize, rate: f64, n: u64) -> RatePoint {
        let mut lat = LatencyHistogram::new();
        let mut svc = LatencyHistogram::new();
        for v in 1..=n {
            lat.record(v * 1000);
            svc.record(v * 500);
        }
        RatePoint {
            round,
            offered_rate: rate,
            achieved_rate: rate,
            sent: n,
            received: n,
            lost: 0,
            late: 0,
            behind_max_ns: 0,
            latency_ns: Quantiles::default(),
            service_ns: Quantiles::default(),
            sender_cpu_ns: 0.0,
            receiver_cpu_ns: 0.0,
            verified: 4,
            clock_overhead_ns: 20.0,
            logged: Logged {
                start_unix_ns: 1_700_000_000_000_000_000 + round as u64 * 1_000_000_000,
                span_ns: 250_000_000,
                latency: lat.encode(),
                service: svc.encode(),
            },
        }
    }

    #[test]
    fn each_point_is_two_tagged_intervals_with_its_counts() {
        let points = [
            point(1, 1000.0, 300),
            point(1, 250e3, 700),
            point(2, 1000.0, 5),
        ];
        let mut out = Vec::new();
        write_log(&mut out, &["pipe 64 B".into()], &points).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with("#pipe 64 B\n"), "{text}");
        let mut got = Vec::new();
        for e in IntervalLogIterator::new(&out) {
            if let LogEntry::Interval(i) = e.unwrap() {
                got.push((
                    i.tag().unwrap().as_str().to_string(),
                    i.start_timestamp().as_secs(),
                ));
            }
        }
        let tags: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            tags,
            [
                "latency-r1-1k",
                "service-r1-1k",
                "latency-r1-250k",
                "service-r1-250k",
                "latency-r2-1k",
                "service-r2-1k"
            ]
        );
        // Round 2 began a second after round 1.
        assert_eq!(got[4].1, 1);
    }

    #[test]
    fn a_point_whose_histogram_is_not_one_is_an_error() {
        let mut p = point(1, 1000.0, 3);
        p.logged.latency = b"garbage".to_vec();
        assert!(write_log(&mut Vec::new(), &[], &[p]).is_err());
    }
}
