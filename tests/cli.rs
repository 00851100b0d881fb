//! Behaviour of the ipcmark binary: data integrity, statistics, schema,
//! failure handling, clean-up and bad input. No test asserts a time.

mod util;

use serde_json::Value;
use std::time::Duration;
use util::*;

/// `command` followed by the `options` (which belong to the subcommand).
fn args<'a>(options: &[&'a str], command: &[&'a str]) -> Vec<&'a str> {
    let mut v = command.to_vec();
    v.extend_from_slice(options);
    v
}

/// Every IPC mechanism (group "ipc", the default run) as `ipcmark list --json`
/// describes it; the other groups are tested in tests/syscall.rs.
fn mechanisms() -> Vec<Value> {
    let sb = Sandbox::new();
    let out = sb.run(&["list", "--json"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    list.as_array()
        .expect("an array")
        .iter()
        .filter(|e| e["group"] == "ipc")
        .cloned()
        .collect()
}

/// Ids of every mechanism.
fn mechanism_ids() -> Vec<String> {
    mechanisms()
        .iter()
        .map(|m| m["id"].as_str().expect("id").to_string())
        .collect()
}

fn results(report: &Value) -> &Vec<Value> {
    report["results"].as_array().expect("results array")
}

/// Checks one "ok" result's statistics for internal consistency.
fn assert_consistent(r: &Value) {
    let name = format!("{} {}", r["benchmark"], r["size_bytes"]);
    let l = &r["latency_ns"];
    let f = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("{name}: latency_ns.{k}"))
    };
    assert!(f("min") <= f("p50"), "{name}: min > p50 in {l}");
    assert!(
        f("p50") <= f("p90") && f("p90") <= f("p99"),
        "{name}: percentiles out of order in {l}"
    );
    assert!(
        f("p99") <= f("p999") && f("p999") <= f("max"),
        "{name}: p999 > max in {l}"
    );
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
    let samples = r["samples_ns"].as_array().unwrap();
    assert_eq!(samples.len(), 2, "{name}: sample count");
    let median = f("median");
    let (lo, hi) = samples
        .iter()
        .map(|s| s.as_f64().unwrap())
        .fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s), b.max(s)));
    assert!(
        lo <= median && median <= hi,
        "{name}: median outside its samples"
    );
    assert_precision_consistent(r);
}

