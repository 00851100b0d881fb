//! `ipcmark explain timer-latency`: the anatomy of a timer's wake-up
//! latency from a traced pass of wake-ups, its parts adding up to the traced
//! mean latency, and the tracefs instance gone afterwards. Tracing needs
//! root and tracefs: without them the traced test says why it is skipped.
//! No test asserts a time.

use crate::util::*;
use std::time::Duration;

#[test]
fn a_timers_wake_up_latency_is_explained_and_its_instance_removed() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("a_timers_wake_up_latency_is_explained_and_its_instance_removed")
    else {
        return;
    };
    let sb = Sandbox::new();
    let (text, report) = explained(
        &sb,
        &[
            "timer-latency",
            "--quick",
            "--round-trips",
            "300",
            "--tail",
            "8",
            "--no-save",
        ],
        "tail: the slowest 8 of 300 wake-ups",
    );
    assert!(text.contains("anatomy of a wake-up latency"), "{text}");
    assert!(!text.contains("one-way"), "{text}");
    let fig = &results(&report)[0];
    assert_eq!(fig["benchmark"], "timer-latency", "{fig}");
    let ex = &fig["explain"];
    assert_eq!(ex["kind"], "wake-up latency", "{ex}");
    assert_eq!(ex["method"], "full", "{ex}");
    assert_eq!(ex["round_trips"], 300, "{ex}");
    let parts = ex["parts"].as_array().expect("explain.parts");
    assert_eq!(parts.last().unwrap()["name"], "residual", "{ex}");
    // The timer interrupt was seen: its handler's part is there.
    assert!(
        parts
            .iter()
            .any(|p| p["name"] == "timer irq: handler to wake-up"),
        "{ex}"
    );
    // The parts' means add up to the traced mean latency.
    let sum: f64 = parts.iter().map(|p| p["mean_ns"].as_f64().unwrap()).sum();
    let mean = ex["traced_round_trip_ns"]["mean"].as_f64().unwrap();
    assert!((sum - mean).abs() <= 1e-6 * mean, "{sum} vs {mean}");
    // The untraced figure is the run's, over the same population.
    assert_eq!(
        ex["untraced_round_trip_ns"]["median"], fig["latency_ns"]["p50"],
        "{fig}"
    );
    assert!(ex["lost_events"].is_u64(), "{ex}");
    // The slowest wake-ups: each one's parts add up to it, its largest
    // excess names a culprit, and the signatures count every one.
    let tail = &ex["tail"];
    let slowest = tail["slowest"].as_array().expect("explain.tail.slowest");
    assert_eq!(slowest.len(), 8, "{tail}");
    for s in slowest {
        let parts = s["parts"].as_array().unwrap();
        let sum: f64 = parts.iter().map(|p| p["ns"].as_f64().unwrap()).sum();
        let total = s["round_trip_ns"].as_f64().unwrap();
        assert!((sum - total).abs() <= 1e-6 * total, "{sum} vs {total}");
        assert!(!parts[0]["culprit"].as_str().unwrap().is_empty(), "{s}");
    }
    let counted: u64 = tail["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 8, "{tail}");
}

#[test]
fn a_benchmark_whose_figures_are_not_wake_ups_is_bad_usage() {
    let sb = Sandbox::new();
    let out = sb.run(&["explain", "timer-irq-overhead"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("'timer-irq-overhead'"), "{err}");
    assert!(err.contains("wake-ups: timer-latency"), "{err}");
}

#[test]
fn sigint_during_the_traced_wake_ups_removes_the_instance() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("sigint_during_the_traced_wake_ups_removes_the_instance")
    else {
        return;
    };
    let sb = Sandbox::new();
    // 30 s of wake-ups at the default 1 ms period: the pass's bound.
    let child = sb
        .cmd(&[
            "explain",
            "timer-latency",
            "--quick",
            "--no-save",
            "--round-trips",
            "30000",
        ])
        .spawn()
        .expect("spawn ipcmark");
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(90), || instance_of(pid).is_some()),
        "no instance of {pid} within 90 s"
    );
    signal(pid, libc::SIGINT);
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert!(instance_of(pid).is_none(), "left {:?}", instances());
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
}
