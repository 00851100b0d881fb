//! `ipcmark explain` of op-mode benchmarks: the anatomy of one operation
//! from a traced pass (a system call named, the parts adding up to the
//! traced mean operation), and the benchmarks with no operation to cut
//! refused as bad usage. Tracing needs root and tracefs: without them the
//! traced test says why it is skipped. No test asserts a time.

use crate::util::*;
use std::time::Duration;

#[test]
fn a_system_call_and_a_switch_are_explained_per_operation() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("a_system_call_and_a_switch_are_explained_per_operation")
    else {
        return;
    };
    let sb = Sandbox::new();
    let (text, report) = explained(
        &sb,
        &[
            "syscall-getpid",
            "sched-yield",
            "--quick",
            "--passes",
            "1",
            "--no-save",
            "--round-trips",
            "500",
        ],
        "anatomy of an operation",
    );
    assert!(!text.contains("one-way"), "{text}");
    let figures = results(&report);
    assert_eq!(figures.len(), 2, "{report}");
    for fig in figures {
        let ex = &fig["explain"];
        assert_eq!(ex["kind"], "operation", "{ex}");
        assert_eq!(ex["method"], "full", "{ex}");
        let parts = ex["parts"].as_array().expect("explain.parts");
        assert!(parts.iter().any(|p| p["name"] == "residual"), "{ex}");
        // The parts' means add up to the traced mean operation.
        let sum: f64 = parts.iter().map(|p| p["mean_ns"].as_f64().unwrap()).sum();
        let mean = ex["traced_round_trip_ns"]["mean"].as_f64().unwrap();
        assert!(mean > 0.0, "{ex}");
        assert!((sum - mean).abs() <= 1e-6 * mean, "{sum} vs {mean}");
        assert!(ex["untraced_round_trip_ns"]["median"].as_f64().unwrap() > 0.0);
        assert!(ex["lost_events"].is_u64(), "{ex}");
        let named = |n: &str| parts.iter().any(|p| p["name"] == n);
        match fig["benchmark"].as_str() {
            Some("syscall-getpid") => assert!(named("getpid"), "{ex}"),
            // The yield is the measuring thread's call, and the other
            // thread's turn is the switch it makes.
            Some("sched-yield") => {
                assert!(named("sched_yield"), "{ex}");
                assert!(
                    parts.iter().any(|p| p["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("switched out: other thread"))),
                    "{ex}"
                );
            }
            other => panic!("unexpected figure {other:?}"),
        }
    }
}

#[test]
fn a_benchmark_without_an_operation_to_cut_is_bad_usage() {
    let sb = Sandbox::new();
    for (name, why) in [
        ("timer-irq-overhead", "periodic"),
        ("thread-metric-basic", "scored"),
        ("rhealstone-interrupt-latency", "time their own events"),
        ("syscall", "a group"),
    ] {
        let out = sb.run(&["explain", name], Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(why), "{name}: {err}");
        assert!(err.contains("syscall-getpid"), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    }
}