/// Checks a result's `precision` against its own samples.
fn assert_precision_consistent(r: &Value) {
    let name = format!("{} {}", r["benchmark"], r["size_bytes"]);
    let p = &r["precision"];
    let (low, high) = (
        p["interval_ns"]["low"].as_f64().unwrap(),
        p["interval_ns"]["high"].as_f64().unwrap(),
    );
    let median = r["latency_ns"]["median"].as_f64().unwrap();
    assert!(
        low <= median && median <= high,
        "{name}: interval of the median {p} misses the median {median}"
    );
    let (achieved, target) = (
        p["achieved"].as_f64().unwrap(),
        p["target"].as_f64().unwrap(),
    );
    let half = (median - low).max(high - median) / median.max(1.0);
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
    let json = sb.path("p.json");
    // A target no noisy machine meets in 1 s: samples go on past the minimum,
    // then the miss is flagged in the result, the table and a warning.
    let out = sb.run(
        &[
            "run",
            "pipe",
            "--sizes",
            "64",
            "--quick",
            "--samples",
            "3",
            "--sample-time",
            "2ms",
            "--precision",
            "0.001%",
            "--max-time",
            "1s",
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    let r = &results(&report)[0];
    assert_eq!(r["status"], "ok");
    assert_eq!(report["settings"]["budget"]["precision"]["target"], 0.00001);
    assert!(r["samples_ns"].as_array().unwrap().len() > 3, "{r}");
    assert_eq!(r["precision"]["met"], false, "{r}");
    assert_precision_consistent(r);
    assert!(stdout(&out).contains("(target 0.001%)"), "{}", stdout(&out));
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
    let out = sb.run(
        &[
            "run",
            "pipe-self",
            "--sizes",
            "64",
            "--quick",
            "--samples",
            "5",
            "--sample-time",
            "2ms",
            "--precision",
            "100%",
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    let r = &results(&report)[0];
    assert!(r["samples_ns"].as_array().unwrap().len() >= 5, "{r}");
    assert_precision_consistent(r);
}

#[test]
fn passes_measure_each_figure_again_with_fresh_peers_and_pool_them() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("passes.json");
    // pipe and fifo sweep together; shm-spin runs alone; syscall-getpid is
    // an operation, whose passes pool too.
    let mut a = args(
        short_budget(),
        &[
            "run",
            "pipe",
            "fifo",
            "shm-spin",
            "syscall-getpid",
            "--passes",
            "3",
        ],
    );
    a.extend(["--json", json.to_str().unwrap()]);
    let out = sb.run(&a, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["settings"]["passes"], 3);
    assert_eq!(report["complete"], true);
    let rs = results(&report);
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
    assert_eq!(
        schema_errors("docs/schema/run.schema.json", &report),
        Vec::<String>::new()
    );
    assert!(ipcmark_processes().is_empty(), "a pass left a peer behind");
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
}

fn run_matrix(peer: &str, sizes: &str) {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("matrix.json");
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "--peer",
                peer,
                "--sizes",
                sizes,
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(240),
    );
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    let report = read_json(&json);
    assert_eq!(report["complete"], true);
    let ids = mechanism_ids();
    assert!(ids.len() >= 3, "list shows mechanisms: {ids:?}");
    for id in &ids {
        let rows: Vec<&Value> = results(&report)
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
    let json = sb.path("r.json");
    // pipe-self at 2M is skipped (beyond fs.pipe-max-size, 1M by default), so both
    // statuses appear; pipe's three sizes give it a cost model.
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "pipe-self",
                "--sizes",
                "64,1K,2M",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string("docs/schema/run.schema.json").unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let report = read_json(&json);
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let models = report["cost_models"].as_array().expect("cost_models");
    assert_eq!(models.len(), 1, "only pipe has 3 sizes: {models:?}");
    assert_eq!(models[0]["benchmark"], "pipe");
    let segs = models[0]["segments"].as_array().unwrap();
    assert_eq!(segs[0]["from_bytes"], 64);
    assert_eq!(segs.last().unwrap()["to_bytes"], 2 << 20);
    let statuses: Vec<&str> = results(&report)
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"ok") && statuses.contains(&"skipped"),
        "{statuses:?}"
    );

    // A failed result validates too.
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "--sizes",
                "64",
                "--fault",
                "corrupt",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(1));
    let report = read_json(&json);
    assert_eq!(results(&report)[0]["status"], "failed");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn sizes_of_a_mechanism_are_sampled_in_rounds_unless_it_spins_or_runs_out() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("sweep.json");
    // pipe and fifo: three sizes each, all six in rounds. shm-spin busy-waits: its idle
    // peers would spin, so its sizes run one after another. sysv-msg at five
    // sizes needs five System V keys at once, one more than a process has:
    // what cannot be held open runs alone afterwards, and says so.
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "fifo",
                "shm-spin",
                "--sizes",
                "1,4K,16K",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    for r in results(&report) {
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
    assert_eq!(
        schema_errors("docs/schema/run.schema.json", &report),
        Vec::<String>::new()
    );

    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "sysv-msg",
                "--sizes",
                "1,16,64,256,1K",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    let rs = results(&report);
    assert_eq!(rs.len(), 5);
    // Those whose key was free ran in rounds; the rest ran alone, and say why.
    let mut together = 0;
    for r in rs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_consistent(r);
        if r["sweep"].is_null() {
            assert!(
                r["note"].as_str().unwrap_or("").contains("measured alone"),
                "the fallback is not explained: {r}"
            );
        } else {
            together += 1;
        }
    }
    assert!((2..5).contains(&together), "{together} of 5 in rounds");
    assert!(ipcmark_processes().is_empty());
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
}

