//! The timer group (mode `periodic`): every benchmark runs in a shortened
//! form with consistent statistics and a report that validates; bad values
//! exit 2; a stop request ends a long run; nothing is left behind. No test
//! asserts a time.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Order of the latency statistics, and the periodic fields that every
/// result carries.
fn assert_consistent(r: &Value) {
    if r["benchmark"] == "timer-irq-overhead" && r["status"] == "below_resolution" {
        // The rounds' noise exceeded the handler's cost (a loaded machine):
        // measured, said so with the signed median, and no figure given.
        let irq = &r["irq"];
        assert!(f(irq, "cost_per_interrupt_ns") <= 0.0, "{r}");
        assert!(
            r["reason"].as_str().unwrap().contains("cost per interrupt"),
            "{r}"
        );
        assert!(r["latency_ns"].is_null(), "{r}");
        return;
    }
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["mode"], "periodic", "{r}");
    assert_eq!(r["size_bytes"], 0);
    assert_latency_in_order(r["benchmark"].as_str().unwrap_or("?"), &r["latency_ns"]);
    assert!(
        f(r, "period_ns") >= 1.0 && f(r, "frequency_hz") > 0.0,
        "{r}"
    );
    assert!(r["sched_policy"].as_str().is_some_and(|p| !p.is_empty()));
    if let Some(w) = r["wakeups"].as_u64() {
        assert!(w > 0, "{r}");
        assert_eq!(r["iterations"].as_u64(), Some(w));
        // The measuring thread ran with the slack ipcmark set.
        assert_eq!(r["timer_slack_ns"].as_u64(), Some(1), "{r}");
        if let Some(fails) = r["failures"].as_u64() {
            assert!(fails <= w, "{r}");
            let ratio = f(r, "fail_ratio");
            assert!((ratio - fails as f64 / w as f64).abs() < 1e-9, "{r}");
            assert!(f(r, "tolerance") > 0.0);
        }
    } else {
        let irq = &r["irq"];
        assert!(irq["interrupts"].as_u64().unwrap() > 0, "{r}");
        assert!(irq["rounds"].as_u64().unwrap() >= 1);
        assert!(f(irq, "loop_without_ns") > 0.0 && f(irq, "loop_with_ns") > 0.0);
        assert_eq!(
            irq["round_costs_ns"].as_array().unwrap().len() as u64,
            r["samples_ns"].as_array().unwrap().len() as u64
        );
    }
}

#[test]
fn every_timer_benchmark_runs_consistently_and_validates() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "timer", "--duration", "300ms"])
        .args(&["--frequencies", "250,1000", "--tolerance", "0.5"])
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    let report = &ran.report;
    let rs = results(report);
    let ids: Vec<&str> = rs
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "timer-latency",
            "timer-failures",
            "timer-failures",
            "timer-irq-overhead"
        ]
    );
    for r in rs {
        assert_consistent(r);
    }
    let freqs: Vec<f64> = rs[1..3].iter().map(|r| f(r, "frequency_hz")).collect();
    assert_eq!(freqs, [250.0, 1000.0]);
    assert!(rs[0]["failures"].is_null(), "latency counts no failures");
    let errors = schema_errors(RUN_SCHEMA, report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let text = &ran.stdout;
    for needle in [
        "timer-latency",
        "timer-failures",
        "timer-irq-overhead",
        "Fail_sys",
    ] {
        assert!(text.contains(needle), "table lacks {needle}:\n{text}");
    }
    assert!(objects_of(std::process::id()).is_empty());
}

#[test]
fn single_timer_benchmark_by_id_and_quick() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "timer-latency"])
        .quick()
        .args(&["--duration", "200ms", "--period", "500us"])
        .json()
        .limit(Duration::from_secs(30))
        .ok();
    let rs = results(&ran.report);
    assert_eq!(rs.len(), 1);
    assert_consistent(&rs[0]);
    assert_eq!(rs[0]["period_ns"].as_u64(), Some(500_000));
}

#[test]
fn bad_timer_values_exit_2_with_one_line_and_write_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "timer", "--period", "0", "--json", j], "'0'"),
        (
            &["run", "timer", "--period", "0s", "--json", j],
            "out of range",
        ),
        (
            &["run", "timer", "--duration", "0ms", "--json", j],
            "out of range",
        ),
        (
            &["run", "timer-failures", "--tolerance", "-0.5", "--json", j],
            "tolerance '-0.5' is out of range",
        ),
        (
            &["run", "timer-failures", "--tolerance", "0", "--json", j],
            "tolerance '0' is out of range",
        ),
        (
            &["run", "timer-failures", "--tolerance", "1.5", "--json", j],
            "out of range",
        ),
        (
            &[
                "run",
                "timer-failures",
                "--frequencies",
                "60,0",
                "--json",
                j,
            ],
            "frequency '0' is out of range",
        ),
        (
            &[
                "run",
                "timer-failures",
                "--frequencies",
                "60,,250",
                "--json",
                j,
            ],
            "empty entry",
        ),
        (
            &[
                "run",
                "timer-irq-overhead",
                "--irq-frequency",
                "-5",
                "--json",
                j,
            ],
            "out of range",
        ),
        (
            &["run", "timers", "--json", j],
            "unknown benchmark or group 'timers'",
        ),
    ];
    refused_all(&sb, cases, Some(&json));
}

#[test]
fn sigint_ends_a_long_periodic_run_and_keeps_partial_results() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("partial.json");
    for bench in ["timer-latency", "timer-irq-overhead"] {
        let child = sb
            .cmd(&[
                "run",
                bench,
                "--duration",
                "10m",
                "--json",
                json.to_str().unwrap(),
            ])
            .spawn()
            .expect("spawn");
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(700));
        signal(pid, libc::SIGINT);
        // Generous: the point is that it ends, well before the 10 minutes.
        let out = wait_with_deadline(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(130), "{bench}: {}", stderr(&out));
        assert!(stderr(&out).contains("interrupted by SIGINT"), "{bench}");
        let report = read_json(&json);
        assert_eq!(report["complete"], false);
        assert!(
            objects_of(pid).is_empty(),
            "{bench}: left {:?}",
            objects_of(pid)
        );
    }
}

#[test]
fn list_shows_the_timer_group() {
    let _g = serial();
    let sb = Sandbox::new();
    let out = sb.run(&["list"], Duration::from_secs(10));
    assert!(out.status.success());
    let text = stdout(&out);
    for id in ["timer-latency", "timer-failures", "timer-irq-overhead"] {
        assert!(text.contains(id), "{id} not listed");
    }
    assert!(
        text.contains("timer ") && text.contains("(3 benchmarks)"),
        "{text}"
    );
    let periodic = list().iter().filter(|e| e["mode"] == "periodic").count();
    assert_eq!(periodic, 3);
}

#[test]
fn readme_documents_every_timer_benchmark() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for id in ["timer-latency", "timer-failures", "timer-irq-overhead"] {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
    assert!(readme.contains("ipcmark run timer-failures"));
}
