//! `ipcmark run --mode rate`: each point's counts hold together, the rates
//! are those asked for, a channel that cannot queue is skipped with its
//! reason, udp counts what it lost, bad `--rates` exit 2. No test asserts a
//! time or that a channel saturates or drops anything.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// A rate run's deadline: a curve of two rates is a few seconds a figure,
/// its channel opened afresh for every point.
const LIMIT: Duration = Duration::from_secs(180);

/// The points of a measured rate figure, after checking its headline.
fn points<'a>(r: &'a Value, rates: &[f64]) -> &'a Vec<Value> {
    assert_eq!(r["mode"], "rate", "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    // The headline: the lowest rate's latencies from the intended send.
    assert_latency_in_order(r["benchmark"].as_str().unwrap(), &r["latency_ns"]);
    let c = &r["rate_curve"];
    let rounds = u(c, "rounds") as usize;
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), rates.len() * rounds, "{c}");
    for (k, p) in points.iter().enumerate() {
        assert_eq!(u(p, "round") as usize, k / rates.len() + 1, "{p}");
        assert_eq!(
            p["offered_rate"].as_f64(),
            Some(rates[k % rates.len()]),
            "{p}"
        );
        assert_eq!(u(p, "received") + u(p, "lost"), u(p, "sent"), "{p}");
        assert!(u(p, "verified") > 0, "{p}");
        for q in ["latency_ns", "service_ns"] {
            let (p50, p99, max) = (
                p[q]["p50"].as_f64().unwrap(),
                p[q]["p99"].as_f64().unwrap(),
                p[q]["max"].as_f64().unwrap(),
            );
            assert!(p50 <= p99 && p99 <= max, "{q}: {p}");
        }
    }
    points
}

/// Each interval of an HdrHistogram interval log, read by the hdrhistogram
/// crate's own log reader: its tag and how many values it holds.
fn hdr_counts(log: &[u8]) -> Vec<(String, u64)> {
    use base64::Engine;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(log) {
        if let LogEntry::Interval(i) = entry.expect("a log line") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(i.encoded_histogram())
                .expect("base64");
            let h: hdrhistogram::Histogram<u64> = Deserializer::new()
                .deserialize(&mut &bytes[..])
                .expect("a histogram");
            out.push((i.tag().expect("a tag").as_str().to_string(), h.len()));
        }
    }
    out
}

#[test]
fn a_curve_has_every_rate_asked_for_in_every_round_and_every_message() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(
        &sb,
        &[
            "run",
            "pipe",
            "unix-stream",
            "--mode",
            "rate",
            "--rates",
            "2k,20k",
        ],
    )
    .args(&["--hdr", sb.path("hdr").to_str().unwrap()])
    .quick()
    .no_save()
    .json()
    .schema()
    .limit(LIMIT)
    .ok();
    ran.assert_released(&sb);
    let results = results(&ran.report);
    assert_eq!(results.len(), 2, "{}", ran.stdout);
    for r in results {
        let log = sb
            .path("hdr")
            .join(format!("{}-64.hlog", r["benchmark"].as_str().unwrap()));
        let logged = hdr_counts(&std::fs::read(&log).unwrap());
        let points = points(r, &[2000.0, 20_000.0]);
        assert_eq!(logged.len(), 2 * points.len(), "{logged:?}");
        for p in points {
            // Neither channel may lose a message.
            assert_eq!(u(p, "received"), u(p, "sent"), "{p}");
            assert_eq!(u(p, "lost"), 0, "{p}");
            // The log holds every message of the point, twice.
            let rate = if p["offered_rate"] == 2000.0 {
                "2k"
            } else {
                "20k"
            };
            for what in ["latency", "service"] {
                let tag = format!("{what}-r{}-{rate}", u(p, "round"));
                let count = logged.iter().find(|(t, _)| *t == tag).map(|(_, c)| *c);
                assert_eq!(count, Some(u(p, "received")), "{tag}: {logged:?}");
            }
        }
        assert_eq!(r["rate_curve"]["lossy"], false, "{r}");
    }
    for head in ["knee", "saturation", "offered", "achieved", "p99.9 µs"] {
        assert!(ran.stdout.contains(head), "{head}: {}", ran.stdout);
    }
}

