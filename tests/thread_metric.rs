//! The thread-metric group (mode `score`): every test runs in a shortened
//! form and reports a score whose parts add up, checks that held, and R
//! against the baseline; an unfair schedule fails the cooperative test's
//! check; bad values exit 2; a stop request ends a long run; nothing is left
//! behind. No test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

const IDS: [&str; 8] = [
    "thread-metric-basic",
    "thread-metric-cooperative",
    "thread-metric-preemptive",
    "thread-metric-interrupt",
    "thread-metric-interrupt-preemption",
    "thread-metric-message",
    "thread-metric-synchronization",
    "thread-metric-memory",
];

/// The tests that mean nothing without strict priorities.
const NEED_FIFO: [&str; 3] = [
    "thread-metric-cooperative",
    "thread-metric-preemptive",
    "thread-metric-interrupt-preemption",
];

/// Runs `ipcmark run ARGS --json` to success, leaving nothing behind; the report.
fn run_ok(sb: &Sandbox, args: &[&str], limit: Duration) -> Value {
    let ran = Run::new(sb, &["run"])
        .args(args)
        .json()
        .schema()
        .limit(limit)
        .ok();
    assert!(
        objects_of(ran.pid).is_empty(),
        "left {:?}",
        objects_of(ran.pid)
    );
    ran.report
}