#[test]
fn idle_states_are_held_off_by_default_when_permitted_and_allowed_on_request() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("lat.json");
    let j = json.to_str().unwrap();
    let writable = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .is_ok();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "pipe", "--sizes", "64", "--json", j];
        a.extend_from_slice(extra);
        let out = sb.run(&args(SHORT, &a), Duration::from_secs(30));
        assert!(out.status.success(), "{}", stderr(&out));
        read_json(&json)
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
    // Nothing else holds a request while this test does (serial), so the
    // limit in force is the kernel's default, and the run says what it costs.
    if report["environment"]["cpu_dma_latency_us"].as_i64() >= Some(2_000_000_000) {
        let kinds: Vec<&str> = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["kind"].as_str().unwrap())
            .collect();
        assert!(kinds.contains(&"idle-states-allowed"), "{kinds:?}");
    }
}

#[test]
fn corrupting_channel_is_caught_in_timed_loop_and_in_content_check() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("c.json");
    // At 1 byte the flipped byte is the sequence number; at 4K it is payload
    // only the content check sees.
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "unix-stream",
                "--sizes",
                "1,4K",
                "--fault",
                "corrupt",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for r in results(&read_json(&json)) {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r["error"].as_str().unwrap().contains("corrupted"), "{r}");
        assert!(
            r.get("latency_ns").is_none(),
            "a corrupt channel produced a figure: {r}"
        );
    }
    assert!(stdout(&out).contains("FAILED"), "table shows the failure");
}

#[test]
fn dead_peer_fails_the_figure_and_the_run_goes_on() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("d.json");
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "unix-stream",
                "--sizes",
                "64",
                "--fault",
                "die",
                "--timeout",
                "2s",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(1));
    let report = read_json(&json);
    let rs = results(&report);
    assert_eq!(rs.len(), 2, "the run went on after the first failure");
    for r in rs {
        assert_eq!(r["status"], "failed", "{r}");
    }
    assert!(stderr(&out).contains("failed"), "{}", stderr(&out));
    assert!(ipcmark_processes().is_empty());
}

/// A server thread that returns leaves no end-of-file on shared memory or
/// message queues; the engine must still report it as ended, not time out.
#[test]
fn dead_thread_peer_is_reported_as_ended_for_every_mechanism() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("t.json");
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "--sizes",
                "64",
                "--peer",
                "thread",
                "--fault",
                "die",
                "--timeout",
                "20s",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(120),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for r in results(&read_json(&json)) {
        if r["benchmark"] == "pipe-self" {
            // No peer to kill: it must simply work after thread-peer figures.
            assert_eq!(r["status"], "ok", "{r}");
            continue;
        }
        let err = r["error"]
            .as_str()
            .unwrap_or_else(|| panic!("not failed: {r}"));
        assert!(
            err.contains("ended unexpectedly") || err.contains("closed the channel"),
            "{}: {err}",
            r["benchmark"]
        );
    }
}

#[test]
fn silent_peer_times_out() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("h.json");
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "pipe",
                "--sizes",
                "64",
                "--fault",
                "hang",
                "--timeout",
                "500ms",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(1));
    let report = read_json(&json);
    let r = &results(&report)[0];
    assert!(
        r["error"].as_str().unwrap().contains("did not answer"),
        "{r}"
    );
    assert!(ipcmark_processes().is_empty());
}

#[test]
fn nothing_is_left_after_runs_that_succeed_or_fail() {
    let _g = serial();
    let sb = Sandbox::new();
    for extra in [&[][..], &["--fault", "die", "--timeout", "2s"][..]] {
        let mut a = args(SHORT, &["run", "--sizes", "64"]);
        a.extend_from_slice(extra);
        let child = sb.cmd(&a).spawn().unwrap();
        let pid = child.id();
        let out = wait_with_deadline(child, Duration::from_secs(120));
        assert!(out.status.code().is_some(), "{}", stderr(&out));
        assert!(
            objects_of(pid).is_empty(),
            "left behind by {extra:?}: {:?}",
            objects_of(pid)
        );
        assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
        assert!(
            ipcmark_processes().is_empty(),
            "processes left: {:?}",
            ipcmark_processes()
        );
    }
}