#[test]
fn a_channel_that_cannot_queue_or_a_message_too_small_is_skipped_with_its_reason() {
    let _g = serial();
    let sb = Sandbox::new();
    // A mechanism with a peer that cannot stream: one message at a time.
    let one_at_a_time = group("ipc")
        .into_iter()
        .find(|m| m["stream"].is_null() && m["self_loop"] == false && m["unavailable"].is_null())
        .expect("a mechanism that cannot queue messages");
    let id = one_at_a_time["id"].as_str().unwrap();
    let ran = Run::new(&sb, &["run", id, "pipe", "--mode", "rate", "--rates", "2k"])
        .sizes("4")
        .quick()
        .no_save()
        .json()
        .schema()
        .ok();
    let results = results(&ran.report);
    assert_eq!(results.len(), 2, "{}", ran.stdout);
    for r in results {
        assert_eq!(r["status"], "skipped", "{r}");
        assert!(r.get("rate_curve").is_none(), "{r}");
    }
    let reason = |k: usize| results[k]["reason"].as_str().unwrap();
    assert!(
        reason(0).contains("cannot be offered a rate"),
        "{}",
        reason(0)
    );
    assert!(
        reason(1).contains("cannot carry the 8-byte sequence number"),
        "{}",
        reason(1)
    );
}

#[test]
fn udp_past_its_rate_counts_what_it_lost() {
    let _g = serial();
    let sb = Sandbox::new();
    // 2M msg/s is beyond what udp keeps up with on such a machine; whether
    // the kernel drops anything is its own affair: only the counts are checked.
    let ran = Run::new(&sb, &["run", "udp", "--mode", "rate", "--rates", "1k,2M"])
        .args(&["--passes", "1"])
        .quick()
        .no_save()
        .json()
        .schema()
        .limit(LIMIT)
        .ok();
    ran.assert_released(&sb);
    let r = &results(&ran.report)[0];
    assert_eq!(r["rate_curve"]["lossy"], true, "{r}");
    let lost: u64 = points(r, &[1000.0, 2e6]).iter().map(|p| u(p, "lost")).sum();
    // A loss is said on the page, none is not.
    assert_eq!(
        ran.stdout.contains("udp 64: lost "),
        lost > 0,
        "{}",
        ran.stdout
    );
}

#[test]
fn bad_rates_are_refused_with_one_line() {
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "pipe", "--mode", "rate", "--rates", "0", "--json", j],
            &["rate '0' is out of range", "at most 16.384M"],
        ),
        (
            &[
                "run", "pipe", "--mode", "rate", "--rates", "abc", "--json", j,
            ],
            &["invalid rate 'abc'", "e.g. 1k,10k,250k,1.5M"],
        ),
        (
            &[
                "run", "pipe", "--mode", "rate", "--rates", "20M", "--json", j,
            ],
            &["rate '20M' is out of range"],
        ),
        (
            &["run", "pipe", "--rates", "1k", "--json", j],
            &["--rates applies to --mode rate only"],
        ),
        (
            &[
                "run", "pipe", "--mode", "stream", "--rates", "1k", "--json", j,
            ],
            &["(mode is stream)"],
        ),
        (
            &["run", "syscall-getpid", "--mode", "rate", "--json", j],
            &["'syscall-getpid' is a single-process benchmark"],
        ),
        (
            &["run", "pipe", "--hdr", "logs", "--json", j],
            &["--hdr writes the interval logs of mode rate"],
        ),
    ];
    refused_all(&sb, cases, Some(&json));
}