fn counters(r: &Value) -> Vec<u64> {
    r["score"]["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| uint(&c["value"]))
        .collect()
}

/// The score's parts add up: intervals to the score, intervals' lengths to
/// the elapsed time, samples to interval length ÷ operations; the scored
/// counters to the score.
fn assert_consistent(r: &Value) {
    let id = r["benchmark"].as_str().unwrap();
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["mode"], "score", "{id}");
    assert!(
        r["latency_ns"].is_null(),
        "{id}: no single operation is timed"
    );
    let s = &r["score"];
    let ops: Vec<u64> = s["interval_operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(uint)
        .collect();
    let lens: Vec<u64> = s["interval_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(uint)
        .collect();
    assert_eq!(ops.len(), 5, "{id}: five reports");
    assert_eq!(lens.len(), ops.len());
    // An interval without an operation (RT throttling may cause one) is
    // counted, and is no sample: it has no time per operation.
    let empty = ops.iter().filter(|&&n| n == 0).count();
    assert_eq!(
        uint(&s["intervals_without_operation"]),
        empty as u64,
        "{id}"
    );
    let total: u64 = ops.iter().sum();
    assert_eq!(uint(&s["operations"]), total, "{id}");
    assert_eq!(uint(&r["iterations"]), total, "{id}");
    assert_eq!(lens.iter().sum::<u64>(), uint(&s["elapsed_ns"]), "{id}");
    assert!(
        uint(&s["elapsed_ns"]) >= uint(&s["period_ns"]),
        "{id}: ended early"
    );
    let samples = r["samples_ns"].as_array().unwrap();
    assert_eq!(
        samples.len(),
        ops.len() - empty,
        "{id}: one sample per busy interval"
    );
    let busy = ops.iter().zip(&lens).filter(|&(&n, _)| n > 0);
    for (sample, (&n, &len)) in samples.iter().zip(busy) {
        let expected = len as f64 / n as f64;
        assert!(
            (sample.as_f64().unwrap() - expected).abs() <= 1e-6 * expected,
            "{id}: sample {sample} is not {len} / {n}"
        );
    }
    let rate = s["ops_per_s"].as_f64().unwrap();
    let expected = total as f64 / (uint(&s["elapsed_ns"]) as f64 * 1e-9);
    assert!((rate - expected).abs() <= 1e-6 * expected, "{id}: rate");
    assert!(!s["checks"].as_array().unwrap().is_empty(), "{id}");
    let c = counters(r);
    let avg = c.iter().sum::<u64>() / c.len() as u64;
    match id {
        "thread-metric-cooperative" => {
            assert_eq!(c.iter().sum::<u64>(), total);
            assert!(c.iter().all(|&v| v + 1 >= avg && v <= avg + 1), "{c:?}");
        }
        "thread-metric-preemptive" => {
            assert_eq!(c.iter().sum::<u64>(), total);
            // Most urgent (thread 4) first: never increasing, spanning ≤ 1.
            assert!(c.windows(2).all(|w| w[0] <= w[1]), "{c:?}");
            assert!(c[4] <= c[0] + 1, "{c:?}");
        }
        "thread-metric-interrupt" => {
            // Thread, handler: the score is the interrupts handled.
            assert_eq!(c[1], total);
            assert!(c[1] == c[0] || c[1] == c[0] + 1, "{c:?}");
        }
        "thread-metric-interrupt-preemption" => {
            // Thread 0, thread 1, handler.
            assert_eq!(c[2], total);
            assert!(c[2] >= c[0] && c[0] >= c[1] && c[1] + 1 >= c[2], "{c:?}");
        }
        _ => assert_eq!(c, vec![total], "{id}"),
    }
    if s["sched_policy"] == "SCHED_FIFO" {
        for t in s["threads"].as_array().unwrap() {
            assert!(t["fifo_priority"].as_i64().is_some(), "{id}: {t}");
        }
    }
}

#[test]
fn every_test_runs_consistently_normalises_and_validates() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "thread-metric", "--period", "200ms"])
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    let report = &ran.report;
    let rs = results(report);
    let ids: Vec<&str> = rs
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(ids, IDS);
    let basic = &rs[0];
    assert_consistent(basic);
    assert_eq!(basic["score"]["is_baseline"], true);
    assert_eq!(basic["score"]["relative_to_baseline"].as_f64(), Some(1.0));
    let h = basic["score"]["ops_per_s"].as_f64().unwrap();
    for r in &rs[1..] {
        let id = r["benchmark"].as_str().unwrap();
        if r["status"] == "skipped" {
            // Only where SCHED_FIFO is refused, and said so.
            assert!(NEED_FIFO.contains(&id), "{id} skipped: {r}");
            assert!(r["reason"].as_str().unwrap().contains("SCHED_FIFO"));
            eprintln!("SKIPPED {id}: {}", r["reason"]);
            continue;
        }
        assert_consistent(r);
        let s = &r["score"];
        assert_eq!(s["is_baseline"], false, "{id}");
        assert_eq!(s["baseline"], "thread-metric-basic", "{id}");
        let ratio = s["relative_to_baseline"].as_f64().unwrap();
        let expected = s["ops_per_s"].as_f64().unwrap() / h;
        assert!((ratio - expected).abs() <= 1e-9 * expected, "{id}: R");
    }
    let errors = schema_errors(RUN_SCHEMA, report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let text = &ran.stdout;
    for needle in IDS.iter().copied().chain(["score", "R", "baseline"]) {
        assert!(text.contains(needle), "table lacks {needle}:\n{text}");
    }
    assert!(objects_of(std::process::id()).is_empty());
}