#[test]
fn sigint_and_sigterm_release_everything_and_keep_partial_results() {
    let _g = serial();
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let sb = Sandbox::new();
        let json = sb.path("i.json");
        // Long samples so the signal lands mid-measurement. signal-sigqueue
        // runs alone (signals are process-wide) and is saved first; the
        // signal then lands in the sweep of the other four.
        let (pid, out) = signal_after_first_save(
            &sb,
            &[
                "run",
                "signal-sigqueue",
                "pipe",
                "sysv-msg",
                "fifo",
                "shm-sysv-sem",
                "--sizes",
                "64",
                "--sample-time",
                "200ms",
                "--json",
                json.to_str().unwrap(),
            ],
            &json,
            Duration::from_secs(10),
            sig,
        );
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
        let report = read_json(&json);
        assert_eq!(report["complete"], false);
        let rs = results(&report);
        assert!(
            rs.iter().any(|r| r["status"] == "ok"),
            "partial results were kept: {rs:?}"
        );
        assert_released(&sb, pid);
    }
}

#[test]
fn a_stop_in_a_later_pass_keeps_the_passes_before_it_whole() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("p.json");
    // signal-sigqueue runs alone, then pipe and fifo sweep together; the
    // signal lands once a second pass has been merged and saved.
    let (pid, out) = signal_once_saved(
        &sb,
        &[
            "run",
            "signal-sigqueue",
            "pipe",
            "fifo",
            "--quick",
            "--passes",
            "3",
            "--sample-time",
            "50ms",
            "--json",
            json.to_str().unwrap(),
        ],
        &json,
        "medians_ns",
        Duration::from_secs(20),
        libc::SIGINT,
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    for r in results(&report) {
        // A pass cut short is dropped: no figure is failed by the stop, and
        // each holds only passes that completed.
        assert_eq!(r["status"], "ok", "{r}");
        let passes = r["passes"]["count"].as_u64().unwrap_or(1);
        assert!((1..=3).contains(&passes), "{r}");
        assert_eq!(
            r["passes"]["medians_ns"].as_array().map_or(1, Vec::len) as u64,
            passes,
            "{r}"
        );
    }
    assert_released(&sb, pid);
}

