//! The `sched` group: every benchmark runs in a shortened form with
//! consistent statistics, per context switch with its baseline reported, the
//! kernel's switch count covering every operation, in the documented schema,
//! leaving no process behind; the group name selects exactly the group and
//! bad values exit 2. No test asserts a time.

mod util;

use serde_json::Value;
use std::time::Duration;
use util::*;

/// The benchmarks the issue asks for, by id.
const ISSUE_IDS: &[&str] = &[
    "sched-yield",
    "sched-ctx-2",
    "sched-ctx-2-16k",
    "sched-ctx-2-64k",
    "sched-ctx-8",
    "sched-ctx-threads-2",
];

fn list() -> Vec<Value> {
    let sb = Sandbox::new();
    let out = sb.run(&["list", "--json"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    v.as_array().expect("an array").clone()
}

fn sched_ids() -> Vec<String> {
    list()
        .iter()
        .filter(|e| e["group"] == "sched")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn list_shows_the_group_in_mode_op() {
    let ids = sched_ids();
    for id in ISSUE_IDS {
        assert!(ids.iter().any(|i| i == id), "{id} missing from list --json");
    }
    for e in list().iter().filter(|e| e["group"] == "sched") {
        assert_eq!(e["mode"], "op", "{e}");
        assert!(!e["syscalls"].as_array().unwrap().is_empty(), "{e}");
    }
}

#[test]
fn sched_group_runs_every_benchmark_consistently_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("s.json");
    let mut a = vec!["run", "sched"];
    a.extend_from_slice(SHORT);
    a.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let child = sb.cmd(&a).spawn().expect("spawn ipcmark");
    let pid = child.id();
    let out = wait_with_deadline(child, Duration::from_secs(120));
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], true);

    let errors = schema_errors("docs/schema/run.schema.json", &report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");

    let rs = report["results"].as_array().unwrap();
    let got: Vec<&str> = rs
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(
        got,
        sched_ids(),
        "run sched selects exactly the group, in order"
    );
    for r in rs {
        let id = r["benchmark"].as_str().unwrap();
        assert_eq!(r["status"], "ok", "{id}: {}", r["error"]);
        assert_eq!(r["mode"], "op");
        let l = &r["latency_ns"];
        let f = |k: &str| l[k].as_f64().unwrap();
        assert!(
            f("min") <= f("p50")
                && f("p50") <= f("p90")
                && f("p90") <= f("p99")
                && f("p99") <= f("p999")
                && f("p999") <= f("max"),
            "{id}: percentiles out of order in {l}"
        );
        let samples: Vec<f64> = r["samples_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .collect();
        assert_eq!(samples.len(), 2, "{id}");
        let lo = samples.iter().cloned().fold(f64::MAX, f64::min);
        let hi = samples.iter().cloned().fold(f64::MIN, f64::max);
        assert!(
            lo <= f("median") && f("median") <= hi,
            "{id}: median outside samples"
        );

        // Per context switch; the ring's token passing is reported.
        let ev = &r["events"];
        assert_eq!(ev["name"], "context switch", "{id}");
        let per_op = ev["per_op"].as_u64().unwrap();
        if id.starts_with("sched-ctx-") {
            let n: u64 = id
                .trim_start_matches("sched-ctx-")
                .trim_start_matches("threads-")
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(per_op, n, "{id}: a lap is one switch per member");
            assert!(r["baseline_ns"].as_f64().unwrap() >= 0.0, "{id}");
        } else {
            assert_eq!(per_op, 2, "{id}: a yield is a switch there and back");
        }

        // The calls were made, and the kernel counted the switches.
        for c in r["kernel_calls"].as_array().unwrap() {
            assert_eq!(c["entered"], true, "{id}: {c}");
        }
        let k = &r["kernel_counter"];
        let ops = k["ops"].as_u64().unwrap();
        assert!(ops >= r["timed_ops"].as_u64().unwrap(), "{id}: {k}");
        assert!(
            k["observed"].as_u64().unwrap() >= k["per_op"].as_u64().unwrap() * ops,
            "{id}: fewer switches than laps need: {k}"
        );
        assert_eq!(r["cpus"].as_array().unwrap().len(), 1, "{id}");
    }
    assert!(objects_of(pid).is_empty(), "{:?}", objects_of(pid));
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "{:?}",
        ipcmark_processes()
    );
}

#[test]
fn sigterm_during_a_ring_releases_every_member() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("i.json");
    let child = sb
        .cmd(&[
            "run",
            "sched-ctx-8",
            "sched-ctx-threads-8",
            "--sample-time",
            "300ms",
            "--json",
            json.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(20), || children_of(pid).len() >= 7),
        "the ring's processes never appeared"
    );
    signal(pid, libc::SIGTERM);
    let out = wait_with_deadline(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()));
}

#[test]
fn bad_values_exit_2() {
    let sb = Sandbox::new();
    for argv in [
        &["run", "sched", "--samples", "0"][..],
        &["run", "sched-ctx-3"][..],
        &["run", "sched", "--sample-time", "fast"][..],
    ] {
        refused(&sb, argv, &[]);
    }
}