#[test]
fn r_waits_for_the_baseline_and_is_null_without_it() {
    let _g = serial();
    let sb = Sandbox::new();
    // Baseline named last: R is still filled in.
    let report = run_ok(
        &sb,
        &[
            "thread-metric-memory",
            "thread-metric-basic",
            "--period",
            "100ms",
        ],
        Duration::from_secs(30),
    );
    let rs = results(&report);
    assert_eq!(rs[0]["benchmark"], "thread-metric-memory");
    assert_consistent(&rs[0]);
    assert_eq!(rs[0]["score"]["baseline"], "thread-metric-basic");
    assert!(rs[0]["score"]["relative_to_baseline"].as_f64().unwrap() > 0.0);
    // No baseline in the run: no R.
    let report = run_ok(
        &sb,
        &["thread-metric-message", "--period", "100ms"],
        Duration::from_secs(30),
    );
    let r = &results(&report)[0];
    assert_consistent(r);
    assert!(r["score"]["relative_to_baseline"].is_null(), "{r}");
    assert!(r["score"]["baseline"].is_null(), "{r}");
    let errors = schema_errors(RUN_SCHEMA, &report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn an_unfair_schedule_fails_the_cooperative_check() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(
        &sb,
        &["run", "thread-metric-cooperative", "--period", "200ms"],
    )
    .args(&["--fault", "unfair"])
    .json()
    .limit(Duration::from_secs(30))
    .run();
    let report = &ran.report;
    let r = &results(report)[0];
    if r["status"] == "skipped" {
        eprintln!("SKIPPED: SCHED_FIFO refused here: {}", r["reason"]);
        return;
    }
    assert_eq!(ran.code(), Some(1), "{}", ran.stderr);
    assert_eq!(r["status"], "failed", "{r}");
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("more than 1 from the average"), "{error}");
    // The counters up to the failure are kept, and show the favoured thread.
    let c = counters(r);
    assert!(c[0] > c[1..].iter().max().unwrap() + 1, "{c:?}");
    let errors = schema_errors(RUN_SCHEMA, report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn bad_values_exit_2_with_one_line_and_write_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "thread-metric", "--period", "0", "--json", j],
            "'0'",
        ),
        (
            &["run", "thread-metric", "--period", "0s", "--json", j],
            "out of range",
        ),
        (
            &["run", "thread-metric-basic", "--period", "5ms", "--json", j],
            "at least 10ms",
        ),
        (
            &["run", "thread-metric", "--period=-1s", "--json", j],
            "out of range",
        ),
        (
            &["run", "thread-metric", "--period", "soon", "--json", j],
            "invalid duration 'soon'",
        ),
        (
            &["run", "thread-metric-nosuch", "--json", j],
            "unknown benchmark or group 'thread-metric-nosuch'",
        ),
    ];
    refused_all(&sb, cases, Some(&json));
}

#[test]
fn sigterm_ends_a_long_period_and_keeps_partial_results() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("partial.json");
    // The preemptive chain: five SCHED_FIFO threads and a suspended chain
    // that must all be woken and joined.
    let child = sb
        .cmd(&[
            "run",
            "thread-metric-preemptive",
            "thread-metric-basic",
            "--period",
            "10m",
            "--json",
            json.to_str().unwrap(),
        ])
        .spawn()
        .expect("spawn");
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(700));
    signal(pid, libc::SIGTERM);
    // Generous: the point is that it ends, well before the 10 minutes.
    let out = wait_with_deadline(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted by SIGTERM"));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    let rs = results(&report);
    assert_eq!(rs.len(), 1, "the baseline never started");
    assert_eq!(rs[0]["status"], "failed");
    assert!(objects_of(pid).is_empty(), "left {:?}", objects_of(pid));
}

#[test]
fn list_shows_the_group_and_readme_documents_it() {
    let _g = serial();
    let sb = Sandbox::new();
    let out = sb.run(&["list"], Duration::from_secs(10));
    assert!(out.status.success());
    let text = stdout(&out);
    for id in IDS {
        assert!(text.contains(id), "{id} not listed");
    }
    assert!(text.contains("thread-metric") && text.contains("(8 benchmarks)"));
    let entries = list();
    let scored: Vec<&Value> = entries.iter().filter(|e| e["mode"] == "score").collect();
    assert_eq!(scored.len(), 8);
    assert_eq!(scored.iter().filter(|e| e["baseline"] == true).count(), 1);
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for id in IDS {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
    assert!(readme.contains("ipcmark run thread-metric --period 5s"));
    let method = std::fs::read_to_string("docs/method.md").expect("docs/method.md");
    assert!(method.contains("## Thread-Metric"));
}