#[test]
fn kill_9_then_clean_removes_what_was_left() {
    let _g = serial();
    let sb = Sandbox::new();
    // sysv-msg keeps its queue for the whole figure, fifo its directory.
    for mech in ["sysv-msg", "fifo"] {
        let child = sb
            .cmd(&["run", mech, "--sizes", "64", "--sample-time", "500ms"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let present = eventually(Duration::from_secs(10), || {
            !objects_of(pid).iter().all(|o| o.starts_with("child")) || !sb.leftover_tmp().is_empty()
        });
        assert!(present, "{mech}: no object appeared");
        signal(pid, libc::SIGKILL);
        let _ = wait_with_deadline(child, Duration::from_secs(10));
        // The echo server dies with its parent (PR_SET_PDEATHSIG).
        assert!(
            eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
            "orphaned server"
        );
        let out = sb.run(&["clean"], Duration::from_secs(10));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("removed"), "{}", stdout(&out));
        assert!(
            objects_of(pid).is_empty(),
            "{mech}: still there after clean: {:?}",
            objects_of(pid)
        );
        assert!(
            sb.leftover_tmp().is_empty(),
            "{mech}: {:?}",
            sb.leftover_tmp()
        );
    }
}

#[test]
fn bad_input_exits_2_with_one_clear_line_and_writes_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "no-such-thing", "--json", j],
            "unknown benchmark or group 'no-such-thing'",
        ),
        (
            &["run", "--sizes", "12Q", "--json", j],
            "invalid size '12Q'",
        ),
        (
            &["run", "--sizes", "0", "--json", j],
            "size '0' is out of range",
        ),
        (
            &["run", "--sizes", "17M", "--json", j],
            "size '17M' is out of range",
        ),
        (&["run", "--sizes", "1,,2", "--json", j], "empty entry"),
        (
            &["run", "--cpus", "999", "--json", j],
            "CPU 999 does not exist",
        ),
        (&["run", "--cpus", "0,x", "--json", j], "invalid CPU 'x'"),
        (&["run", "--rt", "150", "--json", j], "150"),
        (&["run", "--rt", "0", "--json", j], "0"),
        (
            &["run", "--timeout", "5", "--json", j],
            "invalid duration '5'",
        ),
        (&["run", "--peer", "fiber", "--json", j], "fiber"),
        (
            &["run", "--precision", "0%", "--json", j],
            "precision '0%' is out of range",
        ),
        (
            &["run", "--precision", "2", "--json", j],
            "precision '2' is out of range",
        ),
        (
            &["run", "--precision", "fine", "--json", j],
            "invalid precision 'fine'",
        ),
        (
            &["run", "--max-time", "soon", "--json", j],
            "invalid duration 'soon'",
        ),
        (&["run", "--passes", "0", "--json", j], "0 is not in 1..=20"),
        (
            &["run", "--passes", "21", "--json", j],
            "21 is not in 1..=20",
        ),
        (&["run", "--passes", "x", "--json", j], "'x' for '--passes"),
        (
            &["run", "--cpu-latency", "low", "--json", j],
            "invalid CPU latency 'low'",
        ),
        (
            &["run", "--cpu-latency", "2000000", "--json", j],
            "invalid CPU latency '2000000'",
        ),
        (
            &["run", "--json", "/no/such/dir/out.json"],
            "does not exist",
        ),
        (&["run", "--bogus"], "--bogus"),
        (&["frobnicate"], "frobnicate"),
    ];
    for (argv, needle) in cases {
        refused(&sb, argv, &[needle]);
        assert!(!json.exists(), "{argv:?} wrote the JSON file");
    }
}

