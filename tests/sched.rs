//! The `sched` group: every benchmark runs in a shortened form with
//! consistent statistics, per context switch with its baseline reported, the
//! kernel's switch count covering every operation, in the documented schema,
//! leaving no process behind; the group name selects exactly the group and
//! bad values exit 2. No test asserts a time.

use crate::util::*;
use std::time::Duration;

/// The benchmarks the issue asks for, by id.
const ISSUE_IDS: &[&str] = &[
    "sched-yield",
    "sched-ctx-2",
    "sched-ctx-2-16k",
    "sched-ctx-2-64k",
    "sched-ctx-8",
    "sched-ctx-threads-2",
];

#[test]
fn list_shows_the_group_in_mode_op() {
    let ids = group_ids("sched");
    for id in ISSUE_IDS {
        assert!(ids.iter().any(|i| i == id), "{id} missing from list --json");
    }
    for e in &group("sched") {
        assert_eq!(e["mode"], "op", "{e}");
        assert!(!e["syscalls"].as_array().unwrap().is_empty(), "{e}");
    }
}

#[test]
fn sched_group_runs_every_benchmark_consistently_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    // The report is checked against the schema as it is read.
    let ran = Run::new(&sb, &["run", "sched"])
        .short()
        .json()
        .schema()
        .ok();
    let report = &ran.report;
    assert_eq!(report["complete"], true);

    let rs = report["results"].as_array().unwrap();
    let got: Vec<&str> = rs
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(
        got,
        group_ids("sched"),
        "run sched selects exactly the group, in order"
    );
    for r in rs {
        let id = r["benchmark"].as_str().unwrap();
        // A ring's switches less its baseline (the same laps' work without
        // them) can reach zero on a loaded machine.
        if id.starts_with("sched-ctx-") && below_resolution_by_baseline(r) {
            continue;
        }
        assert_eq!(r["status"], "ok", "{id}: {}", r["error"]);
        assert_eq!(r["mode"], "op");
        assert_latency_in_order(id, &r["latency_ns"]);
        assert_median_among_samples(id, r, 2);

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
            // Signed, never floored: a baseline within the loop's noise may
            // be at or below zero.
            assert!(r["baseline_ns"].as_f64().is_some(), "{id}");
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
    assert!(objects_of(ran.pid).is_empty(), "{:?}", objects_of(ran.pid));
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
    // An empty needle: the form of the refusal only.
    refused_all(
        &sb,
        &[
            (&["run", "sched", "--samples", "0"][..], ""),
            (&["run", "sched-ctx-3"][..], ""),
            (&["run", "sched", "--sample-time", "fast"][..], ""),
        ],
        None,
    );
}
