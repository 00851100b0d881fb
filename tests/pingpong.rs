//! Ping-pong, the default mode: every mechanism echoes intact at several
//! sizes with either peer, statistics consistent with their samples, the
//! precision target, passes, sizes sampled in rounds, the schema, idle
//! states and one-CPU runs. No test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// Checks one "ok" result's statistics for internal consistency.
fn assert_consistent(r: &Value) {
    let name = format!("{} {}", r["benchmark"], r["size_bytes"]);
    let l = &r["latency_ns"];
    assert_latency_in_order(&name, l);
    let f = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("{name}: latency_ns.{k}"))
    };
    assert!(f("median") >= 0.0 && f("stddev") >= 0.0, "{name}");
    assert!(
        r["loop_overhead_ns"].as_f64().unwrap() >= 0.0,
        "{name}: negative overhead"
    );
    assert!(
        r["clock_overhead_ns"].as_f64().unwrap() >= 0.0,
        "{name}: negative clock overhead"
    );
    assert!(r["iterations"].as_u64().unwrap() >= 1, "{name}");
    assert!(
        r["verified_round_trips"].as_u64().unwrap() > 0,
        "{name}: content never verified"
    );
    assert!(r["timed_round_trips"].as_u64().unwrap() >= 1, "{name}");
    assert_median_among_samples(&name, r, 2);
    assert_precision_consistent(r);
}