#[test]
fn list_names_every_mechanism_with_limits_and_survives_a_closed_pipe() {
    let ids = mechanism_ids();
    for id in ["pipe", "pipe-self", "unix-stream"] {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
    let sb = Sandbox::new();
    let out = sb.run(&["list"], Duration::from_secs(10));
    assert!(
        stdout(&out).contains("fs.pipe-max-size"),
        "limits shown: {}",
        stdout(&out)
    );
    // `ipcmark list | head -1`: stdout closed early must not be an error.
    let mut child = sb.cmd(&["list"]).spawn().unwrap();
    drop(child.stdout.take());
    let out = wait_with_deadline(child, Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn same_cpu_runs_blocking_mechanisms_and_skips_spinning_with_a_reason() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("s.json");
    let ids = mechanism_ids();
    let mut a = args(
        SHORT,
        &[
            "run",
            "pipe",
            "--same-cpu",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let spin = ids.iter().any(|i| i == "shm-spin");
    if spin {
        a.insert(2, "shm-spin");
    }
    let out = sb.run(&a, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(
        report["settings"]["client_cpu"],
        report["settings"]["server_cpu"]
    );
    for r in results(&report) {
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

#[test]
fn readme_documents_every_mechanism() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for id in mechanism_ids() {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
}

/// A minimal run report with one ok result per (benchmark, samples) pair.
fn synthetic_report(results: &[(&str, Vec<f64>)], extra: &[Value]) -> Value {
    let mut rs: Vec<Value> = results
        .iter()
        .map(|(name, samples)| {
            serde_json::json!({
                "benchmark": name, "mode": "pingpong", "size_bytes": 64, "status": "ok",
                "cpus": [0, 1], "samples_ns": samples,
            })
        })
        .collect();
    rs.extend_from_slice(extra);
    serde_json::json!({
        "schema": "ipcmark.run/1",
        "started_at": "2026-11-21T10:00:00Z",
        "environment": { "hostname": "test", "kernel": "6.0" },
        "results": rs,
    })
}

/// The comparison of benchmark `name` in a comparison JSON.
fn compared(report: &Value, name: &str) -> Value {
    report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["benchmark"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} not compared"))
}

/// Writes two run reports, compares them with `--json`; the command's
/// output (it must succeed) and the comparison JSON.
fn compare_reports(sb: &Sandbox, a: &Value, b: &Value) -> (std::process::Output, Value) {
    let (pa, pb, out) = (sb.path("a.json"), sb.path("b.json"), sb.path("cmp.json"));
    std::fs::write(&pa, a.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    let run = sb.run(
        &[
            "compare",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    (run, read_json(&out))
}

#[test]
fn compare_reports_a_known_ten_percent_difference_and_no_difference_for_equal_runs() {
    let sb = Sandbox::new();
    // Samples with noise of a few percent; B's "pipe" is A's shifted by 10%.
    let base: Vec<f64> = (0..11)
        .map(|i| 5000.0 + ((i * 37) % 11) as f64 * 25.0)
        .collect();
    let shifted: Vec<f64> = base.iter().map(|x| x * 1.10).collect();
    let reordered: Vec<f64> = base.iter().rev().copied().collect();
    let skipped = serde_json::json!({"benchmark": "posix-mq", "mode": "pingpong", "size_bytes": 65536,
        "status": "skipped", "reason": "limit", "cpus": []});
    let a = synthetic_report(
        &[
            ("pipe", base.clone()),
            ("tcp", base.clone()),
            ("udp", base.clone()),
        ],
        std::slice::from_ref(&skipped),
    );
    let b = synthetic_report(
        &[("pipe", shifted), ("tcp", reordered), ("fifo", base)],
        &[skipped],
    );
    let (run, report) = compare_reports(&sb, &a, &b);
    assert_eq!(report["schema"], "ipcmark.compare/1");
    let by_name = |n: &str| compared(&report, n);
    let pipe = by_name("pipe");
    assert_eq!(pipe["significant"], true, "{pipe}");
    assert_eq!(pipe["verdict"], "slower");
    assert!(
        (pipe["diff_percent"].as_f64().unwrap() - 10.0).abs() < 0.5,
        "{pipe}"
    );
    assert_eq!(pipe["interval_excludes_one"], true, "{pipe}");
    let tcp = by_name("tcp");
    assert_eq!(tcp["significant"], false, "{tcp}");
    assert_eq!(tcp["verdict"], "no significant difference");
    // Nothing dropped silently: one-sided and unmeasured results are listed.
    let unmatched: Vec<String> = report["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            format!(
                "{} {}",
                u["benchmark"].as_str().unwrap(),
                u["why"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        unmatched.iter().any(|u| u.starts_with("udp only in A")),
        "{unmatched:?}"
    );
    assert!(
        unmatched.iter().any(|u| u.starts_with("fifo only in B")),
        "{unmatched:?}"
    );
    assert!(
        unmatched
            .iter()
            .any(|u| u.starts_with("posix-mq not measured")),
        "{unmatched:?}"
    );
    let text = stdout(&run);
    assert!(text.contains("not compared: udp"), "{text}");
    assert!(
        text.contains("1 of 2 results differ significantly"),
        "{text}"
    );
}

#[test]
fn compare_separates_a_shift_of_every_result_from_one_beyond_it() {
    let sb = Sandbox::new();
    // Six results; B is A 8% slower throughout (the machine's speed), and
    // "tcp" 30% slower: only tcp differs beyond what all moved together.
    let names = ["pipe", "fifo", "tcp", "udp", "posix-mq", "eventfd"];
    let sample = |i: usize, k: usize| 3000.0 + 200.0 * k as f64 + ((i * 37 + k) % 11) as f64 * 15.0;
    let a: Vec<(&str, Vec<f64>)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (*n, (0..11).map(|i| sample(i, k)).collect()))
        .collect();
    let b: Vec<(&str, Vec<f64>)> = a
        .iter()
        .map(|(n, v)| {
            let f = if *n == "tcp" { 1.30 } else { 1.08 };
            (*n, v.iter().rev().map(|x| x * f).collect())
        })
        .collect();
    let (run, report) =
        compare_reports(&sb, &synthetic_report(&a, &[]), &synthetic_report(&b, &[]));
    let shift = &report["common_shift"];
    assert!(
        (shift["factor"].as_f64().unwrap() - 1.08).abs() < 0.01,
        "{shift}"
    );
    assert_eq!(shift["significant"], true, "{shift}");
    assert_eq!(shift["results"], 6);
    for c in report["comparisons"].as_array().unwrap() {
        assert_eq!(c["significant"], true, "every result moved: {c}");
        let beyond = &c["beyond_shift"];
        if c["benchmark"] == "tcp" {
            assert_eq!(beyond["verdict"], "slower", "{c}");
        } else {
            assert_eq!(beyond["significant"], false, "{c}");
        }
    }
    let text = stdout(&run);
    assert!(
        text.contains("6 of 6 results differ significantly")
            && text.contains("with no change at all about 0 would, by chance"),
        "{text}"
    );
    assert!(text.contains("1 of 6 differ beyond it"), "{text}");
}

#[test]
fn compare_tests_pass_medians_when_both_runs_have_passes() {
    let sb = Sandbox::new();
    // Each run's samples sit tightly around its own level (±0.5%), but its
    // passes spread ±8%: B's level 4% above A's is within that spread, while
    // a test on the samples alone calls it a difference. "tcp" is 40% slower
    // in every pass: a real change.
    let tight = |level: f64| -> Vec<f64> {
        (0..11)
            .map(|i| level * (1.0 + ((i * 7) % 11) as f64 * 0.001))
            .collect()
    };
    let with_passes = |name: &str, level: f64, passes: &[f64]| {
        serde_json::json!({
            "benchmark": name, "mode": "pingpong", "size_bytes": 64, "status": "ok",
            "cpus": [0, 1], "samples_ns": tight(level),
            "passes": { "count": passes.len(), "medians_ns": passes },
        })
    };
    let a = synthetic_report(
        &[],
        &[
            with_passes("pipe", 1000.0, &[1000.0, 1080.0, 940.0, 1030.0, 990.0]),
            with_passes("tcp", 5000.0, &[5000.0, 5400.0, 4700.0, 5150.0, 4950.0]),
        ],
    );
    let b = synthetic_report(
        &[],
        &[
            with_passes("pipe", 1040.0, &[1040.0, 960.0, 1100.0, 1000.0, 1020.0]),
            with_passes("tcp", 7000.0, &[7000.0, 7560.0, 6580.0, 7210.0, 6930.0]),
        ],
    );
    let (run, report) = compare_reports(&sb, &a, &b);
    let by_name = |n: &str| compared(&report, n);
    let pipe = by_name("pipe");
    assert_eq!(pipe["test"], "welch-passes", "{pipe}");
    assert!(pipe["mann_whitney"]["p"].as_f64().unwrap() < 0.05, "{pipe}");
    assert_eq!(pipe["significant"], false, "{pipe}");
    assert_eq!(pipe["verdict"], "no significant difference");
    assert!(pipe["welch"]["p"].as_f64().unwrap() > 0.3, "{pipe}");
    assert_eq!(pipe["p"], pipe["welch"]["p"]);
    let tcp = by_name("tcp");
    assert_eq!(tcp["significant"], true, "{tcp}");
    assert_eq!(tcp["verdict"], "slower");
    assert_eq!(tcp["interval_excludes_one"], true, "{tcp}");
    let text = stdout(&run);
    assert!(
        text.contains("1 of 2 results differ significantly (Welch's t on the pass medians"),
        "{text}"
    );
    assert!(!text.contains("without passes"), "{text}");

    // One side without passes: the samples decide, and the output says what
    // that cannot see.
    let single = synthetic_report(&[("pipe", tight(1040.0)), ("tcp", tight(7000.0))], &[]);
    let (run, report) = compare_reports(&sb, &a, &single);
    for c in report["comparisons"].as_array().unwrap() {
        assert_eq!(c["test"], "mann-whitney-samples", "{c}");
        assert!(c["welch"].is_null(), "{c}");
    }
    assert!(
        stdout(&run).contains("without passes on both sides"),
        "{}",
        stdout(&run)
    );
}

#[test]
fn compare_rejects_bad_input_with_exit_2() {
    let sb = Sandbox::new();
    let good = sb.path("good.json");
    std::fs::write(
        &good,
        synthetic_report(&[("pipe", vec![1.0, 2.0])], &[]).to_string(),
    )
    .unwrap();
    let wrong = sb.path("wrong.json");
    std::fs::write(&wrong, r#"{"schema": "something/9", "started_at": "x", "environment": {"hostname": "h", "kernel": "k"}, "results": []}"#).unwrap();
    let junk = sb.path("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    let g = good.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["compare", g, "/no/such/file.json"],
            "cannot read /no/such/file.json",
        ),
        (
            &["compare", g, wrong.to_str().unwrap()],
            "schema 'something/9'",
        ),
        (
            &["compare", junk.to_str().unwrap(), g],
            "is not an ipcmark run report",
        ),
        (&["compare", g, g, "--alpha", "0.7"], "--alpha 0.7"),
        (&["compare", g], "B.json"),
    ];
    for (argv, needle) in cases {
        let out = sb.run(argv, Duration::from_secs(10));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{argv:?}: {err}");
        assert!(err.contains(needle), "{argv:?}: {err:?} lacks {needle:?}");
    }
}

#[test]
fn a_preset_runs_its_columns_warm_and_cold_and_prints_the_studys_table() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("p.json");
    // The study's columns at two of its sizes, shortened.
    let out = sb.run(
        &args(
            SHORT,
            &[
                "run",
                "--preset",
                "qnx-table4",
                "--sizes",
                "1,4K",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for label in [
        "pipe",
        "FIFO",
        "message",
        "message (socket)",
        "no cache",
        "proxy",
        "shm + sem + memcpy",
    ] {
        assert!(text.contains(label), "column {label} missing:\n{text}");
    }
    assert!(text.contains("Table 4"), "{text}");
    let report = read_json(&json);
    let vm: Vec<&Value> = results(&report)
        .iter()
        .filter(|r| r["benchmark"] == "vm-copy")
        .collect();
    assert_eq!(vm.len(), 4, "vm-copy warm and cold at two sizes: {vm:?}");
    let cold: Vec<&&Value> = vm
        .iter()
        .filter(|r| r.get("cold_region_bytes").is_some())
        .collect();
    assert_eq!(cold.len(), 2);
    assert!(cold[0]["cold_region_bytes"].as_u64().unwrap() >= 8 << 20);
    for r in &vm {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string("docs/schema/run.schema.json").unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let listed = sb.run(&["list", "presets"], Duration::from_secs(10));
    assert!(
        stdout(&listed).contains("qnx-table4"),
        "{}",
        stdout(&listed)
    );
    for (argv, needle) in [
        (&["run", "--preset", "nope"][..], "unknown preset 'nope'"),
        (
            &["run", "--preset", "qnx-table4", "pipe"][..],
            "chooses its own mechanisms",
        ),
    ] {
        let bad = sb.run(argv, Duration::from_secs(10));
        assert_eq!(bad.status.code(), Some(2), "{argv:?}");
        assert!(stderr(&bad).contains(needle), "{}", stderr(&bad));
    }
}