/// Checks a result's `precision` against its own samples: with passes, the
/// Student t interval of the pass medians (never narrower than
/// t(0.975, N − 1) · sd / √N); with one pass, an interval of the median of
/// its samples that holds the median; none only where too few units exist.
fn assert_precision_consistent(r: &Value) {
    let name = format!("{} {}", r["benchmark"], r["size_bytes"]);
    let p = &r["precision"];
    let samples: Vec<f64> = r["samples_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    if p.is_null() {
        assert!(
            r["passes"].is_null() && samples.len() < 6,
            "{name}: no interval, yet {} samples or passes: {r}",
            samples.len()
        );
        return;
    }
    let (low, high) = (
        p["interval_ns"]["low"].as_f64().unwrap(),
        p["interval_ns"]["high"].as_f64().unwrap(),
    );
    let units = p["units"].as_u64().unwrap() as usize;
    let centre = match p["basis"].as_str().unwrap() {
        "passes" => {
            let medians: Vec<f64> = r["passes"]["medians_ns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_eq!(units, medians.len(), "{name}: {p}");
            let n = units as f64;
            let mean = medians.iter().sum::<f64>() / n;
            let sd = (medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            // t(0.975, N − 1) for N = 2..=6, rounded down.
            let t = [12.7062, 4.3026, 3.1824, 2.7764, 2.5705][units - 2];
            let half = (high - low) / 2.0;
            assert!(
                half >= t * sd / n.sqrt() * (1.0 - 1e-6),
                "{name}: half-width {half} under t·sd/√N = {} ({medians:?})",
                t * sd / n.sqrt()
            );
            mean
        }
        "batches" => {
            assert_eq!(units, samples.len(), "{name}: {p}");
            let median = r["latency_ns"]["median"].as_f64().unwrap();
            assert!(
                low <= median && median <= high,
                "{name}: interval of the median {p} misses the median {median}"
            );
            median
        }
        other => panic!("{name}: basis {other}"),
    };
    let (achieved, target) = (
        p["achieved"].as_f64().unwrap(),
        p["target"].as_f64().unwrap(),
    );
    let half = (centre - low).max(high - centre) / centre;
    assert!(
        (achieved - half).abs() <= 1e-9 * half.max(1.0),
        "{name}: {p}"
    );
    assert_eq!(
        p["met"].as_bool().unwrap(),
        achieved <= target,
        "{name}: {p}"
    );
}

#[test]
fn precision_target_adds_samples_until_met_or_time_is_up_and_flags_a_miss() {
    let _g = serial();
    let sb = Sandbox::new();
    // A target no noisy machine meets in 1 s: samples go on past the minimum,
    // then the miss is flagged in the result, the table and a warning.
    let ran = Run::new(&sb, &["run", "pipe"])
        .sizes("64")
        .quick()
        .args(&["--samples", "3", "--sample-time", "2ms"])
        .args(&["--precision", "0.001%", "--max-time", "1s"])
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    let report = &ran.report;
    let r = &results(report)[0];
    assert_eq!(r["status"], "ok");
    assert_eq!(report["settings"]["budget"]["precision"]["target"], 0.00001);
    assert!(r["samples_ns"].as_array().unwrap().len() > 3, "{r}");
    assert_eq!(r["precision"]["met"], false, "{r}");
    assert_precision_consistent(r);
    // The note may wrap in the table's last column.
    let text = &ran.stdout;
    assert!(
        text.contains("over 5 passes") && text.contains("0.001%)"),
        "{text}"
    );
    assert!(
        report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "precision-missed"),
        "{}",
        report["warnings"]
    );
    // A loose target: at least the minimum, and a verdict that agrees with
    // the interval (whether it is met depends on the machine's noise).
    let ran = Run::new(&sb, &["run", "pipe-self"])
        .sizes("64")
        .quick()
        .args(&[
            "--samples",
            "5",
            "--sample-time",
            "2ms",
            "--precision",
            "100%",
        ])
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    let r = &results(&ran.report)[0];
    assert!(r["samples_ns"].as_array().unwrap().len() >= 5, "{r}");
    assert_precision_consistent(r);
}

#[test]
fn passes_measure_each_figure_again_with_fresh_peers_and_pool_them() {
    let _g = serial();
    let sb = Sandbox::new();
    // pipe and fifo sweep together; shm-spin runs alone; syscall-getpid is
    // an operation, whose passes pool too.
    let ran = Run::new(&sb, &["run", "pipe", "fifo", "shm-spin", "syscall-getpid"])
        .args(&["--passes", "3"])
        .args(short_budget())
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    let report = &ran.report;
    assert_eq!(report["settings"]["passes"], 3);
    assert_eq!(report["complete"], true);
    let rs = results(report);
    assert_eq!(rs.len(), 4, "one record per figure, not per pass");
    for r in rs {
        let name = r["benchmark"].as_str().unwrap();
        if r["status"] == "skipped" {
            continue;
        }
        assert_eq!(r["status"], "ok", "{r}");
        let passes = &r["passes"];
        assert_eq!(passes["count"], 3, "{name}: {r}");
        let medians = passes["medians_ns"].as_array().unwrap();
        assert_eq!(medians.len(), 3, "{name}");
        // Each pass takes its two samples; the figure pools them all.
        assert_eq!(r["samples_ns"].as_array().unwrap().len(), 6, "{name}");
        assert!(medians.iter().all(|m| m.as_f64().unwrap() >= 0.0), "{name}");
        assert_eq!(r["precision"]["basis"], "passes", "{name}: {r}");
        assert_precision_consistent(r);
        if r["mode"] == "pingpong" {
            assert!(
                r["verified_round_trips"].as_u64().unwrap() >= 3 * 32,
                "{name}: every pass checks its content: {r}"
            );
        }
        if name != "shm-spin" && name != "syscall-getpid" {
            assert_eq!(
                r["passes"]["drift_corrected_medians_ns"]
                    .as_array()
                    .unwrap()
                    .len(),
                3,
                "{name}: {r}"
            );
        }
    }
    assert_eq!(schema_errors(RUN_SCHEMA, report), Vec::<String>::new());
    assert!(ipcmark_processes().is_empty(), "a pass left a peer behind");
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
}

fn run_matrix(peer: &str, sizes: &str) {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "--peer", peer])
        .sizes(sizes)
        .json()
        .short()
        .limit(Duration::from_secs(240))
        .ok();
    let report = &ran.report;
    assert_eq!(report["complete"], true);
    let ids = group_ids("ipc");
    assert!(ids.len() >= 3, "list shows mechanisms: {ids:?}");
    for id in &ids {
        let rows: Vec<&Value> = results(report)
            .iter()
            .filter(|r| r["benchmark"] == id.as_str())
            .collect();
        assert!(!rows.is_empty(), "{id} produced no result");
        for r in rows {
            match r["status"].as_str().unwrap() {
                "ok" => assert_consistent(r),
                "skipped" => assert!(
                    !r["reason"].as_str().unwrap().is_empty(),
                    "{id}: skipped without reason"
                ),
                // Echoed and checked, but a busy machine's overheads left
                // nothing of its time: no figure, and it says why (a broken
                // echo is "failed", never this).
                "below_resolution" => assert!(
                    !r["reason"].as_str().unwrap().is_empty(),
                    "{id}: below resolution without reason"
                ),
                other => panic!("{id} {}: status {other}: {}", r["size_bytes"], r["error"]),
            }
        }
    }
    assert!(
        sb.leftover_tmp().is_empty(),
        "left in TMPDIR: {:?}",
        sb.leftover_tmp()
    );
    assert!(
        ipcmark_processes().is_empty(),
        "processes left: {:?}",
        ipcmark_processes()
    );
}

#[test]
fn every_mechanism_echoes_intact_at_several_sizes() {
    run_matrix("process", "1,100,4K,64K");
}

#[test]
fn every_mechanism_works_with_a_thread_peer() {
    run_matrix("thread", "1,4K");
}

#[test]
fn json_report_validates_against_documented_schema() {
    let _g = serial();
    let sb = Sandbox::new();
    // pipe-self at 2M is skipped (beyond fs.pipe-max-size, 1M by default), so both
    // statuses appear; pipe's three sizes give it a cost model.
    let ran = Run::new(&sb, &["run", "pipe", "pipe-self"])
        .sizes("64,1K,2M")
        .json()
        .short()
        .limit(Duration::from_secs(60))
        .ok();
    let validator = validator(RUN_SCHEMA);
    let report = &ran.report;
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let models = report["cost_models"].as_array().expect("cost_models");
    assert_eq!(models.len(), 1, "only pipe has 3 sizes: {models:?}");
    assert_eq!(models[0]["benchmark"], "pipe");
    let segs = models[0]["segments"].as_array().unwrap();
    assert_eq!(segs[0]["from_bytes"], 64);
    assert_eq!(segs.last().unwrap()["to_bytes"], 2 << 20);
    let statuses: Vec<&str> = results(report)
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"ok") && statuses.contains(&"skipped"),
        "{statuses:?}"
    );

    // A failed result validates too.
    let ran = Run::new(&sb, &["run", "pipe"])
        .sizes("64")
        .args(&["--fault", "corrupt"])
        .json()
        .short()
        .limit(Duration::from_secs(30))
        .exits(1);
    let report = &ran.report;
    assert_eq!(results(report)[0]["status"], "failed");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn sizes_of_a_mechanism_are_sampled_in_rounds_unless_it_spins_or_runs_out() {
    let _g = serial();
    let sb = Sandbox::new();
    // pipe and fifo: three sizes each, all six in rounds. shm-spin busy-waits: its idle
    // peers would spin, so its sizes run one after another.
    let ran = Run::new(&sb, &["run", "pipe", "fifo", "shm-spin"])
        .sizes("1,4K,16K")
        .json()
        .short()
        .ok();
    let report = &ran.report;
    for r in results(report) {
        assert_eq!(r["status"], "ok", "{r}");
        assert_consistent(r);
        let sweep = &r["sweep"];
        if r["benchmark"] == "shm-spin" {
            assert!(sweep.is_null(), "a spinning mechanism was interleaved: {r}");
            continue;
        }
        assert_eq!(sweep["figures"], 6, "{r}");
        let rounds = sweep["rounds"].as_u64().unwrap();
        assert_eq!(rounds as usize, r["samples_ns"].as_array().unwrap().len());
        assert!(
            sweep["drift_corrected_median_ns"].as_f64().unwrap() > 0.0,
            "{r}"
        );
    }
    assert_eq!(schema_errors(RUN_SCHEMA, report), Vec::<String>::new());

    // Both System V mechanisms at every size of the default sweep: all
    // their channels (a key each) are held open together.
    let ran = Run::new(&sb, &["run", "shm-sysv-sem", "sysv-msg"])
        .sizes("1,64,1K,4K,16K,64K")
        .json()
        .short()
        .ok();
    assert!(
        !ran.stdout.contains("could not be held open"),
        "{}",
        ran.stdout
    );
    let report = &ran.report;
    let rs = results(report);
    assert_eq!(rs.len(), 12);
    let ok: Vec<&Value> = rs.iter().filter(|r| r["status"] == "ok").collect();
    // sysv-msg's 16K and 64K exceed kernel.msgmax here: skipped, not opened.
    assert!(ok.len() >= 8, "{report}");
    for r in &ok {
        assert_consistent(r);
        assert_eq!(r["sweep"]["figures"], ok.len(), "{r}");
        let note = r["note"].as_str().unwrap_or("");
        assert!(!note.contains("measured alone"), "{r}");
    }

    // A channel that cannot be held beside the others (here: out of
    // descriptors) runs alone afterwards, and says so.
    let ran = Run::new(&sb, &["run", "pipe"])
        .sizes("1,2,4,8,16,32,64,128,256,512")
        .json()
        .short()
        .open_files(20)
        .ok();
    let rs = results(&ran.report);
    assert_eq!(rs.len(), 10);
    let mut together = 0;
    for r in rs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_consistent(r);
        if r["sweep"].is_null() {
            let note = r["note"].as_str().unwrap_or("");
            assert!(
                note.contains("measured alone") && note.contains("could not be held open"),
                "the fallback is not explained: {r}"
            );
        } else {
            together += 1;
        }
    }
    assert!((2..10).contains(&together), "{together} of 10 in rounds");
    assert!(ipcmark_processes().is_empty());
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
}

#[test]
fn idle_states_are_held_off_by_default_when_permitted_and_allowed_on_request() {
    let _g = serial();
    let sb = Sandbox::new();
    let writable = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .is_ok();
    let run = |extra: &[&str]| {
        Run::new(&sb, &["run", "pipe"])
            .sizes("64")
            .json()
            .args(extra)
            .short()
            .limit(Duration::from_secs(30))
            .ok()
            .report
    };
    let report = run(&[]);
    if writable {
        assert_eq!(
            report["settings"]["cpu_latency_us"], 0,
            "{}",
            report["settings"]
        );
        assert_eq!(report["environment"]["cpu_dma_latency_us"], 0);
    } else {
        assert!(report["settings"]["cpu_latency_us"].is_null());
    }
    let report = run(&["--cpu-latency", "off"]);
    assert!(report["settings"]["cpu_latency_us"].is_null());
    // With none held, the run says so (and what it costs: tests/cpu_latency.rs).
    let kinds: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"idle-states-allowed"), "{kinds:?}");
    assert_eq!(report["environment"]["cpu_latency"]["held"], false);
}

#[test]
fn same_cpu_runs_blocking_mechanisms_and_skips_spinning_with_a_reason() {
    let _g = serial();
    let sb = Sandbox::new();
    let ids = group_ids("ipc");
    let spin = ids.iter().any(|i| i == "shm-spin");
    let names: &[&str] = if spin {
        &["run", "pipe", "shm-spin"]
    } else {
        &["run", "pipe"]
    };
    let ran = Run::new(&sb, names)
        .arg("--same-cpu")
        .json()
        .short()
        .limit(Duration::from_secs(60))
        .ok();
    let report = &ran.report;
    assert_eq!(
        report["settings"]["client_cpu"],
        report["settings"]["server_cpu"]
    );
    for r in results(report) {
        if r["benchmark"] == "shm-spin" {
            assert_eq!(r["status"], "skipped");
            assert!(r["reason"].as_str().unwrap().contains("two CPUs"), "{r}");
        } else {
            assert_eq!(r["status"], "ok", "{r}");
            let cpus = r["cpus"].as_array().unwrap();
            assert_eq!(cpus.len(), 2);
            assert_eq!(cpus[0], cpus[1], "both sides on one CPU: {r}");
        }
    }
}
